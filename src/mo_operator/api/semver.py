"""Semantic versions as the API reads them: image tags, ``semanticVersion`` and
``operatorVersion`` fields, parsed tolerantly like upstream's ``semver.ParseTolerant``.

The API layer reads versions to warn (a set's version that is not semantic is
admitted with a warning, see ``validation/versions.py``) and to validate (an
operatorVersion may not go back), and cannot import the MatrixOne layer above it,
so this is the API's own small parser, accepting exactly what
:func:`mo_operator.matrixone.version.parse_version` accepts; it never raises.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Version", "image_tag", "parse_tolerant"]

_NUMERIC = re.compile(r"0|[1-9][0-9]*")
_IDENT = re.compile(r"[0-9A-Za-z-]+")


@dataclass(frozen=True, order=True)
class Version:
    """A version, ordered by semver precedence (build metadata is not kept)."""

    major: int
    minor: int
    patch: int
    # A release sorts after its pre-releases; numeric identifiers before alphanumeric ones.
    pre: tuple[tuple[int, int, str], ...] = ((1, 0, ""),)


def _strict(text: str) -> Version | None:
    core, _, build = text.partition("+")
    core, dash, pre_text = core.partition("-")
    parts = core.split(".")
    if len(parts) != 3 or not all(_NUMERIC.fullmatch(p) for p in parts):
        return None
    if build and not all(_IDENT.fullmatch(i) for i in build.split(".")):
        return None
    pre: list[tuple[int, int, str]] = []
    if dash:
        for ident in pre_text.split("."):
            if not _IDENT.fullmatch(ident):
                return None
            if ident.isdigit():
                if not _NUMERIC.fullmatch(ident):
                    return None
                pre.append((0, int(ident), ""))
            else:
                pre.append((1, 0, ident))
        # A pre-release sorts before the release: prefix with a marker lower than (1, 0, "").
        return Version(int(parts[0]), int(parts[1]), int(parts[2]), ((0, -1, ""), *pre))
    return Version(int(parts[0]), int(parts[1]), int(parts[2]))


def parse_tolerant(text: str) -> Version | None:
    """Parse like ``semver.ParseTolerant``: trim spaces and a leading ``v``, strip leading
    zeros, fill a missing minor or patch (``1.2`` is ``1.2.0``). None if not a version."""
    s = text.strip()
    s = s[1:] if s.startswith("v") else s
    parts = s.split(".", 2)
    for i, p in enumerate(parts):
        if len(p) > 1:
            p = p.lstrip("0")
            if not p or not p[0].isdigit():
                p = "0" + p
            parts[i] = p
    if len(parts) < 3:
        if "+" in parts[-1] or "-" in parts[-1]:
            return None
        parts += ["0"] * (3 - len(parts))
    return _strict(".".join(parts))


def image_tag(image: str) -> str:
    """The tag of an image reference, ``""`` when it has none.

    A ``:`` before the last ``/`` is a registry port, and a digest is not a tag.
    """
    name = image.split("@", 1)[0]
    colon = name.rfind(":")
    return name[colon + 1 :] if colon > name.rfind("/") else ""
