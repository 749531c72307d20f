"""The MatrixOne version of each pod set of an object, and the warning for one that is
not a semantic version.

A version that is not semantic (a nightly or custom tag, ``latest``, a digest) is
admitted, as upstream's MatrixOneCluster webhook admits it: the controllers then
treat it as upstream does an unknown version (``PodSet.GetSemVer`` not ok), with
every version-gated feature off. The user is told so, by field, and how to choose
(``semanticVersion``). Upstream's reading of the version is kept: ``semanticVersion``
when given (even an unreadable one), else the image's tag; a cluster's component
without an image of its own runs the cluster's ``version`` and inherits its
``semanticVersion``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Final

from ..semver import SemVer, image_tag, parse_tolerant
from .errors import child, index

__all__ = [
    "UNKNOWN_VERSION_BEHAVIOUR",
    "VersionSource",
    "log_service_version",
    "pod_set_specs",
    "version_sources",
    "version_warnings",
]

UNKNOWN_VERSION_BEHAVIOUR: Final = (
    "version-gated behaviour is that of MatrixOne < 2.0 (HAKeeper service-addresses, legacy log address keys)"
)
"""What an unknown version means, in the warning's words (see docs/design.md)."""

Obj = dict[str, Any]

_MAX_QUOTED: Final = 40
"""Characters of the user's version quoted back: the warning must stay one short header."""


@dataclass(frozen=True)
class VersionSource:
    """Where one pod set's version was read: the field, its text, and the
    ``semanticVersion`` field that would override it."""

    field: str
    text: str
    override: str

    @property
    def semantic(self) -> bool:
        return parse_tolerant(self.text) is not None

    def warning(self) -> str:
        quoted = _quote(self.text)
        if self.field.endswith(".image"):
            what = f"{quoted} has no semantic version tag"
        else:
            what = f"{quoted} is not a semantic version"
        return f"{self.field}: {what}, so {UNKNOWN_VERSION_BEHAVIOUR}; set {self.override} to choose it"


def _quote(text: str) -> str:
    """The user's text in single quotes, clipped, with ``?`` for what a ``Warning``
    header cannot carry bare: control characters, and ``"`` and ``\\``, which must be
    escaped there (a server that forgets to, as the embedded one did, makes kubectl
    drop the warning)."""
    body = "".join(c if c.isprintable() and c not in '"\\' else "?" for c in text)
    if len(body) > _MAX_QUOTED:
        body = body[: _MAX_QUOTED - 3] + "..."
    return f"'{body}'"


def _own(spec: Obj, path: str) -> VersionSource | None:
    """A spec's own version: its ``semanticVersion``, else its image's tag."""
    override = child(path, "semanticVersion")
    semantic = spec.get("semanticVersion")
    if isinstance(semantic, str):
        return VersionSource(override, semantic, override)
    image = spec.get("image")
    if isinstance(image, str) and image:
        tag = image_tag(image)
        text = tag if parse_tolerant(tag) is not None else image
        return VersionSource(child(path, "image"), text, override)
    return None


def pod_set_specs(kind: str, obj: Obj) -> Iterator[tuple[str, Obj]]:
    """Each MatrixOne pod set spec of an object, with its path (the WebUI runs no MatrixOne)."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    if kind in ("LogSet", "DNSet", "TNSet", "CNSet", "ProxySet"):
        yield "spec", spec
    elif kind == "CNPool":
        yield "spec.template", spec["template"]
    elif kind == "MatrixOneCluster":
        yield "spec.logService", spec["logService"]
        for name in ("dn", "tn", "tp", "ap"):
            if name in spec:
                yield f"spec.{name}", spec[name]
        for i, group in enumerate(spec.get("cnGroups") or []):
            yield index("spec.cnGroups", i), group
        if "proxy" in spec:
            yield "spec.proxy", spec["proxy"]


def _cluster_component(component: Obj, path: str, cluster: Obj) -> VersionSource:
    """As the cluster's child runs it: the component's ``semanticVersion``, else the
    cluster's (children inherit it), else the component's image tag, else ``version``."""
    if "semanticVersion" not in component and isinstance(cluster.get("semanticVersion"), str):
        text = cluster["semanticVersion"]
        return VersionSource("spec.semanticVersion", text, "spec.semanticVersion")
    own = _own(component, path)
    if own is not None:
        return own
    return VersionSource("spec.version", str(cluster["version"]), "spec.semanticVersion")


def version_sources(kind: str, obj: Obj) -> list[VersionSource]:
    """Where each pod set of a schema-valid object gets its version, one entry per field read."""
    spec = obj.get("spec") or {}
    sources: dict[str, VersionSource] = {}
    for path, component in pod_set_specs(kind, obj):
        source = (
            _cluster_component(component, path, spec) if kind == "MatrixOneCluster" else _own(component, path)
        )
        if source is not None:
            sources.setdefault(source.field, source)
    return list(sources.values())


def log_service_version(kind: str, obj: Obj) -> SemVer | None:
    """The MatrixOne version a LogSet, or a cluster's log service, runs (None: unknown)."""
    spec = obj.get("spec") or {}
    if kind == "MatrixOneCluster":
        source: VersionSource | None = _cluster_component(spec["logService"], "spec.logService", spec)
    else:
        source = _own(spec, "spec")
    return parse_tolerant(source.text) if source is not None else None


def version_warnings(kind: str, obj: Obj) -> list[str]:
    """One warning per field whose version is not semantic."""
    return [s.warning() for s in version_sources(kind, obj) if not s.semantic]
