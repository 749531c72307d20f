"""The simulator's only way to the cluster: a lightkube ``AsyncClient`` used
with raw JSON objects, so the same code drives the embedded API server and a
real kube-apiserver.

lightkube's model classes would parse every object into typed structures and
back; the simulator works on plain dicts, so it declares one dict-backed
lightkube resource class per kind (not registered globally, so nothing else
in the process sees them).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any, cast

from lightkube import ApiError, AsyncClient
from lightkube.core import resource as lkres
from lightkube.core.exceptions import NotReadyError
from lightkube.generic_resource import Generic
from lightkube.types import PatchType

from .kinds import Kind
from .objects import Obj

_PATCH_TYPES = {
    "merge": PatchType.MERGE,
    "json": PatchType.JSON,
    "strategic": PatchType.STRATEGIC,
    "apply": PatchType.APPLY,
}


class KubeError(Exception):
    """An API failure with the ``metav1.Status`` code and reason."""

    def __init__(self, code: int, reason: str, message: str) -> None:
        super().__init__(f"{code} {reason}: {message}")
        self.code = code
        self.reason = reason
        self.message = message

    @property
    def not_found(self) -> bool:
        return self.code == 404

    @property
    def conflict(self) -> bool:
        return self.code == 409

    @property
    def already_exists(self) -> bool:
        return self.code == 409 and self.reason == "AlreadyExists"

    @property
    def gone(self) -> bool:
        return self.code == 410


def _from_api_error(e: ApiError) -> KubeError:
    st = e.status
    return KubeError(int(st.code or 0), str(st.reason or ""), str(st.message or ""))


def _api_info(kind: Kind, action: str | None = None) -> lkres.ApiInfo:
    verbs = [
        "delete",
        "deletecollection",
        "get",
        "global_list",
        "global_watch",
        "list",
        "patch",
        "post",
        "put",
        "watch",
    ]
    if action is None:
        return lkres.ApiInfo(
            resource=lkres.ResourceDef(kind.group, kind.version, kind.kind), plural=kind.plural, verbs=verbs
        )
    sub = (
        lkres.ResourceDef("", "v1", "Binding")
        if action == "binding"
        else lkres.ResourceDef(kind.group, kind.version, kind.kind)
    )
    return lkres.ApiInfo(
        resource=sub,
        parent=lkres.ResourceDef(kind.group, kind.version, kind.kind),
        plural=kind.plural,
        verbs=["get", "patch", "put", "post"],
        action=action,
    )


_classes: dict[tuple[Kind, str | None], type[Any]] = {}


def _resource_class(kind: Kind, action: str | None = None) -> type[Any]:
    cls = _classes.get((kind, action))
    if cls is None:
        if action is None:
            base: type[Any] = lkres.NamespacedResourceG if kind.namespaced else lkres.GlobalResource
        else:
            base = lkres.NamespacedSubResource if kind.namespaced else lkres.GlobalSubResource
        cls = type(
            f"Sim{kind.kind}{(action or '').title()}", (base, Generic), {"_api_info": _api_info(kind, action)}
        )
        _classes[(kind, action)] = cls
    return cls


def _plain(obj: Any) -> Obj:
    return dict(obj.to_dict()) if hasattr(obj, "to_dict") else dict(obj)


class KubeApi:
    """Raw-dict verbs over a lightkube client, each write tagged with the field
    manager of the component it stands for (kubelet, kube-scheduler, ...)."""

    def __init__(self, client: AsyncClient, field_manager: str = "localcluster-simulator") -> None:
        self.client = client
        self.field_manager = field_manager

    def with_manager(self, field_manager: str) -> KubeApi:
        return KubeApi(self.client, field_manager)

    async def list_all(
        self, kind: Kind, namespace: str | None = None, fields: dict[str, str] | None = None
    ) -> tuple[list[Obj], str]:
        """Every object of the kind (in one namespace, or all) and the list's resourceVersion."""
        it = self.client.list(
            _resource_class(kind),
            namespace=(namespace or "*") if kind.namespaced else None,
            chunk_size=500,
            fields=cast(Any, fields),
        )
        items: list[Obj] = []
        try:
            async for o in it:
                items.append(_plain(o))
        except ApiError as e:
            raise _from_api_error(e) from e
        try:
            rv = it.resourceVersion
        except NotReadyError:
            rv = ""
        return items, rv

    async def watch(
        self,
        kind: Kind,
        resource_version: str,
        timeout_seconds: int,
        namespace: str | None = None,
        fields: dict[str, str] | None = None,
    ) -> AsyncIterator[tuple[str, Obj]]:
        """Watch events after ``resource_version``; ends when the server closes
        the stream; 410 Gone and other failures raise :class:`KubeError`."""
        stream = self.client.watch(
            _resource_class(kind),
            namespace=(namespace or "*") if kind.namespaced else None,
            resource_version=resource_version,
            server_timeout=timeout_seconds,
            fields=cast(Any, fields),
        )
        try:
            async for etype, obj in stream:
                yield etype, _plain(obj)
        except ApiError as e:
            raise _from_api_error(e) from e

    async def get(self, kind: Kind, namespace: str, name: str) -> Obj | None:
        try:
            o = await self.client.get(_resource_class(kind), name, namespace=namespace or None)
        except ApiError as e:
            if e.status.code == 404:
                return None
            raise _from_api_error(e) from e
        return _plain(o)

    async def create(self, kind: Kind, obj: Obj) -> Obj:
        body = dict(obj, apiVersion=kind.api_version, kind=kind.kind)
        try:
            o = await self.client.create(_resource_class(kind)(body), field_manager=self.field_manager)
        except ApiError as e:
            raise _from_api_error(e) from e
        return _plain(o)

    async def patch(
        self,
        kind: Kind,
        namespace: str,
        name: str,
        patch: Obj | list[Obj],
        *,
        subresource: str | None = None,
        patch_type: str = "merge",
    ) -> Obj:
        try:
            o = await self.client.patch(
                _resource_class(kind, subresource),
                name,
                cast(Any, patch),
                namespace=namespace or None,
                patch_type=_PATCH_TYPES[patch_type],
                field_manager=self.field_manager,
            )
        except ApiError as e:
            raise _from_api_error(e) from e
        return _plain(o)

    async def bind(self, namespace: str, name: str, uid: str, node: str) -> None:
        """POST ``pods/{name}/binding``, as kube-scheduler's DefaultBinder does."""
        body = {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": name, "namespace": namespace, "uid": uid},
            "target": {"apiVersion": "v1", "kind": "Node", "name": node},
        }
        cls = _resource_class(Kind("", "v1", "Pod", "pods"), "binding")
        try:
            await self.client.create(cls(body), name, namespace=namespace, field_manager=self.field_manager)
        except ApiError as e:
            raise _from_api_error(e) from e

    async def get_raw(self, path: str) -> Obj | None:
        """GET any path of the API (a discovery document, a subresource of a kind only
        discovery names); None when it is not found."""
        http = self.client._client._client  # lightkube's configured HTTP client
        resp = await http.request("GET", path, headers={"Accept": "application/json"})
        body = json.loads(resp.content or b"{}")
        if resp.status_code == 404:
            return None
        if resp.status_code >= 400:
            raise KubeError(resp.status_code, str(body.get("reason", "")), str(body.get("message", "")))
        return cast(Obj, body)

    async def delete(
        self,
        kind: Kind,
        namespace: str,
        name: str,
        *,
        uid: str | None = None,
        grace_period: int | None = None,
        propagation: str | None = None,
    ) -> Obj | None:
        """DELETE with a ``DeleteOptions`` body (the UID precondition the kubelet
        and the controllers use, which lightkube's ``delete`` cannot send).

        Returns the object if it is still there and None once it is gone.
        Neither the response code nor its kind says which on every server
        (pods answer with the object either way), so this follows the store's
        rule: an object stays while it has finalizers or a grace period left.
        """
        options: Obj = {"apiVersion": "v1", "kind": "DeleteOptions"}
        if uid:
            options["preconditions"] = {"uid": uid}
        if grace_period is not None:
            options["gracePeriodSeconds"] = grace_period
        if propagation:
            options["propagationPolicy"] = propagation
        prefix = f"/apis/{kind.group}/{kind.version}" if kind.group else f"/api/{kind.version}"
        ns = f"/namespaces/{namespace}" if kind.namespaced else ""
        http = self.client._client._client  # lightkube's configured HTTP client
        resp = await http.request(
            "DELETE",
            f"{prefix}{ns}/{kind.plural}/{name}",
            content=json.dumps(options).encode(),
            headers={"Content-Type": "application/json"},
        )
        body = json.loads(resp.content or b"{}")
        if resp.status_code >= 400:
            raise KubeError(resp.status_code, str(body.get("reason", "")), str(body.get("message", "")))
        if body.get("kind") == "Status":
            return None
        m = body.get("metadata") or {}
        if m.get("finalizers") or (m.get("deletionGracePeriodSeconds") or 0) > 0:
            return cast(Obj, body)
        return None
