"""Glue from ``ApiClient`` to the small protocols the runtime's parts are
written against: ``leader.LeaseStore``, ``events.EventSink`` and
``actor.Writer``, plus the write fence of leader election.

Those parts take protocols so that their logic is tested against fakes; this
module is the one place that decides what an API answer means to each of
them (which 409 is a lost race, which 4xx is final, which 404 means "create
it again"), so that knowledge is not spread over the parts.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from lightkube.resources.coordination_v1 import Lease
from lightkube.resources.core_v1 import Event

from ..client.client import ApiClient, Send, WriteCall
from ..client.resource import Resource, ResourceLike
from ..client.rest import SEND_GUARD
from ..leaderelection.leader import LeaseConflict
from ..meta.errors import AlreadyExists, ApiError, Conflict, NotFound
from ..recorder.events import EventNotFound, EventRejected

Obj = dict[str, Any]

LEASES = Resource.of(Lease)
EVENTS = Resource.of(Event)


class WriteRefused(Exception):
    """A write was stopped before it left the process: this replica may not
    write (it is not the leader, or it could not renew its lease in time)."""


class WriteFence:
    """A write hook (``ApiClient.with_write_hook``) that first asks
    ``may_write`` (normally ``LeaderElector.may_write``) and raises
    ``WriteRefused`` when it says no.

    Leader election alone stops the controllers of a replica that lost its
    lease, but a reconcile already past its reads when that happens would
    still write; so would every write of a process that was frozen (SIGSTOP,
    a long GC pause) past its renew deadline, since it learns of the loss only
    after waking. Checking at the moment of each write, and again before
    every attempt to send it (``rest.SEND_GUARD``: a retry may wait long),
    closes that window on our side. Reads pass through unfenced. The lease
    itself must be written through an unfenced client, or no replica could
    ever acquire it.
    """

    def __init__(self, may_write: Callable[[], bool]) -> None:
        self.may_write = may_write
        self.refused = 0

    def _check(self, call: WriteCall) -> None:
        if not self.may_write():
            self.refused += 1
            what = call.resource.kind
            raise WriteRefused(f"{call.verb} {what}/{call.name or ''} refused: this replica may not write")

    async def __call__(self, call: WriteCall, send: Send) -> Obj:
        check = functools.partial(self._check, call)
        check()
        token = SEND_GUARD.set(check)
        try:
            return await send()
        finally:
            SEND_GUARD.reset(token)


def fenced(client: ApiClient, may_write: Callable[[], bool]) -> ApiClient:
    """``client`` with its writes behind a ``WriteFence`` on ``may_write``."""
    return client.with_write_hook(WriteFence(may_write))


Client = ApiClient
"""The client the adapters and controllers write through (fenced or not)."""


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
        except (AlreadyExists, Conflict) as e:
            raise LeaseConflict(e.message) from e

    async def replace(self, namespace: str, lease: Obj) -> Obj:
        meta = lease.get("metadata") or {}
        body = {**lease, "metadata": {**meta, "namespace": namespace}}
        try:
            return await self.client.update(LEASES, body)
        except (AlreadyExists, Conflict) as e:
            raise LeaseConflict(e.message) from e


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
        except NotFound as e:
            raise EventNotFound(str(e)) from e
        except ApiError as e:
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
