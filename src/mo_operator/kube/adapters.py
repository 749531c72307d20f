"""Glue from ``ApiClient`` to the small protocols the runtime's parts are
written against: ``leader.LeaseStore``, ``events.EventSink`` and
``actor.Writer``, plus the write fence of leader election.

Those parts take protocols so that their logic is tested against fakes; this
module is the one place that decides what an API answer means to each of
them (which 409 is a lost race, which 4xx is final, which 404 means "create
it again"), so that knowledge is not spread over the parts.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from typing import Any

from lightkube.resources.coordination_v1 import Lease
from lightkube.resources.core_v1 import Event

from .client import ApiClient, ObjectList
from .errors import ApiError
from .events import EventNotFound, EventRejected
from .leader import LeaseConflict
from .resource import Resource, ResourceLike
from .rest import SEND_GUARD
from .watch import WatchEvent

Obj = dict[str, Any]

LEASES = Resource.of(Lease)
EVENTS = Resource.of(Event)


class WriteRefused(Exception):
    """A write was stopped before it left the process: this replica may not
    write (it is not the leader, or it could not renew its lease in time)."""


class FencedClient:
    """An ``ApiClient`` whose writes first ask ``may_write`` (normally
    ``LeaderElector.may_write``) and raise ``WriteRefused`` when it says no.

    Leader election alone stops the controllers of a replica that lost its
    lease, but a reconcile already past its reads when that happens would
    still write; so would every write of a process that was frozen (SIGSTOP,
    a long GC pause) past its renew deadline, since it learns of the loss only
    after waking. Checking at the moment of each write closes that window on
    our side. Reads pass through unfenced. The lease itself must be written
    through an unfenced client, or no replica could ever acquire it.
    """

    def __init__(self, client: ApiClient, may_write: Callable[[], bool]) -> None:
        self.client = client
        self.may_write = may_write
        self.refused = 0

    @property
    def field_manager(self) -> str:
        return self.client.field_manager

    def _fence(self, verb: str, what: object, name: object) -> None:
        if not self.may_write():
            self.refused += 1
            raise WriteRefused(f"{verb} {what}/{name or ''} refused: this replica may not write")

    @contextlib.contextmanager
    def _fenced(self, verb: str, what: object, name: object) -> Iterator[None]:
        """Check now, and again before every attempt to send (``rest.SEND_GUARD``)."""
        check = functools.partial(self._fence, verb, what, name)
        check()
        token = SEND_GUARD.set(check)
        try:
            yield
        finally:
            SEND_GUARD.reset(token)

    # ----------------------------------------------------------------- reads
    async def get(
        self,
        resource: ResourceLike,
        name: str,
        namespace: str | None = None,
        *,
        subresource: str | None = None,
    ) -> Obj:
        return await self.client.get(resource, name, namespace, subresource=subresource)

    async def get_or_none(
        self, resource: ResourceLike, name: str, namespace: str | None = None
    ) -> Obj | None:
        return await self.client.get_or_none(resource, name, namespace)

    async def list(
        self,
        resource: ResourceLike,
        namespace: str | None = None,
        *,
        label_selector: str | None = None,
        field_selector: str | None = None,
        limit: int = 500,
    ) -> ObjectList:
        return await self.client.list(
            resource, namespace, label_selector=label_selector, field_selector=field_selector, limit=limit
        )

    def watch(
        self, resource: ResourceLike, namespace: str | None = None, **kw: Any
    ) -> AsyncIterator[WatchEvent]:
        return self.client.watch(resource, namespace, **kw)

    # ---------------------------------------------------------------- writes
    async def create(
        self,
        resource: ResourceLike,
        obj: Mapping[str, Any],
        namespace: str | None = None,
        *,
        dry_run: bool | None = None,
    ) -> Obj:
        with self._fenced("create", Resource.of(resource), (obj.get("metadata") or {}).get("name")):
            return await self.client.create(resource, obj, namespace, dry_run=dry_run)

    async def update(
        self,
        resource: ResourceLike,
        obj: Mapping[str, Any],
        *,
        subresource: str | None = None,
        dry_run: bool | None = None,
    ) -> Obj:
        with self._fenced("update", Resource.of(resource), (obj.get("metadata") or {}).get("name")):
            return await self.client.update(resource, obj, subresource=subresource, dry_run=dry_run)

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
        with self._fenced("patch", Resource.of(resource), name):
            return await self.client.patch(
                resource,
                name,
                patch,
                namespace,
                patch_type=patch_type,
                subresource=subresource,
                dry_run=dry_run,
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
        with self._fenced("patch", Resource.of(resource), name):
            return await self.client.patch_status(
                resource, name, patch, namespace, patch_type=patch_type, dry_run=dry_run
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
        with self._fenced("apply", obj.get("kind"), (obj.get("metadata") or {}).get("name")):
            return await self.client.apply(
                obj,
                resource=resource,
                field_manager=field_manager,
                force=force,
                subresource=subresource,
                dry_run=dry_run,
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
        with self._fenced("delete", Resource.of(resource), name):
            return await self.client.delete(
                resource,
                name,
                namespace,
                propagation_policy=propagation_policy,
                uid=uid,
                resource_version=resource_version,
                grace_period_seconds=grace_period_seconds,
                missing_ok=missing_ok,
                dry_run=dry_run,
            )


#: Either client: the adapters write through whichever they are given.
Client = ApiClient | FencedClient


def _final(e: ApiError) -> bool:
    """A 4xx the same request will get again: retrying cannot help (429 can)."""
    return 400 <= e.status < 500 and e.status != 429


class ClientLeaseStore:
    """``leader.LeaseStore`` on ``coordination.k8s.io/v1`` Leases.

    ``replace`` is a PUT carrying the resourceVersion we read, so two
    candidates racing for an expired lease cannot both win: the second gets
    409 Conflict, reported as ``LeaseConflict`` (as is AlreadyExists when
    both try to create it). Give it an unfenced client of its own: client-go
    also builds leader election its own client, so that a controller busy
    enough to drain the shared rate limit cannot starve the renewals.
    """

    def __init__(self, client: Client) -> None:
        self.client = client

    async def get(self, namespace: str, name: str) -> Obj | None:
        return await self.client.get_or_none(LEASES, name, namespace)

    async def create(self, namespace: str, lease: Obj) -> Obj:
        try:
            return await self.client.create(LEASES, lease, namespace)
        except ApiError as e:
            if e.status == 409:
                raise LeaseConflict(e.message) from e
            raise

    async def replace(self, namespace: str, lease: Obj) -> Obj:
        meta = lease.get("metadata") or {}
        body = {**lease, "metadata": {**meta, "namespace": namespace}}
        try:
            return await self.client.update(LEASES, body)
        except ApiError as e:
            if e.status == 409:
                raise LeaseConflict(e.message) from e
            raise


class ClientEventSink:
    """``events.EventSink`` on core/v1 Events.

    A patch of an Event that is gone (the server's event TTL removed it) is
    ``EventNotFound``, so the recorder creates it again; any other 4xx but
    429 is ``EventRejected`` (invalid, already exists, namespace
    terminating), dropped rather than retried forever, and so is a write the
    leader election fence refused (a replica that lost its lease never gets
    it back, and the new leader reports for itself); everything else (429,
    5xx, connection trouble) stays an ordinary exception, which the recorder
    retries with backoff.
    """

    def __init__(self, client: Client) -> None:
        self.client = client

    async def create(self, namespace: str, event: dict[str, Any]) -> object:
        try:
            return await self.client.create(EVENTS, event, namespace)
        except WriteRefused as e:
            raise EventRejected(str(e)) from e
        except ApiError as e:
            if _final(e):
                raise EventRejected(str(e)) from e
            raise

    async def patch(self, namespace: str, name: str, patch: dict[str, Any]) -> object:
        try:
            return await self.client.patch(EVENTS, name, patch, namespace, patch_type="merge")
        except WriteRefused as e:
            raise EventRejected(str(e)) from e
        except ApiError as e:
            if e.status == 404:
                raise EventNotFound(str(e)) from e
            if _final(e):
                raise EventRejected(str(e)) from e
            raise


class ClientWriter:
    """``actor.Writer`` for one resource.

    ``merge_patch`` sends the Actor framework's metadata patches as they are
    (they carry ``metadata.resourceVersion``, so a finalizer change made on
    a stale read fails with 409 instead of dropping someone else's
    finalizer). ``patch_status`` server-side applies the status through
    ``/status`` with the client's field manager, forcing ownership: the
    status of an object we reconcile is ours to state, and a field-manager
    conflict there would otherwise wedge the controller. Unlike a merge
    patch, apply also removes status fields we set before and leave out now.
    """

    def __init__(self, client: Client, resource: ResourceLike) -> None:
        self.client = client
        self.resource = Resource.of(resource)

    async def merge_patch(self, namespace: str, name: str, patch: Obj) -> Obj:
        return await self.client.patch(self.resource, name, patch, namespace or None, patch_type="merge")

    async def patch_status(self, namespace: str, name: str, status: Obj) -> Obj:
        meta: Obj = {"name": name}
        if self.resource.namespaced:
            meta["namespace"] = namespace
        body = {
            "apiVersion": self.resource.api_version,
            "kind": self.resource.kind,
            "metadata": meta,
            "status": status,
        }
        return await self.client.apply(body, resource=self.resource, subresource="status", force=True)
