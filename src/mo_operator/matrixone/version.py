"""MatrixOne versions: parsing image tags, comparing versions, features by version, images.

The operator renders different config for different MatrixOne versions (e.g. the V2
discovery keys from 2.0 on), records the version on pods, and must recognise a
downgrade. Image tags are free-form ("v1.2.0", "1.1", "nightly-abc123", "latest"), so
parsing is tolerant like upstream's ``semver.ParseTolerant`` and never raises: a tag it
cannot read yields None, and ``spec.semanticVersion`` lets the user say what it is.
An unknown version has no version-gated feature, as upstream (docs/design.md, "MatrixOne
versions that are not semantic"); the webhook warns about it.
"""

from __future__ import annotations

import enum
import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from mo_operator.matrixone import labels

DEFAULT_IMAGE_REPOSITORY: Final = "matrixorigin/matrixone"
"""Upstream's images (its e2e default and examples); upstream itself has no default."""

_NUMERIC = re.compile(r"0|[1-9][0-9]*")
_IDENTIFIER = re.compile(r"[0-9A-Za-z-]+")
_DIGITS = re.compile(r"[0-9]+")


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
    prerelease: list[int | str] = []
    if dash:
        for ident in pre_text.split("."):
            if not _IDENTIFIER.fullmatch(ident):
                return None
            if _DIGITS.fullmatch(ident):
                if not _NUMERIC.fullmatch(ident):
                    return None  # numeric identifiers must not have leading zeros
                prerelease.append(int(ident))
            else:
                prerelease.append(ident)
    build: list[str] = []
    if plus:
        for ident in build_text.split("."):
            if not _IDENTIFIER.fullmatch(ident):
                return None
            build.append(ident)
    return SemVer(int(parts[0]), int(parts[1]), int(parts[2]), tuple(prerelease), tuple(build))


def parse_version(text: str) -> SemVer | None:
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


def version_of(spec: Mapping[str, Any]) -> SemVer | None:
    """The MatrixOne version a set's spec runs: ``semanticVersion`` if given, else its image tag.

    As upstream, a given but unreadable ``semanticVersion`` means "unknown" (None), not
    "fall back to the tag": the user said the tag is not to be trusted.
    """
    override = spec.get("semanticVersion")
    if isinstance(override, str):
        return parse_version(override)
    image = spec.get("image")
    return parse_version(image_tag(image)) if isinstance(image, str) else None


def is_downgrade(current: SemVer | None, desired: SemVer | None) -> bool:
    """Whether moving from ``current`` to ``desired`` goes back in version.

    Unknown versions (None) are never called a downgrade: we cannot tell, and blocking
    a tag like ``latest`` would block legitimate use.
    """
    return current is not None and desired is not None and desired < current


def default_image(version: str, image_repository: str | None = None) -> str:
    """``<imageRepository>:<version>``, the image of every component that names none."""
    return f"{image_repository or DEFAULT_IMAGE_REPOSITORY}:{version}"


def component_image(component_spec: Mapping[str, Any], cluster_spec: Mapping[str, Any]) -> str:
    """A MatrixOneCluster child's image: its own ``image``, else the cluster's default image."""
    image = component_spec.get("image")
    if isinstance(image, str) and image:
        return image
    return default_image(str(cluster_spec.get("version", "")), cluster_spec.get("imageRepository"))


class MOFeature(enum.Enum):
    """MatrixOne behaviours the operator adapts to (upstream ``api/core/v1alpha1/semver.go``)."""

    PIPELINE_INFO = "PipelineInfo"
    SESSION_SOURCE = "SessionSource"
    LOCK_MIGRATION = "LockMigration"
    DISCOVERY_FIXED = "DiscoveryFixed"
    """From 2.0: TN/CN use ``discovery-address``; log stores use the V2 port keys."""
    SHARDING_MIGRATION = "ShardingMigration"


def _v(text: str) -> SemVer:
    v = parse_strict(text)
    if v is None:
        raise ValueError(f"not a version: {text!r}")
    return v


# Per major branch: the first version of that branch with the feature. A branch not
# listed lacks the feature (upstream verifies each feature on each new major branch).
_PER_MAJOR: Final[Mapping[MOFeature, tuple[SemVer, ...]]] = {
    MOFeature.PIPELINE_INFO: (_v("1.1.2"), _v("1.2.0"), _v("2.0.0")),
    MOFeature.SESSION_SOURCE: (_v("1.1.2"), _v("1.2.0"), _v("2.0.0")),
    MOFeature.LOCK_MIGRATION: (_v("1.2.0"), _v("2.0.0")),
    MOFeature.SHARDING_MIGRATION: (_v("2.0.0"),),
}
# Features that, once introduced, stay in every later major version.
_FROM_ON: Final[Mapping[MOFeature, SemVer]] = {MOFeature.DISCOVERY_FIXED: _v("2.0.0")}


def _reaches(base: SemVer, current: SemVer, *, across_majors: bool) -> bool:
    # Upstream's versionPrecedes: pre-release and build are ignored, and a base with
    # patch 0 covers every later minor of its major, a base with a patch only its minor.
    if current.major != base.major:
        return across_majors and current.major > base.major
    if base.patch == 0 and current.minor >= base.minor:
        return True
    return current.minor == base.minor and current.patch >= base.patch


def has_feature(version: SemVer | None, feature: MOFeature) -> bool:
    """Whether MatrixOne ``version`` has ``feature``; an unknown version has none."""
    if version is None:
        return False
    since = _FROM_ON.get(feature)
    if since is not None and _reaches(since, version, across_majors=True):
        return True
    return any(_reaches(base, version, across_majors=False) for base in _PER_MAJOR.get(feature, ()))


FIRST_OPERATOR_VERSION: Final = _v("1.2.0")
LATEST_OPERATOR_VERSION: Final = _v("1.3.0")


def operator_version(spec: Mapping[str, Any]) -> SemVer:
    """A set's ``operatorVersion`` (upstream: the operator behaviour it was created under).

    Missing or unreadable means 1.2.0, as upstream. We keep it only to write the
    ``matrixorigin.io/operator-version`` pod annotation: our ConfigMap scheme is the
    same (immutable, hashed) for every operator version.
    """
    value = spec.get("operatorVersion")
    parsed = parse_version(value) if isinstance(value, str) else None
    return parsed if parsed is not None else FIRST_OPERATOR_VERSION


def version_annotations(spec: Mapping[str, Any]) -> dict[str, str]:
    """The version annotations of a set's pods: semantic version (if known) and operator version (if > 1.2.0)."""
    annotations: dict[str, str] = {}
    version = version_of(spec)
    if version is not None:
        annotations[labels.SEMANTIC_VERSION] = str(version)
    ov = operator_version(spec)
    if ov > FIRST_OPERATOR_VERSION:
        annotations[labels.OPERATOR_VERSION] = str(ov)
    return annotations
