"""Draining CNs through HAKeeper before they leave, and taking them back.

A CN leaving (scale-in, roll, ``podsToDelete``) is marked Draining in
HAKeeper: the proxy moves its sessions away and sends it no new ones. It is
deleted once it holds no session, pipeline or replica, after at least
``minDelaySeconds`` (so the Draining state reached the whole cluster), or at
``storeDrainTimeout``. On MatrixOne 1.2 and later it also waits for the TN to
move its lock tables away (``locks.py``). A CN still draining when the set
grows again is put back to work instead of a new one being started.

The set's ``Draining`` condition says, per draining CN, what its drain waits
for: its sessions, pipelines and replicas, the TN lock service, or MatrixOne,
when it does not answer; then the drain ends by its timeout. The calls that
mark a CN Draining or Working are made again by the next round until HAKeeper
shows them taken (``stores.best_effort``).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from mo_operator.api.base import dump
from mo_operator.api.cnset import CNSetSpec
from mo_operator.api.fields import parse_duration
from mo_operator.kube.controller.actor import Context
from mo_operator.matrixone import labels
from mo_operator.matrixone.admin import (
    AdminError,
    MOAdmin,
    StoreNotFound,
    WorkState,
)

from ..framework import resources as r
from ..framework.meta import is_deleting, name_of
from ..framework.writes import Writes
from ..specs import pods as podutil
from . import pods as cnpods
from .locks import locks_moved, marked, migrates_locks
from .observed import Observed
from .stores import best_effort, gate_changes, store_condition, store_of

DEFAULT_MIN_DRAIN_SECONDS = 15
DRAINING = "Draining"
"""The readiness gate's reason while the CN drains, and the set's condition while some CN drains."""


def drain_enabled(spec: CNSetSpec) -> bool:
    return spec.scaling_config is None or spec.scaling_config.store_drain_enabled is not False


def with_drain_default(spec: CNSetSpec) -> dict[str, Any]:
    """The spec config is rendered from, as JSON: draining on unless turned off (a CN
    then starts Draining and works once the operator says so)."""
    rendered = dump(spec)
    given = spec.scaling_config
    if given is None or given.store_drain_enabled is None:
        scaling = dump(given) if given is not None else {}
        rendered["scalingConfig"] = {**scaling, "storeDrainEnabled": True}
    return rendered


def start_drain(ctx: Context, admin: MOAdmin, pod: Mapping[str, Any], now: float, plan: Writes) -> None:
    """Mark the pod draining, then take its CN out of service. The mark goes first: a
    round cut short after it (the operator killed, HAKeeper not answering) leaves the
    rest to ``progress_drains``, which holds every marked CN Draining."""
    plan.patch(
        r.PODS,
        pod["metadata"]["namespace"],
        name_of(pod),
        {"metadata": {"annotations": {labels.STORE_DRAINING_START: podutil.format_time(now)}}},
        what=f"start draining CN {name_of(pod)}",
    )
    _set_draining(ctx, admin, pod, plan)
    _gate_draining(pod, now, plan)


def _set_draining(ctx: Context, admin: MOAdmin, pod: Mapping[str, Any], plan: Writes) -> None:
    uuid = cnpods.store_uuid(pod)
    what = f"set CN {name_of(pod)} Draining"
    plan.call(what, best_effort(ctx, what, lambda: admin.set_cn_work_state(uuid, WorkState.DRAINING)))


def _gate_draining(pod: Mapping[str, Any], now: float, plan: Writes) -> None:
    plan.patch(
        r.PODS,
        pod["metadata"]["namespace"],
        name_of(pod),
        {
            "status": {
                "conditions": [
                    store_condition(pod, False, DRAINING, "the CN is draining before it leaves", now)
                ]
            }
        },
        subresource="status",
        patch_type="strategic",
        what=f"take CN {name_of(pod)} out of service",
    )


def _hold_draining(seen: Observed, pod: Mapping[str, Any]) -> None:
    """A marked CN whose store HAKeeper does not hold Draining is set Draining again,
    and one whose readiness gate does not say Draining is taken out of service again:
    else its sessions stay and it leaves only at the drain timeout."""
    store = store_of(seen.state, pod)
    if store is not None and store.work_state is not WorkState.DRAINING:
        _set_draining(seen.ctx, seen.admin, pod, seen.plan)
    if gate_changes(pod, False, DRAINING):
        _gate_draining(pod, seen.now, seen.plan)


def undrain(
    ctx: Context,
    admin: MOAdmin,
    pod: Mapping[str, Any],
    cn_labels: Mapping[str, tuple[str, ...]],
    plan: Writes,
) -> None:
    uuid = cnpods.store_uuid(pod)
    what = f"put CN {name_of(pod)} back to work"
    plan.call(
        what, best_effort(ctx, what, lambda: admin.set_cn_work_state(uuid, WorkState.WORKING, cn_labels))
    )
    plan.patch(
        r.PODS,
        pod["metadata"]["namespace"],
        name_of(pod),
        {"metadata": {"annotations": {labels.STORE_DRAINING_START: None}}},
        what=f"stop draining CN {name_of(pod)}",
    )
    ctx.event(
        "Normal", "DrainCancelled", f"CN {name_of(pod)} is back in service: the set grew while it drained"
    )


def drain_limits(spec: CNSetSpec, default_timeout: float) -> tuple[float, float]:
    """``minDelaySeconds`` and ``storeDrainTimeout`` (or ``default_timeout``), in seconds."""
    scaling = spec.scaling_config
    given = scaling.min_delay_seconds if scaling is not None else None
    min_delay = float(DEFAULT_MIN_DRAIN_SECONDS if given is None else given)
    timeout_text = scaling.store_drain_timeout if scaling is not None else None
    timeout = parse_duration(timeout_text) if timeout_text else default_timeout
    return min_delay, timeout


async def progress_drains(seen: Observed, undrained: Collection[str]) -> bool:
    """Delete the draining CNs whose drain is over, and say in the ``Draining``
    condition what the others wait for; True while some still drain."""
    min_delay, timeout = drain_limits(seen.spec, seen.drain_timeout)
    waiting: list[str] = []
    for pod in seen.pods:
        started = podutil.parse_time(cnpods.draining_since(pod))
        if started is None or is_deleting(pod) or name_of(pod) in undrained:
            continue
        elapsed = seen.now - started
        done, why = False, f"drains for at least {int(min_delay)}s"
        if elapsed >= timeout:
            done, why = True, f"drain timed out after {int(elapsed)}s"
            seen.ctx.event(
                "Warning", "DrainTimeout", f"CN {name_of(pod)}: {why}, removing it with its sessions"
            )
        elif elapsed >= min_delay:
            done, why = await _drained(seen, pod)
        if done:
            seen.plan.delete(r.PODS, pod["metadata"]["namespace"], name_of(pod), uid=pod["metadata"]["uid"])
            seen.ctx.log.info("CN %s %s: removing it", name_of(pod), why)
        else:
            _hold_draining(seen, pod)
            deadline = podutil.format_time(started + timeout)
            waiting.append(f"{name_of(pod)} {why} (removed by {deadline} at the latest)")
    _report(seen.ctx, waiting)
    return bool(waiting)


def _report(ctx: Context, waiting: list[str]) -> None:
    """The ``Draining`` condition: added with the first drain, False once none is left."""
    if waiting:
        ctx.set_condition(DRAINING, True, DRAINING, "; ".join(waiting))
    elif any(c.get("type") == DRAINING for c in ctx.status.get("conditions") or ()):
        ctx.set_condition(DRAINING, False, "NoDrain", "no CN is draining")


async def _drained(seen: Observed, pod: Mapping[str, Any]) -> tuple[bool, str]:
    """Whether the CN holds nothing any more: no session, pipeline or replica, and
    (MatrixOne 1.2 and later) no lock table the TN still needs moved; if not, what it
    waits for."""
    try:
        load = await seen.admin.cn_load(cnpods.store_uuid(pod))
    except StoreNotFound:
        return True, "store already gone"
    except AdminError as e:
        seen.ctx.log.debug("cannot read the load of draining CN %s: %s", name_of(pod), e)
        return False, f"waits, MatrixOne does not say what it still holds: {e}"
    if not load.idle:
        left = f"{load.sessions} sessions, {load.pipelines} pipelines, {load.replicas} replicas"
        return False, f"waits for {left} to leave"
    if not migrates_locks(pod, seen.spec):
        return True, "drained"
    moved, waiting = await locks_moved(seen.ctx, seen.admin, pod, seen.plan)
    if not moved:
        return False, waiting
    if marked(pod):
        seen.ctx.event(
            "Normal", "LockTablesMigrated", f"CN {name_of(pod)}: its lock tables moved, removing it"
        )
    return True, "drained, lock tables moved"
