"""Writes that the decision functions ask for, as data: a decision returns a
list of actions and the executor performs them in order, feeding each result
back into the caches. Keeping writes as values is what lets the unit tests
check a decision without a server."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .cache import Caches
from .kinds import POD, Kind
from .kubeapi import KubeApi, KubeError
from .objects import Obj, key_of, resource_version_of

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Create:
    kind: Kind
    obj: Obj = field(hash=False)
    #: An AlreadyExists answer is success (deterministic names: PVCs, revisions).
    exists_ok: bool = False


@dataclass(frozen=True)
class Patch:
    kind: Kind
    namespace: str
    name: str
    patch: Any = field(hash=False)
    subresource: str | None = None
    patch_type: str = "merge"


@dataclass(frozen=True)
class Delete:
    kind: Kind
    namespace: str
    name: str
    uid: str | None = None
    grace_period: int | None = None
    propagation: str | None = None


@dataclass(frozen=True)
class Bind:
    namespace: str
    name: str
    uid: str
    node: str


Action = Create | Patch | Delete | Bind


class Executor:
    """Performs actions through one component's API identity."""

    def __init__(self, api: KubeApi, caches: Caches) -> None:
        self.api = api
        self.caches = caches

    async def run(
        self,
        actions: list[Action],
        *,
        stop_on_error: bool = True,
        owner_alive: Callable[[], bool] | None = None,
    ) -> list[KubeError]:
        """Perform the actions in order. Not-found on delete/patch counts as
        done (someone else got there first); other failures stop the batch
        unless ``stop_on_error`` is false, and are returned.

        ``owner_alive``: asked before each creation; once it says the object the
        actions are for is gone or going, nothing more is created for it (a
        controller creates nothing for an owner being deleted, however long the
        plan it made before)."""
        errors: list[KubeError] = []
        for a in actions:
            if isinstance(a, Create) and owner_alive is not None and not owner_alive():
                log.debug("the owner of %r is gone or going: its creations stop", a)
                break
            try:
                await self.perform(a)
            except KubeError as e:
                if e.not_found and isinstance(a, Delete | Patch):
                    continue
                log.debug("action %r failed: %s", a, e)
                errors.append(e)
                if stop_on_error:
                    break
        return errors

    async def perform(self, a: Action) -> Obj | None:
        if isinstance(a, Create):
            try:
                obj = await self.api.create(a.kind, a.obj)
            except KubeError as e:
                if a.exists_ok and e.already_exists:
                    return None
                raise
            self._remember(a.kind, obj)
            return obj
        if isinstance(a, Patch):
            obj = await self.api.patch(
                a.kind, a.namespace, a.name, a.patch, subresource=a.subresource, patch_type=a.patch_type
            )
            self._remember(a.kind, obj)
            return obj
        if isinstance(a, Delete):
            left = await self.api.delete(
                a.kind, a.namespace, a.name, uid=a.uid, grace_period=a.grace_period, propagation=a.propagation
            )
            if left is None:
                cache = self.caches.existing(a.kind)
                if cache is not None:
                    cache.forget(a.namespace, a.name, uid=a.uid)
            else:
                self._remember(a.kind, left)
            return left
        await self.api.bind(a.namespace, a.name, a.uid, a.node)
        return None

    def _remember(self, kind: Kind, obj: Obj) -> None:
        cache = self.caches.existing(kind)
        if cache is not None and resource_version_of(obj) and key_of(obj)[1]:
            cache.apply(obj)


def pod_delete(pod: Obj, grace_period: int | None = None) -> Delete:
    """Delete exactly this pod (UID precondition), as controllers do."""
    m = pod.get("metadata") or {}
    return Delete(POD, m.get("namespace", ""), m.get("name", ""), uid=m.get("uid"), grace_period=grace_period)
