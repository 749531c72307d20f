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

What MatrixOne says of a draining CN's load (and its lock tables) is read with the
round (``asks_load``: only once ``minDelaySeconds`` passed and before the timeout);
the functions here decide from that reading, into the round's ``Draft``.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from mo_operator.api.base import dump
from mo_operator.api.cnset import CNSetSpec
from mo_operator.api.fields import parse_duration
from mo_operator.kube.meta.objects import namespace_of
from mo_operator.matrixone import labels
from mo_operator.matrixone.admin import CNLoad, StoreNotFound, WorkState

from ..framework import resources as r
from ..framework.decision import Emit, SetCondition
from ..framework.meta import is_deleting, name_of, uid_of
from ..framework.writes import Delete
from ..specs import pods as podutil
from . import pods as cnpods
from .locks import lock_step, marked, migrates_locks
from .observed import CNSetView, Draft
from .stores import annotate, gate_changes, gate_patch, store_call, store_condition, store_of

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


def start_drain(view: CNSetView, pod: Mapping[str, Any], out: Draft) -> None:
    """Mark the pod draining, then take its CN out of service. The mark goes first: a
    round cut short after it (the operator killed, HAKeeper not answering) leaves the
    rest to ``progress_drains``, which holds every marked CN Draining."""
    out.intents.append(
        annotate(
            pod,
            {labels.STORE_DRAINING_START: podutil.format_time(view.now)},
            f"start draining CN {name_of(pod)}",
        )
    )
    _set_draining(view, pod, out)
    _gate_draining(pod, view.now, out)


def _set_draining(view: CNSetView, pod: Mapping[str, Any], out: Draft) -> None:
    uuid = cnpods.store_uuid(pod)
    admin = view.admin
    out.intents.append(
        store_call(
            f"set CN {name_of(pod)} Draining", lambda: admin.set_cn_work_state(uuid, WorkState.DRAINING)
        )
    )


def _gate_draining(pod: Mapping[str, Any], now: float, out: Draft) -> None:
    condition = store_condition(pod, False, DRAINING, "the CN is draining before it leaves", now)
    out.intents.append(gate_patch(pod, condition, f"take CN {name_of(pod)} out of service"))


def _hold_draining(view: CNSetView, pod: Mapping[str, Any], out: Draft) -> None:
    """A marked CN whose store HAKeeper does not hold Draining is set Draining again,
    and one whose readiness gate does not say Draining is taken out of service again:
    else its sessions stay and it leaves only at the drain timeout."""
    store = store_of(view.state, pod)
    if store is not None and store.work_state is not WorkState.DRAINING:
        _set_draining(view, pod, out)
    if gate_changes(pod, False, DRAINING):
        _gate_draining(pod, view.now, out)


def undrain(view: CNSetView, pod: Mapping[str, Any], out: Draft) -> None:
    uuid, admin, cn_labels = cnpods.store_uuid(pod), view.admin, view.store_labels
    out.intents.append(
        store_call(
            f"put CN {name_of(pod)} back to work",
            lambda: admin.set_cn_work_state(uuid, WorkState.WORKING, cn_labels),
        )
    )
    out.intents.append(annotate(pod, {labels.STORE_DRAINING_START: None}, f"stop draining CN {name_of(pod)}"))
    out.events.append(
        Emit(
            "Normal", "DrainCancelled", f"CN {name_of(pod)} is back in service: the set grew while it drained"
        )
    )


def drain_limits(spec: CNSetSpec, default_timeout: float) -> tuple[float, float]:
    """``minDelaySeconds`` and ``storeDrainTimeout`` (or ``default_timeout``), in seconds."""
    scaling = spec.scaling_config
    given = scaling.min_delay_seconds if scaling is not None else None
    min_delay = float(DEFAULT_MIN_DRAIN_SECONDS if given is None else given)
    timeout_text = scaling.store_drain_timeout if scaling is not None else None
    timeout = parse_duration(timeout_text) if timeout_text else default_timeout
    return min_delay, timeout


def asks_load(pod: Mapping[str, Any], now: float, min_delay: float, timeout: float) -> bool:
    """Whether the drain of ``pod`` may be over: it drains, ``minDelaySeconds`` passed
    and its timeout has not (what it still holds then decides)."""
    started = podutil.parse_time(cnpods.draining_since(pod))
    return started is not None and not is_deleting(pod) and min_delay <= now - started < timeout


def progress_drains(view: CNSetView, undrained: Collection[str], out: Draft) -> bool:
    """Delete the draining CNs whose drain is over, and say in the ``Draining``
    condition what the others wait for; True while some still drain."""
    min_delay, timeout = drain_limits(view.spec, view.drain_timeout)
    waiting: list[str] = []
    for pod in view.pods:
        started = podutil.parse_time(cnpods.draining_since(pod))
        if started is None or is_deleting(pod) or name_of(pod) in undrained:
            continue
        elapsed = view.now - started
        done, why = False, f"drains for at least {int(min_delay)}s"
        if elapsed >= timeout:
            done, why = True, f"drain timed out after {int(elapsed)}s"
            out.events.append(
                Emit("Warning", "DrainTimeout", f"CN {name_of(pod)}: {why}, removing it with its sessions")
            )
        elif elapsed >= min_delay:
            done, why = _drained(view, pod, out)
        if done:
            out.intents.append(Delete(r.PODS, namespace_of(pod), name_of(pod), uid=uid_of(pod)))
            out.log.append(f"CN {name_of(pod)} {why}: removing it")
        else:
            _hold_draining(view, pod, out)
            deadline = podutil.format_time(started + timeout)
            waiting.append(f"{name_of(pod)} {why} (removed by {deadline} at the latest)")
    _report(view, waiting, out)
    return bool(waiting)


def _report(view: CNSetView, waiting: list[str], out: Draft) -> None:
    """The ``Draining`` condition: added with the first drain, False once none is left."""
    if waiting:
        out.conditions.append(SetCondition(DRAINING, True, DRAINING, "; ".join(waiting)))
    elif DRAINING in view.conditions:
        out.conditions.append(SetCondition(DRAINING, False, "NoDrain", "no CN is draining"))


def _drained(view: CNSetView, pod: Mapping[str, Any], out: Draft) -> tuple[bool, str]:
    """Whether the CN holds nothing any more: no session, pipeline or replica, and
    (MatrixOne 1.2 and later) no lock table the TN still needs moved; if not, what it
    waits for."""
    load = view.loads.get(name_of(pod))
    if isinstance(load, StoreNotFound):
        return True, "store already gone"
    if not isinstance(load, CNLoad):
        said = f": {load}" if load is not None else ""
        return False, f"waits, MatrixOne does not say what it still holds{said}"
    if not load.idle:
        left = f"{load.sessions} sessions, {load.pipelines} pipelines, {load.replicas} replicas"
        return False, f"waits for {left} to leave"
    if not migrates_locks(pod, view.spec):
        return True, "drained"
    moved, waiting = lock_step(view, pod, out)
    if not moved:
        return False, waiting
    if marked(pod):
        out.events.append(
            Emit("Normal", "LockTablesMigrated", f"CN {name_of(pod)}: its lock tables moved, removing it")
        )
    return True, "drained, lock tables moved"
