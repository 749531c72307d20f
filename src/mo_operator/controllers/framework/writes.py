"""Planned writes: what an actor's ``observe`` decided, run later as its action.

Observation and action are separate (the operator's design): ``observe`` reads the cache
once and fills a ``Writes`` plan; the Actor framework runs it only when it
is not empty. The plan is data: each step is an ``Intent`` (``Apply``, ``Create``,
``Delete`` with its uid precondition, ``Patch``, or a ``Call`` to another system,
which alone carries code), so a test reads what was decided from ``intents``
without a client, and the plan's runner is the one place that writes. The plan's ``description`` becomes the ``Synced=False`` message
while it runs, so ``kubectl describe`` says what the controller is doing.
Writes run in the order planned (ConfigMaps before the workload that mounts
them), except that applies and creates in a row of anything but a workload go
out together: each is a whole desired object, none reads another, and one
round trip for a set's configs and Services instead of one each is most of
the time the operator adds to a new set's convergence. An error stops the plan
(writes of its batch still in flight are cancelled) and the reconcile retries
with backoff, recomputing everything from the cache, so a half-run plan is
never resumed from stale decisions.

**Bounded rounds.** Objects created one per member (pods, their volume claims, a
claim set's claims) are created as the ReplicaSet and Job controllers create
pods (``slowStartBatch``): a run of them goes out in batches of 1, 2, 4, ...
at a time, and the first failure stops it, so a spec the API server refuses
costs one refused request, not hundreds. A plan holds at most
:data:`CREATE_LIMIT` such creates (deciders cap what they build to it too); the
rest come in the next rounds, so the memory and time of one reconcile stay
bounded whatever ``replicas`` says, and the work queue serves other objects
between rounds.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from mo_operator.kube.client.resource import Resource, resource_of_object
from mo_operator.kube.controller.actor import Context
from mo_operator.kube.manager.adapters import Client
from mo_operator.kube.meta.errors import AlreadyExists, NotFound

from .desired import up_to_date
from .meta import is_deleting, name_of, uid_of
from .unseen import Applied, Key, Unseen, awaits, version

log = logging.getLogger(__name__)

Obj = dict[str, Any]
Step = Callable[[], Awaitable[object]]


@dataclass(frozen=True)
class Apply:
    """Server-side apply of a whole desired object, taking over fields others changed."""

    resource: Resource
    obj: Mapping[str, Any]
    unseen: tuple[Unseen, Key, str | None] | None = field(default=None, compare=False)
    """Noted once sent as our own write the cache has not shown yet (``unseen``)."""
    seen: Seen | None = None
    """Decided against the cache showing this version: noted in the book of applies
    not yet seen (``unseen``) when the framework acts with one (``Decision.act``)."""


class Seen(NamedTuple):
    """The version of an object the cache showed when an apply was decided (None: none)."""

    version: str | None


def key_of(resource: Resource, obj: Mapping[str, Any]) -> Key:
    meta = obj.get("metadata") or {}
    return (resource.kind, str(meta.get("namespace") or ""), str(meta.get("name") or ""))


@dataclass(frozen=True)
class Create:
    """Create an object named deterministically; one that exists already counts as done."""

    resource: Resource
    obj: Mapping[str, Any]


@dataclass(frozen=True)
class Delete:
    """Delete by name, on condition that it is still the object judged (``uid``); gone is done."""

    resource: Resource
    namespace: str
    name: str
    uid: str | None = None
    grace_period_seconds: int | None = None
    propagation_policy: str | None = "Background"


@dataclass(frozen=True)
class Patch:
    """A merge (or strategic) patch; a missing object is skipped."""

    resource: Resource
    namespace: str
    name: str
    body: Mapping[str, Any]
    subresource: str | None = None
    patch_type: str = "merge"
    what: str | None = field(default=None, compare=False)
    """What it does, as the plan and the ``Synced`` message say it (else ``patch KIND NAME``)."""


@dataclass(frozen=True)
class Call:
    """Any other side effect (a MatrixOne admin call), in order with the writes: the one
    intent that is code, since what it does is the other system's."""

    step: Step = field(compare=False)
    what: str = "call"
    """What it does, as the plan and the ``Synced`` message say it."""


@dataclass(frozen=True)
class Then:
    """What is planned after it goes after everything planned before it (``Writes.then``):
    a marker in a decision's intents, not a write."""


Intent = Apply | Create | Delete | Patch | Call | Then


class Planned(NamedTuple):
    what: str
    intent: Intent
    together: bool
    """It may go out with its ``together`` neighbours."""
    slow_start: bool = False
    """One of a run of per-member creates, sent in slow-start batches."""


WORKLOAD_KINDS = frozenset({"StatefulSet", "Deployment", "Pod"})
"""What runs a set's pods: a plan that writes one of these may reshape them."""
PER_MEMBER_KINDS = frozenset({"Pod", "PersistentVolumeClaim", "CNClaim"})
"""What a set creates one of per member: created in slow-start batches, at most
:data:`CREATE_LIMIT` per round."""
CREATE_LIMIT = 64
"""Per-member creates one plan holds; the rest are made in the next rounds."""


def applies(
    desired: Iterable[tuple[Resource, Mapping[str, Any]]],
    cached: Callable[[Resource, str], Mapping[str, Any] | None],
    applied: Mapping[Key, Applied],
) -> list[Apply]:
    """An ``Apply`` of each desired object that
    ``cached`` (by resource and name) does not already hold as desired, unless it is
    an apply of ours still on its way to the cache (``applied``: ``Unseen.of_owner``)."""
    out = []
    for res, want in desired:
        key = key_of(res, want)
        have = cached(res, key[2])
        if not up_to_date(have, want) and not awaits(applied.get(key), want, have):
            out.append(Apply(res, want, seen=Seen(version(have))))
    return out


def writes_workload(intents: Iterable[Intent]) -> bool:
    """``Writes.writes_workload`` of a decision's intents."""
    for intent in intents:
        match intent:
            case Apply(resource) | Create(resource) | Delete(resource) if resource.kind in WORKLOAD_KINDS:
                return True
            case Patch(resource) if resource.kind in WORKLOAD_KINDS and resource.kind != "Pod":
                return True
    return False


def _describe(obj: Mapping[str, Any]) -> str:
    return f"{obj.get('kind')} {(obj.get('metadata') or {}).get('name')}"


class Writes:
    """An ordered list of writes with a human description of each."""

    def __init__(self, client: Client) -> None:
        self.client = client
        self.steps: list[Planned] = []
        self.kinds: set[str] = set()
        """The kinds the plan writes (not those of ``call`` steps)."""
        self.member_creates = 0
        """Per-member creates planned (at most ``CREATE_LIMIT``)."""
        self.deferred = 0
        """Per-member creates left for a later round: the plan was full."""
        self._cuts: set[int] = set()
        """Indexes of steps that go only after every step before them (``then``)."""

    def __bool__(self) -> bool:
        return bool(self.steps)

    def __len__(self) -> int:
        return len(self.steps)

    @property
    def description(self) -> str:
        """What the framework shows as the Synced=False message while the plan runs."""
        shown = [planned.what for planned in self.steps[:3]]
        more = len(self.steps) - len(shown)
        return "; ".join(shown) + (f" and {more} more" if more > 0 else "")

    @property
    def writes_workload(self) -> bool:
        """The plan writes what runs the set's pods, so they may change: a set is
        not up to date while that happens. ConfigMaps, Services and annotations
        on other objects leave the pods as they are."""
        return not WORKLOAD_KINDS.isdisjoint(self.kinds)

    @property
    def intents(self) -> list[Intent]:
        """What the plan will do, in order, as data."""
        return [planned.intent for planned in self.steps]

    def add(
        self,
        what: str,
        intent: Intent,
        kind: str | None = None,
        *,
        together: bool = False,
        slow_start: bool = False,
    ) -> None:
        """``together``: the step may run at the same time as the ``together`` steps
        planned right before and after it. ``slow_start``: it is one of a run of
        per-member creates (see the module doc)."""
        self.steps.append(Planned(what, intent, together, slow_start))
        if kind is not None:
            self.kinds.add(kind)

    @property
    def room(self) -> int:
        """How many more per-member creates this plan takes."""
        return max(0, CREATE_LIMIT - self.member_creates)

    def then(self) -> None:
        """What is planned from here on goes after everything planned so far: for an
        object others look for as soon as theirs exist (a cluster's LogSet, which
        its sets report waiting for until they see it)."""
        self._cuts.add(len(self.steps))

    def _put(self, what: str, intent: Intent, kind: str) -> None:
        """A whole object written: with its neighbours unless it runs pods, which go
        after everything planned before them (the ConfigMaps they mount)."""
        self.add(what, intent, kind, together=kind not in WORKLOAD_KINDS)

    def apply(self, obj: Mapping[str, Any], resource: Resource | None = None) -> None:
        """Server-side apply ``obj`` with our field manager, taking over fields
        others changed (drift in a field we own is corrected, not fought)."""
        res = resource or resource_of_object(obj)
        self._put(f"apply {_describe(obj)}", Apply(res, obj), res.kind)

    def create(self, obj: Mapping[str, Any], resource: Resource | None = None) -> None:
        """Create ``obj``; AlreadyExists counts as done. Objects are named
        deterministically, so asking twice (the cache had not shown the first
        yet) can never make two."""
        res = resource or resource_of_object(obj)
        if res.kind not in PER_MEMBER_KINDS:
            self._put(f"create {_describe(obj)}", Create(res, obj), res.kind)
        elif self.room == 0:
            self.deferred += 1
        else:
            self.member_creates += 1
            self.add(f"create {_describe(obj)}", Create(res, obj), res.kind, slow_start=True)

    def _apply_noted(
        self, obj: Mapping[str, Any], res: Resource, unseen: Unseen, key: Key, before: str | None
    ) -> None:
        self._put(f"apply {_describe(obj)}", Apply(res, obj, (unseen, key, before)), res.kind)

    def delete(
        self,
        resource: Resource,
        namespace: str,
        name: str,
        *,
        uid: str | None = None,
        grace_period_seconds: int | None = None,
        propagation_policy: str | None = "Background",
    ) -> None:
        """Delete by name; ``uid`` makes it conditional on still being the object we judged."""
        intent = Delete(resource, namespace, name, uid, grace_period_seconds, propagation_policy)
        self.add(f"delete {resource.kind} {name}", intent, resource.kind)

    def patch(
        self,
        resource: Resource,
        namespace: str,
        name: str,
        patch: Mapping[str, Any],
        *,
        subresource: str | None = None,
        what: str | None = None,
        patch_type: str = "merge",
    ) -> None:
        """A merge patch (or ``strategic``, for lists keyed by name or type on
        built-in kinds); a missing object is skipped (it went meanwhile). A pod's
        patch marks it (annotations, gates) and does not count as a workload write:
        a pod's spec is fixed once it runs."""
        kind = None if resource.kind == "Pod" else resource.kind
        intent = Patch(resource, namespace, name, patch, subresource, patch_type, what)
        self.add(what or f"patch {resource.kind} {name}", intent, kind)

    def intend(self, intent: Intent, unseen: Unseen | None = None) -> None:
        """Plan an intent a pure decision returned, as its verb's method plans it; an
        apply decided against a version (``Apply.seen``) is noted in ``unseen``."""
        match intent:
            case Apply(resource, obj, None, None):
                self.apply(obj, resource)
            case Apply(resource, obj, None, Seen(before)):
                if unseen is None:
                    self.apply(obj, resource)
                else:
                    self._apply_noted(obj, resource, unseen, key_of(resource, obj), before)
            case Create(resource, obj):
                self.create(obj, resource)
            case Delete(resource, namespace, name, uid, grace, propagation):
                self.delete(
                    resource,
                    namespace,
                    name,
                    uid=uid,
                    grace_period_seconds=grace,
                    propagation_policy=propagation,
                )
            case Patch(resource, namespace, name, body, subresource, patch_type, what):
                self.patch(
                    resource, namespace, name, body, subresource=subresource, patch_type=patch_type, what=what
                )
            case Call(step, what):
                self.call(what, step)
            case Then():
                self.then()

    def call(self, what: str, step: Step) -> None:
        """Any other side effect (e.g. a MatrixOne admin call), in order with the writes."""
        self.add(what, Call(step, what))

    async def __call__(self, ctx: Context) -> None:
        for batch in self.batches():
            for planned in batch:
                ctx.log.debug("%s", planned.what)
            if len(batch) == 1:
                await self.run(batch[0].intent)
            else:
                await _all_or_none([functools.partial(self.run, planned.intent) for planned in batch])

    async def run(self, intent: Intent) -> object:
        """Carry out one intent with the plan's client."""
        client = self.client
        match intent:
            case Apply(resource, obj, unseen):
                answer = await client.apply(obj, resource=resource, force=True)
                if unseen is not None:
                    book, key, before = unseen
                    book.note(key, obj, before)
                return answer
            case Create(resource, obj):
                try:
                    return await client.create(resource, obj)
                except AlreadyExists:
                    return None
            case Delete(resource, namespace, name, uid, grace, propagation):
                return await client.delete(
                    resource,
                    name,
                    namespace or None,
                    uid=uid,
                    grace_period_seconds=grace,
                    propagation_policy=propagation,
                    missing_ok=True,
                )
            case Patch(resource, namespace, name, body, subresource, patch_type):
                try:
                    return await client.patch(
                        resource,
                        name,
                        body,
                        namespace or None,
                        patch_type=patch_type,
                        subresource=subresource,
                    )
                except NotFound:
                    return None
            case Call(step):
                return await step()
            case Then():
                return None

    def batches(self) -> list[list[Planned]]:
        """The steps in order: runs of ``together`` steps as one batch, runs of
        slow-start creates as batches of 1, 2, 4, ..."""
        batches: list[list[Planned]] = []
        size = 1
        for index, planned in enumerate(self.steps):
            current = batches[-1] if batches and index not in self._cuts else []
            last = current[-1] if current else None
            if last is not None and last.slow_start and planned.slow_start:
                if len(current) < size:
                    current.append(planned)
                else:
                    size *= 2
                    batches.append([planned])
            elif last is not None and last.together and planned.together:
                current.append(planned)
            else:
                size = 1
                batches.append([planned])
        return batches


async def _all_or_none(steps: Iterable[Step]) -> None:
    """Run ``steps`` at once; the first error cancels those still running and is raised
    as it is (callers tell a conflict from a refusal by its type)."""
    tasks = [asyncio.ensure_future(step()) for step in steps]
    try:
        await asyncio.gather(*tasks)
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise


async def delete_dependents_first(
    ctx: Context, client: Client, resource: Resource, dependents: Iterable[Mapping[str, Any]], recheck: float
) -> bool:
    """A finalizer whose owner may go only after ``dependents``: delete those not
    already going and look again after ``recheck``; True once none is left."""
    found = list(dependents)
    if not found:
        return True
    plan = Writes(client)
    for obj in found:
        if not is_deleting(obj):
            plan.delete(resource, ctx.namespace, name_of(obj), uid=uid_of(obj))
    await plan(ctx)
    ctx.wait(recheck, f"{resource.kind}s of {ctx.name} to go first")
    return False
