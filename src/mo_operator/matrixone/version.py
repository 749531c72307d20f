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
from collections.abc import Mapping
from typing import Any, Final

from mo_operator.api.common import PodSet
from mo_operator.api.semver import SemVer as SemVer
from mo_operator.api.semver import image_tag as image_tag
from mo_operator.api.semver import parse_strict as parse_strict
from mo_operator.api.semver import parse_tolerant
from mo_operator.matrixone import labels

parse_version = parse_tolerant
"""The tolerant parser (``semver.ParseTolerant``), by the name this layer reads it."""

DEFAULT_IMAGE_REPOSITORY: Final = "matrixorigin/matrixone"
"""Upstream's images (its e2e default and examples); upstream itself has no default."""


def version_of(spec: Mapping[str, Any]) -> SemVer | None:
    """The MatrixOne version a set's spec runs: ``semanticVersion`` if given, else its image tag.

    As upstream, a given but unreadable ``semanticVersion`` means "unknown" (None), not
    "fall back to the tag": the user said the tag is not to be trusted.
    """
    return version_from(spec.get("semanticVersion"), spec.get("image"))


def version_from(semantic_version: object, image: object) -> SemVer | None:
    """``version_of`` a spec's ``semanticVersion`` and ``image``, as a typed spec holds them."""
    if isinstance(semantic_version, str):
        return parse_version(semantic_version)
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


def operator_version(spec: PodSet) -> SemVer:
    """A set's ``operatorVersion`` (upstream: the operator behaviour it was created under).

    Missing or unreadable means 1.2.0, as upstream. We keep it only to write the
    ``matrixorigin.io/operator-version`` pod annotation: our ConfigMap scheme is the
    same (immutable, hashed) for every operator version.
    """
    value = spec.operator_version
    parsed = parse_version(value) if value is not None else None
    return parsed if parsed is not None else FIRST_OPERATOR_VERSION


def version_annotations(spec: PodSet) -> dict[str, str]:
    """The version annotations of a set's pods: semantic version (if known) and operator version (if > 1.2.0)."""
    annotations: dict[str, str] = {}
    version = version_from(spec.semantic_version, spec.image)
    if version is not None:
        annotations[labels.SEMANTIC_VERSION] = str(version)
    ov = operator_version(spec)
    if ov > FIRST_OPERATOR_VERSION:
        annotations[labels.OPERATOR_VERSION] = str(ov)
    return annotations
