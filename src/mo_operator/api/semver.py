"""Semantic versions: image tags, ``semanticVersion`` and ``operatorVersion``
fields, parsed tolerantly like upstream's ``semver.ParseTolerant``; never raises.

Here in the API layer because the API reads versions to warn (a set's version
that is not semantic is admitted with a warning, ``validation/versions.py``)
and to validate (an operatorVersion may not go back); the MatrixOne layer
above builds its features-by-version on the same parser
(:mod:`mo_operator.matrixone.version`).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import Any

__all__ = ["SemVer", "image_tag", "parse_strict", "parse_tolerant"]

_NUMERIC = re.compile(r"0|[1-9][0-9]*")
_IDENTIFIER = re.compile(r"[0-9A-Za-z-]+")
_DIGITS = re.compile(r"[0-9]+")
_UINT64_MAX = 2**64 - 1
_UINT64_DIGITS = len(str(_UINT64_MAX))


def _uint64(digits: str) -> int | None:
    """A numeric part as Go's ``strconv.ParseUint(s, 10, 64)`` reads it, or None when it
    does not fit (Go's semver then fails to parse). The length is checked first: Python
    refuses to convert a string of thousands of digits at all."""
    if len(digits) > _UINT64_DIGITS:
        return None
    value = int(digits)
    return value if value <= _UINT64_MAX else None


@functools.total_ordering
@dataclass(frozen=True, eq=False)
class SemVer:
    """A semantic version (semver.org 2.0.0).

    Equality, hashing and ordering follow semver precedence, which ignores build
    metadata (§10): ``1.0.0+a == 1.0.0+b``. ``str()`` keeps the build metadata.
    """

    major: int
    minor: int
    patch: int
    prerelease: tuple[int | str, ...] = ()
    build: tuple[str, ...] = field(default=())

    def _key(self) -> tuple[Any, ...]:
        # A release sorts after all of its pre-releases; numeric identifiers sort before
        # alphanumeric ones; a shorter identifier list sorts first when it is a prefix.
        pre = tuple((0, i, "") if isinstance(i, int) else (1, 0, i) for i in self.prerelease)
        return (self.major, self.minor, self.patch, 0 if self.prerelease else 1, pre)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, SemVer):
            return NotImplemented
        return self._key() == other._key()

    def __lt__(self, other: SemVer) -> bool:
        if not isinstance(other, SemVer):
            return NotImplemented
        return self._key() < other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __str__(self) -> str:
        s = f"{self.major}.{self.minor}.{self.patch}"
        if self.prerelease:
            s += "-" + ".".join(str(i) for i in self.prerelease)
        if self.build:
            s += "+" + ".".join(self.build)
        return s


def _without_v(text: str) -> str:
    return text[1:] if text[:1] in ("v", "V") else text


def parse_strict(text: str) -> SemVer | None:
    """Parse an exact semver string (an optional leading ``v`` allowed), or None."""
    return _parse_core(_without_v(text))


def _parse_core(s: str) -> SemVer | None:
    core, plus, build_text = s.partition("+")
    core, dash, pre_text = core.partition("-")
    parts = core.split(".")
    if len(parts) != 3 or not all(_NUMERIC.fullmatch(p) for p in parts):
        return None
    numbers = [_uint64(p) for p in parts]
    if None in numbers:
        return None
    prerelease: list[int | str] = []
    if dash:
        for ident in pre_text.split("."):
            if not _IDENTIFIER.fullmatch(ident):
                return None
            if _DIGITS.fullmatch(ident):
                number = _uint64(ident)
                if not _NUMERIC.fullmatch(ident) or number is None:
                    return None  # no leading zeros, and it must fit in a uint64
                prerelease.append(number)
            else:
                prerelease.append(ident)
    build: list[str] = []
    if plus:
        for ident in build_text.split("."):
            if not _IDENTIFIER.fullmatch(ident):
                return None
            build.append(ident)
    major, minor, patch = (n for n in numbers if n is not None)
    return SemVer(major, minor, patch, tuple(prerelease), tuple(build))


def parse_tolerant(text: str) -> SemVer | None:
    """Parse a version or image tag tolerantly, as upstream's ``semver.ParseTolerant`` does.

    Trims spaces and a leading ``v``, strips leading zeros from each of the three
    dot-separated parts, and fills in a missing minor or patch (``"1.2"`` → ``1.2.0``).
    Returns None for anything that is still not a version; never raises.
    """
    s = text.strip()
    parts = (s[1:] if s.startswith("v") else s).split(".", 2)  # ParseTolerant: lowercase v only
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
    return _parse_core(".".join(parts))


def image_tag(image: str) -> str:
    """The tag of an image reference (``repo:tag`` or ``repo:tag@digest``), or ``""``.

    A ``:`` before the last ``/`` is a registry port, not a tag; upstream takes the text
    after the last ``:`` regardless, which reads ``localhost:5000/mo`` as tag ``5000/mo``.
    """
    name = image.split("@", 1)[0]
    slash = name.rfind("/")
    colon = name.rfind(":")
    return name[colon + 1 :] if colon > slash else ""
