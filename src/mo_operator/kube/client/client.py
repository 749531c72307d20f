"""The API client: raw JSON dicts in and out, every verb the runtime needs.

Requests are built here from ``Resource`` URLs and sent through
``RestTransport`` (lightkube's connection setup, rate limit, retries,
metrics); objects stay plain dicts because the runtime never needs typed
models and decoding into them would cost more than the request. Every write
carries our field manager (and ``dryRun=All`` when asked); server-side apply
(``apply``/``apply_status``) is the normal write. ``writes`` counts write
calls per verb, so tests can prove that a no-op resync writes nothing.

Every write passes through one path, ``_write``, and through the client's
``write_hooks`` on it: the leader election fence (``adapters.WriteFence``)
refuses there, and an observer (a benchmark recording each write) watches
there, without either re-declaring the client's verbs.
"""

from __future__ import annotations

import asyncio
import collections
import copy
import functools
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import httpx2
from lightkube.config.kubeconfig import KubeConfig, SingleConfig

from ..flowcontrol.backoff import Backoff
from ..flowcontrol.ratelimit import TokenBucket
from ..meta.errors import Gone, NotFound
from .resource import Resource, ResourceLike, resource_of_object
from .rest import RestTransport, default_backoff
from .watch import WatchEvent, WatchExpired, decode_stream

Obj = dict[str, Any]

JSON_PATCH = "application/json-patch+json"
MERGE_PATCH = "application/merge-patch+json"
STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json"
APPLY_PATCH = "application/apply-patch+yaml"  # JSON is YAML: the body is sent as JSON
PATCH_TYPES = {
    "json": JSON_PATCH,
    "merge": MERGE_PATCH,
    "strategic": STRATEGIC_MERGE_PATCH,
    "apply": APPLY_PATCH,
}
DEFAULT_QPS = 50.0
DEFAULT_BURST = 100
"""client-go's defaults would be 5 and 10, which a controller of hundreds of objects
outgrows at once; these are the operator's (``mo-operator run --qps/--burst``)."""
#: Requests whose repetition cannot do harm (a JSON patch can: "add" to a list).
_IDEMPOTENT = frozenset(("GET", "PUT", "DELETE"))
_IDEMPOTENT_PATCHES = frozenset((APPLY_PATCH, MERGE_PATCH, STRATEGIC_MERGE_PATCH))


@dataclass(frozen=True)
class WriteCall:
    """One write, as the write hooks see it."""

    verb: str
    """``create``, ``update``, ``patch``, ``apply`` or ``delete``."""
    resource: Resource
    namespace: str | None
    name: str | None
    subresource: str | None
    body: Any


Send = Callable[[], Awaitable[Obj]]
WriteHook = Callable[[WriteCall, Send], Awaitable[Obj]]
"""Wraps a write: gets the call and the rest of the chain (``send``), returns
its result; raising instead of awaiting ``send`` refuses the write."""


@dataclass
class ObjectList:
    """A complete (all pages) list: items and the resourceVersion to watch from."""

    items: list[Obj]
    resource_version: str


@dataclass
class ListPage:
    items: list[Obj]
    resource_version: str
    continue_: str | None = None


class ApiClient:
    def __init__(
        self,
        config: KubeConfig | SingleConfig | None = None,
        *,
        field_manager: str = "mo-operator",
        user_agent: str | None = None,
        qps: float | None = DEFAULT_QPS,
        burst: int = DEFAULT_BURST,
        rate_limiter: TokenBucket | None = None,
        max_retries: int = 5,
        retry_backoff: Callable[[], Backoff] = default_backoff,
        timeout: float = 30.0,
        dry_run: bool = False,
        transport: httpx2.AsyncBaseTransport | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        """``config``: a lightkube KubeConfig or SingleConfig; None detects the
        in-cluster service account, then ``$KUBECONFIG``/``~/.kube/config``.
        ``qps`` None turns the client-side rate limit off. ``transport`` and
        ``sleep`` are for tests."""
        if config is None:
            config = KubeConfig.from_env()
        single = config.get() if isinstance(config, KubeConfig) else config
        if single is None:
            raise ValueError("the kubeconfig has no usable context")
        self.config = single
        self.namespace = single.namespace
        self.field_manager = field_manager
        self.dry_run = dry_run
        self.rest = RestTransport(
            single,
            user_agent=user_agent or f"mo-operator ({field_manager})",
            qps=qps,
            burst=burst,
            rate_limiter=rate_limiter,
            max_retries=max_retries,
            retry_backoff=retry_backoff,
            timeout=timeout,
            transport=transport,
            sleep=sleep,
        )
        self.writes: collections.Counter[str] = collections.Counter()
        """Writes sent (past every hook), by verb; shared with ``with_write_hook`` clients."""
        self.write_hooks: list[WriteHook] = []
        """Hooks around every write of this client (and of the clients derived from it)."""
        self._base: ApiClient | None = None

    def with_write_hook(self, hook: WriteHook) -> ApiClient:
        """This client (same connection, rate limit, ``writes`` and hooks, even
        ones added later) with ``hook`` around its writes only: the leader
        election fence applies to the controllers' writes, not to the lease's
        own, which may share the connection."""
        derived = copy.copy(self)
        derived._base = self
        derived.write_hooks = [hook]
        return derived

    def _hooks(self) -> list[WriteHook]:
        """Outermost first: those of the client this one derives from, then its own."""
        base = self._base._hooks() if self._base is not None else []
        return [*base, *self.write_hooks]

    @classmethod
    def from_kubeconfig(cls, path: str | None = None, context: str | None = None, **kw: Any) -> ApiClient:
        config = KubeConfig.from_file(path) if path else KubeConfig.from_env()
        single = config.get(context_name=context) if context else config.get()
        return cls(single, **kw)

    @classmethod
    def in_cluster(cls, **kw: Any) -> ApiClient:
        return cls(KubeConfig.from_service_account(), **kw)

    async def close(self) -> None:
        await self.rest.close()

    async def __aenter__(self) -> ApiClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # ----------------------------------------------------------------- reads
    async def get(
        self,
        resource: ResourceLike,
        name: str,
        namespace: str | None = None,
        *,
        subresource: str | None = None,
    ) -> Obj:
        res = Resource.of(resource)
        path = res.path(self._ns(res, namespace), name, subresource)
        result: Obj = await self.rest.request("get", _label(res, subresource), "GET", path)
        return result

    async def get_or_none(
        self, resource: ResourceLike, name: str, namespace: str | None = None
    ) -> Obj | None:
        try:
            return await self.get(resource, name, namespace)
        except NotFound:
            return None

    async def list_page(
        self,
        resource: ResourceLike,
        namespace: str | None = None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        limit: int | None = None,
        continue_: str | None = None,
        resource_version: str | None = None,
    ) -> ListPage:
        """One page of a list. ``namespace`` None lists all namespaces."""
        res = Resource.of(resource)
        params = {
            "labelSelector": label_selector or None,
            "fieldSelector": field_selector or None,
            "limit": str(limit) if limit else None,
            "continue": continue_ or None,
            "resourceVersion": resource_version,
        }
        body: Obj = await self.rest.request(
            "list", res.group_resource, "GET", res.path(namespace), params=params
        )
        meta = body.get("metadata") or {}
        items: list[Obj] = body.get("items") or []
        for item in items:  # the server leaves these out of list items of built-in kinds
            item.setdefault("apiVersion", res.api_version)
            item.setdefault("kind", res.kind)
        return ListPage(items, str(meta.get("resourceVersion") or ""), meta.get("continue") or None)

    async def list(
        self,
        resource: ResourceLike,
        namespace: str | None = None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        limit: int = 500,
    ) -> ObjectList:
        """Every page of a list, as one consistent snapshot."""
        items: list[Obj] = []
        token: str | None = None
        rv = ""
        while True:
            page = await self.list_page(
                resource,
                namespace,
                label_selector=label_selector,
                field_selector=field_selector,
                limit=limit,
                continue_=token,
            )
            items.extend(page.items)
            rv = rv or page.resource_version
            token = page.continue_
            if not token:
                return ObjectList(items, rv)

    async def watch(
        self,
        resource: ResourceLike,
        namespace: str | None = None,
        *,
        resource_version: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
        timeout_seconds: int | None = None,
        allow_bookmarks: bool = True,
    ) -> AsyncIterator[WatchEvent]:
        """Events after ``resource_version`` until the server ends the watch.

        Raises ``WatchExpired`` when that version is gone (relist), ApiError
        for other failures; a dropped connection surfaces as the transport
        error (the caller resumes from the last version it saw).
        """
        res = Resource.of(resource)
        params = {
            "watch": "true",
            "resourceVersion": resource_version or None,
            "allowWatchBookmarks": "true" if allow_bookmarks else None,
            "timeoutSeconds": str(timeout_seconds) if timeout_seconds else None,
            "labelSelector": label_selector or None,
            "fieldSelector": field_selector or None,
        }
        try:
            response = await self.rest.open_stream("watch", res.group_resource, res.path(namespace), params)
        except Gone as e:
            raise WatchExpired(e.message, e.reason or "Expired") from e
        try:
            async for event in decode_stream(response.aiter_raw()):
                yield event
        finally:
            await response.aclose()

    # ---------------------------------------------------------------- writes
    async def create(
        self,
        resource: ResourceLike,
        obj: Mapping[str, Any],
        namespace: str | None = None,
        *,
        dry_run: bool | None = None,
    ) -> Obj:
        res = Resource.of(resource)
        meta = obj.get("metadata") or {}
        ns = self._ns(res, namespace or meta.get("namespace"))
        return await self._write(
            "create", res, "POST", res.path(ns), obj, ns, meta.get("name"), dry_run=dry_run, subresource=None
        )

    async def update(
        self,
        resource: ResourceLike,
        obj: Mapping[str, Any],
        *,
        subresource: str | None = None,
        dry_run: bool | None = None,
    ) -> Obj:
        """PUT: replace the object; its ``metadata.resourceVersion`` makes it
        conditional (409 Conflict when someone wrote in between)."""
        res = Resource.of(resource)
        meta = obj.get("metadata") or {}
        ns, name = self._ns(res, meta.get("namespace")), meta.get("name")
        path = res.path(ns, name, subresource)
        return await self._write(
            "update", res, "PUT", path, obj, ns, name, dry_run=dry_run, subresource=subresource
        )

    async def update_status(
        self, resource: ResourceLike, obj: Mapping[str, Any], *, dry_run: bool | None = None
    ) -> Obj:
        return await self.update(resource, obj, subresource="status", dry_run=dry_run)

    async def patch(
        self,
        resource: ResourceLike,
        name: str,
        patch: Mapping[str, Any] | Sequence[Mapping[str, Any]],
        namespace: str | None = None,
        *,
        patch_type: str = "merge",
        subresource: str | None = None,
        dry_run: bool | None = None,
    ) -> Obj:
        """``patch_type``: ``merge`` (RFC 7386), ``strategic`` (built-in kinds
        only) or ``json`` (RFC 6902, a list of operations)."""
        if patch_type not in ("merge", "strategic", "json"):
            raise ValueError(f"unknown patch type {patch_type!r} (use apply() for server-side apply)")
        res = Resource.of(resource)
        ns = self._ns(res, namespace)
        return await self._write(
            "patch",
            res,
            "PATCH",
            res.path(ns, name, subresource),
            patch,
            ns,
            name,
            content_type=PATCH_TYPES[patch_type],
            dry_run=dry_run,
            subresource=subresource,
        )

    async def patch_status(
        self,
        resource: ResourceLike,
        name: str,
        patch: Mapping[str, Any] | Sequence[Any],
        namespace: str | None = None,
        *,
        patch_type: str = "merge",
        dry_run: bool | None = None,
    ) -> Obj:
        return await self.patch(
            resource, name, patch, namespace, patch_type=patch_type, subresource="status", dry_run=dry_run
        )

    async def apply(
        self,
        obj: Mapping[str, Any],
        *,
        resource: ResourceLike | None = None,
        field_manager: str | None = None,
        force: bool = False,
        subresource: str | None = None,
        dry_run: bool | None = None,
    ) -> Obj:
        """Server-side apply: ``obj`` is our whole intent for the fields we
        manage (apiVersion, kind and metadata.name are required); the server
        merges it, and removes fields we applied before and left out now.
        ``force`` takes over fields other managers own instead of a 409."""
        res = Resource.of(resource) if resource is not None else resource_of_object(obj)
        meta = obj.get("metadata") or {}
        ns, name = self._ns(res, meta.get("namespace")), meta.get("name")
        return await self._write(
            "apply",
            res,
            "PATCH",
            res.path(ns, name, subresource),
            obj,
            ns,
            name,
            content_type=APPLY_PATCH,
            dry_run=dry_run,
            subresource=subresource,
            field_manager=field_manager,
            force=force,
        )

    async def apply_status(self, obj: Mapping[str, Any], **kw: Any) -> Obj:
        return await self.apply(obj, subresource="status", **kw)

    async def delete(
        self,
        resource: ResourceLike,
        name: str,
        namespace: str | None = None,
        *,
        propagation_policy: str | None = None,
        uid: str | None = None,
        resource_version: str | None = None,
        grace_period_seconds: int | None = None,
        missing_ok: bool = False,
        dry_run: bool | None = None,
    ) -> Obj | None:
        """Delete one object; ``uid``/``resource_version`` make it conditional
        (409 when the object is no longer the one we decided about). Returns
        the object (with deletionTimestamp while finalizers hold it) or the
        Status; None when it was already gone and ``missing_ok``."""
        res = Resource.of(resource)
        body: Obj = {"kind": "DeleteOptions", "apiVersion": "v1"}
        if propagation_policy:
            body["propagationPolicy"] = propagation_policy
        if grace_period_seconds is not None:
            body["gracePeriodSeconds"] = grace_period_seconds
        preconditions = {k: v for k, v in (("uid", uid), ("resourceVersion", resource_version)) if v}
        if preconditions:
            body["preconditions"] = preconditions
        ns = self._ns(res, namespace)
        try:
            return await self._write(
                "delete",
                res,
                "DELETE",
                res.path(ns, name),
                body,
                ns,
                name,
                dry_run=dry_run,
                subresource=None,
            )
        except NotFound:
            if missing_ok:
                return None
            raise

    # ------------------------------------------------------------- internals
    def _ns(self, res: Resource, namespace: str | None) -> str | None:
        if not res.namespaced:
            return None
        return namespace or self.namespace

    async def _write(
        self,
        verb: str,
        res: Resource,
        method: str,
        path: str,
        body: Any,
        namespace: str | None,
        name: str | None,
        *,
        content_type: str = "application/json",
        dry_run: bool | None,
        subresource: str | None,
        field_manager: str | None = None,
        force: bool = False,
    ) -> Obj:
        """The one path of every write: through the hooks, then to the server."""
        params: dict[str, str | None] = {}
        if verb != "delete":
            params["fieldManager"] = field_manager or self.field_manager
        if dry_run if dry_run is not None else self.dry_run:
            params["dryRun"] = "All"
        if force:
            params["force"] = "true"

        async def send() -> Obj:
            self.writes[verb] += 1
            result: Obj = await self.rest.request(
                verb,
                _label(res, subresource),
                method,
                path,
                params=params,
                body=body,
                content_type=content_type,
                idempotent=method in _IDEMPOTENT or content_type in _IDEMPOTENT_PATCHES,
            )
            return result

        chain: Send = send
        call = WriteCall(verb, res, namespace, name, subresource, body)
        for hook in reversed(self._hooks()):
            chain = functools.partial(hook, call, chain)
        return await chain()


def _label(res: Resource, subresource: str | None) -> str:
    return f"{res.group_resource}/{subresource}" if subresource else res.group_resource
