"""What the client and the informers need to know about an API resource, and
its URLs.

One small frozen value (group, version, kind, plural, namespaced) instead of
lightkube's model classes: the runtime handles objects as plain dicts, so it
only needs the addressing facts. Built-in kinds come from lightkube's
resource classes (so plurals are never guessed); our CRDs are described
directly and registered so that ``resource_for(apiVersion, kind)`` finds
them, e.g. when applying an object given only as a dict.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from lightkube.core import resource as lk_resource
from lightkube.core.exceptions import LoadResourceError
from lightkube.core.resource_registry import resource_registry


@dataclass(frozen=True, slots=True)
class Resource:
    group: str
    version: str
    kind: str
    plural: str
    namespaced: bool

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def group_resource(self) -> str:
        """``plural.group`` (``pods`` for the core group), the name in RBAC
        rules, error messages and our metrics labels."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    def __str__(self) -> str:
        return self.group_resource

    # ------------------------------------------------------------------ URLs
    def path(
        self, namespace: str | None = None, name: str | None = None, subresource: str | None = None
    ) -> str:
        """The URL path of the collection (``name`` None) or of one object.

        For a namespaced resource, ``namespace`` None on a collection means all
        namespaces; a single object needs its namespace.
        """
        base = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        parts = [base]
        if self.namespaced:
            if namespace:
                parts.append(f"namespaces/{quote(namespace, safe='')}")
            elif name is not None:
                raise ValueError(f"{self.kind} {name!r} is namespaced: a namespace is required")
        elif namespace:
            raise ValueError(f"{self.kind} is cluster-scoped: no namespace may be given")
        parts.append(self.plural)
        if name is not None:
            if not name:
                raise ValueError("an object name may not be empty")
            parts.append(quote(name, safe=""))
            if subresource:
                parts.append(subresource)
        elif subresource:
            raise ValueError("a subresource needs an object name")
        return "/".join(parts)

    # ---------------------------------------------------------- constructors
    @classmethod
    def from_lightkube(cls, res: type[Any]) -> Resource:
        """From a ``lightkube.resources.*`` class (not a subresource class)."""
        info = lk_resource.api_info(res)
        if info.parent is not None or info.action:
            raise ValueError(
                f"{res.__name__} is a subresource class; use the main resource and a subresource"
            )
        namespaced = issubclass(res, lk_resource.NamespacedResource)
        d = info.resource
        return cls(d.group, d.version, d.kind, info.plural, namespaced)

    @classmethod
    def of(cls, res: Resource | type[Any]) -> Resource:
        return res if isinstance(res, Resource) else cls.from_lightkube(res)


ResourceLike = Resource | type[Any]

_registry: dict[tuple[str, str], Resource] = {}


def register(resource: Resource) -> Resource:
    """Make a (custom) resource known to ``resource_for``."""
    _registry[(resource.api_version, resource.kind)] = resource
    return resource


def resource_for(api_version: str, kind: str) -> Resource:
    """The resource of an ``apiVersion``/``kind`` pair: ours first, then lightkube's built-ins."""
    found = _registry.get((api_version, kind))
    if found is not None:
        return found
    try:
        res = resource_registry.load(api_version, kind)
    except (LoadResourceError, ImportError, ValueError) as e:
        raise LookupError(f"unknown resource {kind} in {api_version}; register it first") from e
    return register(Resource.from_lightkube(res))


def resource_of_object(obj: Mapping[str, Any]) -> Resource:
    api_version, kind = obj.get("apiVersion"), obj.get("kind")
    if not api_version or not kind:
        raise ValueError("the object needs apiVersion and kind to find its resource")
    return resource_for(api_version, kind)
