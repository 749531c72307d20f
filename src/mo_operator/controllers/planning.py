"""What the operator would do next for one MatrixOneCluster, and why, writing nothing
(``mo-operator plan``).

The operator itself is built (``Operator``: the same caches, Env and actors) over a
client whose writes never reach the server: a write hook answers every write itself.
Its informers list and watch the cluster's namespace only; no controller runs. Each
object (the cluster, then the sets it owns) then goes once through its controller's
reconciler, as a worker would take it, with the framework's writes, Events and
status window replaced by recorders:

- the plan ``observe`` returns is not run; its steps are played against the hook,
  which records each write (verb, object, the fields it would change) and answers
  it without sending;
- a write an actor makes itself while observing or finalizing (a finalizer, a
  takeover) is refused by the hook (``WouldWrite``) and reported as what it would
  have done: the reconcile stops there, as the rest is decided after it;
- the finalizer and status writes of the framework are recorded: the status the
  reconcile would write is compared with the one the object holds.

MatrixOne is asked what the operator asks (HAKeeper's state, a CN's load) with a
short deadline; every call that tells MatrixOne to do something is refused in the
same way. When MatrixOne cannot be asked (``ask_matrixone=False``, or it does not
answer: from outside the Kubernetes cluster its pods are usually unreachable), the
actors decide as the operator does when MatrixOne does not answer, and the report
says so.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from mo_operator.kube.client.client import ApiClient, Send, WriteCall
from mo_operator.kube.controller.actor import Action, Actor, ActorReconciler, Context
from mo_operator.kube.controller.controller import Request
from mo_operator.kube.controller.outcome import Wait, reconciling
from mo_operator.kube.controller.status_policy import StatusWindow
from mo_operator.kube.meta.objects import meta_of, status_of
from mo_operator.matrixone.admin import (
    AdminError,
    CNLoad,
    HAKeeperState,
    MOAdmin,
    MOAdminProvider,
    Unreachable,
    WorkState,
)
from mo_operator.settings import LeaderElection, OperatorConfig, ProbeSettings, Settings

from .framework import resources as r
from .framework.desired import APPLIED_HASH
from .framework.env import Caches
from .framework.writes import Writes
from .operator import Operator

Obj = dict[str, Any]

MATRIXONE_DEADLINE = 3.0
"""Seconds one question to MatrixOne may take before the plan assumes no answer."""
SYNC_TIMEOUT = 60.0
"""Seconds the caches of the namespace may take to list."""
OWNED_KINDS = (r.LOGSETS, r.DNSETS, r.TNSETS, r.CNSETS, r.PROXYSETS, r.WEBUIS, r.CNPOOLS)
"""The kinds a cluster owns, in the order they are planned (the order they start in)."""
MAX_CHANGES = 8
"""Changed fields listed per write."""


class WouldWrite(Exception):
    """A write refused by the plan's client: what it would have sent."""

    def __init__(self, what: str) -> None:
        super().__init__(what)
        self.what = what


# ------------------------------------------------------------------ the report


@dataclass(frozen=True)
class Step:
    what: str
    batch: int
    """Steps of one batch go out together."""
    changes: tuple[str, ...] = ()
    """The fields it would change, ``path: before -> after``."""


@dataclass(frozen=True)
class ConditionChange:
    type: str
    before: Mapping[str, str] | None
    """status, reason, message; None: the condition is new."""
    after: Mapping[str, str] | None
    """None: the condition would be removed."""


@dataclass
class ObjectPlan:
    kind: str
    name: str
    generation: int
    steps: list[Step] = field(default_factory=list)
    direct: list[str] = field(default_factory=list)
    """Writes made outside the plan: the finalizer, one an actor makes itself."""
    observed_generation: tuple[int | None, int] | None = None
    """(before, after) when the reconcile would move ``status.observedGeneration``."""
    conditions: list[ConditionChange] = field(default_factory=list)
    other_status: list[str] = field(default_factory=list)
    """Top-level status fields (besides conditions) the reconcile would change."""
    events: list[tuple[str, str, str]] = field(default_factory=list)
    requeue_after: float | None = None
    requeue_reason: str = ""
    """Why it looks again (``Wait``: for what; ``Requeue``: which poll or timer)."""
    error: str | None = None
    note: str | None = None
    """Why nothing was planned though something may be due (paused, being deleted)."""

    @property
    def settled(self) -> bool:
        """Nothing to write, nothing to announce."""
        return not (
            self.steps
            or self.direct
            or self.observed_generation
            or self.conditions
            or self.other_status
            or self.events
            or self.error
        )

    def as_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "name": self.name,
            "generation": self.generation,
            "settled": self.settled,
            "steps": [{"what": s.what, "batch": s.batch, "changes": list(s.changes)} for s in self.steps],
            "directWrites": list(self.direct),
            "status": {
                "observedGeneration": (
                    {"before": self.observed_generation[0], "after": self.observed_generation[1]}
                    if self.observed_generation
                    else None
                ),
                "conditions": [
                    {"type": c.type, "before": c.before, "after": c.after} for c in self.conditions
                ],
                "otherFields": list(self.other_status),
            },
            "events": [{"type": t, "reason": reason, "message": m} for t, reason, m in self.events],
            "requeueAfterSeconds": self.requeue_after,
            "requeueReason": self.requeue_reason,
            "error": self.error,
            "note": self.note,
        }


@dataclass
class ClusterPlan:
    namespace: str
    name: str
    matrixone: str
    """``asked``, or why MatrixOne was not (the plan then assumes no answer)."""
    objects: list[ObjectPlan] = field(default_factory=list)

    @property
    def settled(self) -> bool:
        return all(o.settled for o in self.objects)

    def as_json(self) -> dict[str, Any]:
        return {
            "namespace": self.namespace,
            "name": self.name,
            "settled": self.settled,
            "matrixone": self.matrixone,
            "objects": [o.as_json() for o in self.objects],
        }


class ClusterNotFound(Exception):
    """No MatrixOneCluster of that name in the namespace."""


class CachesNotSynced(Exception):
    """What the operator reads could not be listed: no plan can be made."""


# --------------------------------------------------------- what refuses writes


class Refusal:
    """The write hook of the plan's client: no write is ever sent. While observing it
    raises ``WouldWrite``; while a plan's steps are played it records each write and
    answers it with what was asked (``playing``)."""

    def __init__(self) -> None:
        self.caches: Caches | None = None
        """Where the object a write changes is looked up, to say which fields it changes."""
        self.playing: list[tuple[str, tuple[str, ...]]] | None = None

    async def __call__(self, call: WriteCall, send: Send) -> Obj:
        what = describe_call(call)
        if self.playing is None:
            raise WouldWrite(what)
        self.playing.append((what, changes(call, self._cached(call))))
        body = call.body if isinstance(call.body, Mapping) else {}
        return copy.deepcopy(dict(body))

    def _cached(self, call: WriteCall) -> Mapping[str, Any] | None:
        if self.caches is None or not call.name:
            return None
        try:
            return self.caches.get(call.resource, call.namespace or "", call.name)
        except KeyError:  # a kind the operator does not cache
            return None


def describe_call(call: WriteCall) -> str:
    name = call.name or (call.body or {}).get("metadata", {}).get("name") or ""
    target = f"{call.resource.kind} {name}".strip()
    if call.subresource:
        target += f" ({call.subresource})"
    if call.verb == "patch" and isinstance(call.body, Mapping):
        finalizers = (call.body.get("metadata") or {}).get("finalizers")
        if finalizers is not None and set(call.body) == {"metadata"}:
            return f"set the finalizers of {target} to {list(finalizers or [])}"
    return f"{call.verb} {target}"


def changes(call: WriteCall, cached: Mapping[str, Any] | None) -> tuple[str, ...]:
    """The fields ``call`` sets to another value than ``cached`` holds."""
    if call.verb == "delete" or not isinstance(call.body, Mapping):
        return ()
    if cached is None and call.verb in ("create", "apply"):
        return ("new object",)
    found = _diff(call.body, cached or {}, "")
    if len(found) > MAX_CHANGES:
        found = [*found[:MAX_CHANGES], f"and {len(found) - MAX_CHANGES} more"]
    return tuple(found)


_SKIPPED = frozenset(
    {"apiVersion", "kind", "metadata.name", "metadata.namespace", "metadata.resourceVersion"}
)


def _diff(want: Any, have: Any, path: str) -> list[str]:
    if isinstance(want, Mapping):
        have_map = have if isinstance(have, Mapping) else {}
        out: list[str] = []
        for key, value in want.items():
            sub = f"{path}.{key}" if path else str(key)
            if sub in _SKIPPED or key == APPLIED_HASH:
                continue
            out += _diff(value, have_map.get(key), sub)
        return out
    if _plain(want) == _plain(have):
        return []
    return [f"{path}: {_short(have)} -> {_short(want)}"]


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def _short(value: Any, limit: int = 60) -> str:
    text = "(none)" if value is None else str(_plain(value))
    return text if len(text) <= limit else text[: limit - 3] + "..."


# ------------------------------------------------------------ MatrixOne, asked


class AskedMatrixOne:
    """The admin provider the actors get: questions go to ``provider`` within
    ``deadline`` (none when it is None), instructions are refused like writes."""

    def __init__(self, provider: MOAdminProvider | None, deadline: float, refusal: Refusal) -> None:
        self.provider = provider
        self.deadline = deadline
        self.refusal = refusal
        self.asked = 0
        self.unanswered: list[str] = []
        self.silent: set[str] = set()
        """Addresses that did not answer: not asked again, so a plan waits once per cluster."""

    def admin(self, discovery_address: str) -> MOAdmin:
        return _AskedAdmin(self, discovery_address)

    @property
    def summary(self) -> str:
        if self.provider is None:
            return "not asked (--no-matrixone): the plan assumes MatrixOne does not answer"
        if self.unanswered:
            return (
                f"did not answer ({self.unanswered[0]}): the plan assumes no answer, "
                "as the operator decides when MatrixOne does not answer"
            )
        return "asked" if self.asked else "not needed"


class _AskedAdmin:
    def __init__(self, parent: AskedMatrixOne, address: str) -> None:
        self.parent = parent
        self.address = address

    async def _ask(self, what: str, question: Any) -> Any:
        parent = self.parent
        if parent.provider is None:
            raise Unreachable(f"{what}: MatrixOne is not asked (--no-matrixone)")
        if self.address in parent.silent:
            raise Unreachable(f"{what}: {self.address} did not answer the plan's first question")
        parent.asked += 1
        admin = parent.provider.admin(self.address)
        try:
            async with asyncio.timeout(parent.deadline):
                return await question(admin)
        except (AdminError, TimeoutError, OSError) as e:
            parent.silent.add(self.address)
            why = str(e) if str(e) else f"no answer within {parent.deadline:g}s"
            parent.unanswered.append(f"{what} at {self.address}: {why}")
            raise Unreachable(f"{what}: {why}") from e

    def _instruct(self, what: str) -> None:
        playing = self.parent.refusal.playing
        if playing is None:
            raise WouldWrite(f"tell MatrixOne to {what}")
        playing.append((f"tell MatrixOne to {what}", ()))

    async def hakeeper_state(self) -> HAKeeperState:
        state: HAKeeperState = await self._ask("HAKeeper state", lambda a: a.hakeeper_state())
        return state

    async def cn_load(self, uuid: str) -> CNLoad:
        load: CNLoad = await self._ask(f"load of CN {uuid}", lambda a: a.cn_load(uuid))
        return load

    async def can_restart_cn(self, uuid: str) -> bool:
        return bool(await self._ask(f"whether CN {uuid} may restart", lambda a: a.can_restart_cn(uuid)))

    async def remain_txn_count(self, uuid: str) -> int:
        return int(await self._ask(f"transactions left on CN {uuid}", lambda a: a.remain_txn_count(uuid)))

    async def set_cn_work_state(
        self, uuid: str, state: WorkState, labels: Mapping[str, tuple[str, ...]] | None = None
    ) -> None:
        self._instruct(f"set CN {uuid} {state.name.lower()}")

    async def set_cn_labels(self, uuid: str, labels: Mapping[str, tuple[str, ...]]) -> None:
        self._instruct(f"set the labels of CN {uuid}")

    async def delete_cn_store(self, uuid: str) -> None:
        self._instruct(f"forget CN {uuid}")

    async def set_restart_cn(self, uuid: str) -> bool:
        self._instruct(f"mark CN {uuid} restarting")
        return True


# ---------------------------------------------------- the framework, recorded


class _Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[str, str, str]] = []

    def event(self, obj: Mapping[str, Any], type: str, reason: str, message: str) -> None:
        self.events.append((type, reason, message))


class _Writer:
    """The framework's own writes on the object: the finalizer and the status."""

    def __init__(self) -> None:
        self.patches: list[Obj] = []
        self.status: Obj | None = None

    async def merge_patch(self, namespace: str, name: str, patch: Obj) -> Obj:
        self.patches.append(patch)
        return {}

    async def patch_status(self, namespace: str, name: str, status: Obj) -> Obj:
        self.status = status
        return {}


class _NotRun:
    """What the framework runs instead of the plan ``observe`` returned: nothing, under
    the plan's description (the ``Synced`` message the reconcile would write)."""

    def __init__(self, description: str) -> None:
        self.description = description

    async def __call__(self, ctx: Context) -> None:
        return None


class _DryActor:
    """An actor whose plan is kept, not run, and whose own writes are reported."""

    def __init__(self, actor: Actor) -> None:
        self.actor = actor
        self.action: Action | None = None
        self.direct: list[str] = []

    async def observe(self, ctx: Context) -> Action | None:
        try:
            self.action = await self.actor.observe(ctx)
        except WouldWrite as e:
            self.direct.append(f"{e.what} (written while observing; the rest is decided after it)")
            return _NotRun(e.what)
        if self.action is None:
            return None
        return _NotRun(str(getattr(self.action, "description", "") or "applying changes"))

    async def finalize(self, ctx: Context) -> bool:
        try:
            return await self.actor.finalize(ctx)
        except WouldWrite as e:
            self.direct.append(f"{e.what} (while finalizing)")
            return False


# ------------------------------------------------------------------ planning


async def plan_cluster(
    client: ApiClient,
    namespace: str,
    name: str,
    *,
    matrixone: MOAdminProvider | None,
    deadline: float = MATRIXONE_DEADLINE,
) -> ClusterPlan:
    """The plan of cluster ``name`` and of each set it owns. ``client`` only reads:
    every write it is asked for is answered by the plan's hook. ``matrixone``: how
    MatrixOne is reached (None: it is not asked)."""
    refusal = Refusal()
    asked = AskedMatrixOne(matrixone, deadline, refusal)
    config = OperatorConfig(
        settings=Settings(namespaces=(namespace,)),
        leader=LeaderElection(enabled=False),
        probes=ProbeSettings(),
    )
    operator = Operator(client.with_write_hook(refusal), asked, config)
    refusal.caches = operator.caches
    await operator.informers.start()
    try:
        if not await operator.informers.wait_synced(SYNC_TIMEOUT):
            pending = sorted(i.name for i in operator.informers.informers if not i.has_synced())
            raise CachesNotSynced(
                f"could not list {', '.join(pending)} within {SYNC_TIMEOUT:g}s "
                "(is the API server up, and may this kubeconfig's user list and watch them?)"
            )
        cluster = operator.caches.get(r.MATRIXONE_CLUSTERS, namespace, name)
        if cluster is None:
            raise ClusterNotFound(f"MatrixOneCluster {namespace}/{name} not found")
        reconcilers = {
            c.reconcile.kind: c.reconcile
            for c in operator.controllers
            if isinstance(c.reconcile, ActorReconciler)
        }
        result = ClusterPlan(namespace, name, "")
        for kind, obj_name in [("MatrixOneCluster", name), *owned_by(operator, cluster)]:
            result.objects.append(await plan_object(reconcilers[kind], refusal, namespace, obj_name))
        result.matrixone = asked.summary
        return result
    finally:
        await operator.informers.stop()
        with contextlib.suppress(Exception):
            await operator.recorder.close(timeout=1.0)


def owned_by(operator: Operator, cluster: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(kind, name) of each object of ``OWNED_KINDS`` whose owner is ``cluster``."""
    uid, namespace = meta_of(cluster).uid, meta_of(cluster).namespace
    found: list[tuple[str, str]] = []
    for res in OWNED_KINDS:
        for obj in sorted(operator.caches.list(res, namespace), key=lambda o: str(o["metadata"]["name"])):
            if any(ref.get("uid") == uid for ref in obj["metadata"].get("ownerReferences") or ()):
                found.append((res.kind, str(obj["metadata"]["name"])))
    return found


async def plan_object(reconciler: ActorReconciler, refusal: Refusal, namespace: str, name: str) -> ObjectPlan:
    """One reconcile of the object by a copy of its reconciler whose writes, Events and
    plan are recorded."""
    cached = reconciler.get(Request(namespace, name))
    if cached is None:  # deleted since the list
        return ObjectPlan(reconciler.kind, name, 0, note="gone: nothing to do")
    dry = copy.copy(reconciler)
    actor = _DryActor(reconciler.actor)
    writer, recorder = _Writer(), _Recorder()
    dry.actor, dry.writer, dry.recorder = actor, writer, recorder
    dry.status_window = StatusWindow(window=0)
    dry._written, dry._failing, dry._held = {}, {}, set()
    found = ObjectPlan(reconciler.kind, name, meta_of(cached).generation)
    meta = meta_of(cached)
    if meta.annotations.get(reconciler.pause_annotation, "") in ("true", "True", "1"):
        # planned as if resumed: what a person pausing to read the plan wants to know
        dry.pause_annotation = ""
        found.note = f"paused ({reconciler.pause_annotation}): this is what it would do once resumed"
    elif cached["metadata"].get("deletionTimestamp"):
        found.note = "being deleted: the plan is its finalizer's"
    with reconciling():
        try:
            result = await dry(Request(namespace, name))
        except Exception as e:
            found.error = f"{type(e).__name__}: {e}"
            result = None
    found.requeue_after = result.requeue_after if result is not None else None
    later = result.later if result is not None else None
    found.requeue_reason = (
        f"{'waits for' if isinstance(later, Wait) else 'for'} {later.reason}"
        if later and later.reason
        else ""
    )
    for patch in writer.patches:
        finalizers = (patch.get("metadata") or {}).get("finalizers")
        found.direct.append(f"set the finalizers of {reconciler.kind} {name} to {list(finalizers or [])}")
    found.direct += actor.direct
    found.events = recorder.events
    if writer.status is not None:
        _status_changes(found, status_of(cached), writer.status)
    if actor.action is not None:
        found.steps = await _play(actor.action, refusal)
    return found


def _status_changes(found: ObjectPlan, before: Mapping[str, Any], after: Mapping[str, Any]) -> None:
    old_generation = before.get("observedGeneration")
    if old_generation != after.get("observedGeneration"):
        found.observed_generation = (old_generation, int(after.get("observedGeneration") or 0))
    old = {str(c.get("type")): c for c in before.get("conditions") or ()}
    new = {str(c.get("type")): c for c in after.get("conditions") or ()}
    for ctype in [*new, *(t for t in old if t not in new)]:
        was, now = _condition(old.get(ctype)), _condition(new.get(ctype))
        if was != now:
            found.conditions.append(ConditionChange(ctype, was, now))
    for key in sorted(set(before) | set(after)):
        if key not in ("conditions", "observedGeneration") and _plain(before.get(key)) != _plain(
            after.get(key)
        ):
            found.other_status.append(key)


def _condition(condition: Mapping[str, Any] | None) -> Mapping[str, str] | None:
    if condition is None:
        return None
    return {k: str(condition.get(k) or "") for k in ("status", "reason", "message")}


async def _play(action: Action, refusal: Refusal) -> list[Step]:
    """The plan's steps in order, with their batches and the writes each would make."""
    if not isinstance(action, Writes):
        return [Step(str(getattr(action, "description", "") or "apply changes"), 1)]
    steps: list[Step] = []
    for number, batch in enumerate(action.batches(), start=1):
        for planned in batch:
            refusal.playing = []
            try:
                await action.run(planned.intent)
            except Exception as e:
                refusal.playing.append((f"(not previewed: {type(e).__name__}: {e})", ()))
            finally:
                made, refusal.playing = refusal.playing, None
            fields = tuple(f"{what}: {c}" if len(made) > 1 else c for what, cs in made for c in cs)
            steps.append(Step(planned.what, number, fields))
    return steps
