"""A CN's store in HAKeeper, kept in step with its pod.

HAKeeper, not Kubernetes, says whether a CN serves: a registered CN is put to
work (with draining on it starts Draining), its labels are kept equal to the
set's ``cnLabels``, and its pod's readiness gate (``matrixorigin.io/cn-store``)
says True only while HAKeeper holds it Working, so Services route only to CNs
that take sessions.

A pod annotated ``matrixorigin.io/store-cordon`` (upstream's name, any value)
is cordoned: its store is held Draining (the proxy moves its sessions away and
sends it none) and its pod is not ready, but it stays; removing the annotation
puts it back to work.

When the operator's own client cannot use HAKeeper's answers (``rpchealth``: a
frame it cannot decode, ``ErrNotSupported``), a CN's readiness gate follows its
pod's own readiness (its containers ready) instead: the operator's fault never
keeps a working CN out of its Services. While HAKeeper does not answer, or
answers "not yet", the gates wait, as upstream's do.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from mo_operator.kube.controller.actor import Context
from mo_operator.kube.meta.objects import annotations_of, namespace_of
from mo_operator.matrixone import labels
from mo_operator.matrixone.admin import (
    AdminError,
    CNStore,
    HAKeeperState,
    MOAdmin,
    WorkState,
)

from ..framework import resources as r
from ..framework.decision import SetCondition
from ..framework.meta import is_deleting, name_of
from ..framework.writes import Call, Patch, Step
from ..specs import pods as podutil
from ..steps.rpchealth import Patience, Trouble, judge
from . import pods as cnpods
from .observed import CNSetView, Draft

log = logging.getLogger(__name__)

Obj = dict[str, Any]
HAKEEPER = "HAKeeper"
"""The condition a set that calls MatrixOne gets once a call fails, saying how."""
FALLBACK = "PodReady"
"""The gate's reason while it follows the pod's own readiness (the client at fault)."""


async def hakeeper_state(
    ctx: Context, admin: MOAdmin, address: str, patience: Patience, now: float, limit: float
) -> tuple[HAKeeperState | None, Trouble | None]:
    """HAKeeper's view, or how asking failed (``patience``: since when it went unanswered)."""
    key = (ctx.namespace, ctx.name)
    try:
        state = await admin.hakeeper_state()
    except AdminError as e:
        ctx.log.debug("HAKeeper does not answer: %s", e)
        waited = patience.unanswered(key, now)
        return None, judge(e, f"HAKeeper at {address}", not_yet="NotReady", waited=waited, patience=limit)
    patience.answered(key)
    return state, None


def report_hakeeper(view: CNSetView, out: Draft) -> None:
    """The ``HAKeeper`` condition: added once a call fails, kept up to date after."""
    if view.trouble is not None:
        out.conditions.append(SetCondition(HAKEEPER, False, view.trouble.reason, view.trouble.message))
    elif HAKEEPER in view.conditions:
        out.conditions.append(SetCondition(HAKEEPER, True, "Answering", "HAKeeper answers"))


def best_effort(what: str, call: Callable[[], Awaitable[object]]) -> Step:
    """A MatrixOne call the next round makes again if it did not take (it decides from
    what HAKeeper then says): its failure is logged in one line, not raised, so the rest
    of the plan goes on and the set's conditions, not a retry loop, tell the story."""

    async def step() -> object:
        try:
            await call()
        except AdminError as e:
            log.info("%s: not done, the next round tries again: %s", what, e)
        return None

    return step


def store_call(what: str, call: Callable[[], Awaitable[object]]) -> Call:
    """``best_effort`` as the intent of a decision."""
    return Call(best_effort(what, call), what)


def store_of(state: HAKeeperState | None, pod: Mapping[str, Any]) -> CNStore | None:
    return state.cn(cnpods.store_uuid(pod)) if state is not None else None


def store_condition(pod: Mapping[str, Any], status: bool, reason: str, message: str, now: float) -> Obj:
    """The readiness-gate condition, its transition time moving only when its status does."""
    current = podutil.condition(pod, labels.CN_STORE_READINESS)
    value = str(status)
    since = (
        current.get("lastTransitionTime") if current is not None and current.get("status") == value else None
    )
    return {
        "type": labels.CN_STORE_READINESS,
        "status": value,
        "reason": reason,
        "message": message,
        "lastTransitionTime": since or podutil.format_time(now),
    }


def gate_patch(pod: Mapping[str, Any], condition: Obj, what: str) -> Patch:
    """Write the pod's readiness gate ``condition``."""
    return Patch(
        r.PODS,
        namespace_of(pod),
        name_of(pod),
        {"status": {"conditions": [condition]}},
        subresource="status",
        patch_type="strategic",
        what=what,
    )


def annotate(pod: Mapping[str, Any], annotations: Mapping[str, Any], what: str) -> Patch:
    """Merge ``annotations`` into the pod's (a None one removed)."""
    return Patch(
        r.PODS, namespace_of(pod), name_of(pod), {"metadata": {"annotations": annotations}}, what=what
    )


def cordoned(pod: Mapping[str, Any]) -> bool:
    """The pod carries ``matrixorigin.io/store-cordon``: its CN takes no new session."""
    return labels.STORE_CORDON in annotations_of(pod)


def sync_stores(view: CNSetView, retiring: set[str], out: Draft) -> bool:
    """Put registered CNs to work (cordoned ones to Draining), sync their labels and
    their readiness gate. True while some CN is not yet registered and Working."""
    if view.state is None and not view.client_fault:
        return bool(view.pods)
    unsettled = False
    for pod in view.pods:
        if is_deleting(pod) or cnpods.draining_since(pod) is not None or name_of(pod) in retiring:
            continue
        condition, settled = _sync_store(view, pod, out) if view.state is not None else _fallback(pod)
        unsettled |= not settled
        if gate_changes(pod, *condition[:2]):
            gate = store_condition(pod, *condition, view.now)
            out.intents.append(gate_patch(pod, gate, f"mark CN {name_of(pod)} {condition[1]}"))
        annotation = view.cn_labels_annotation
        if annotations_of(pod).get(labels.CN_LABEL) != annotation:
            out.intents.append(
                annotate(pod, {labels.CN_LABEL: annotation}, f"record the labels of CN {name_of(pod)}")
            )
    return unsettled


def gate_changes(pod: Mapping[str, Any], status: bool, reason: str) -> bool:
    """Whether the pod's readiness gate must be written to say ``status`` for ``reason``.

    A gate condition the pod does not carry yet already holds it not ready, so a
    new CN's way to work (not registered, then Draining until it is put to work)
    writes nothing: its first gate write is ``Working``. Once the pod carries the
    condition, every change of status or reason is written."""
    current = podutil.condition(pod, labels.CN_STORE_READINESS)
    if current is None:
        return status
    return current.get("status") != str(status) or current.get("reason") != reason


def _fallback(pod: Mapping[str, Any]) -> tuple[tuple[bool, str, str], bool]:
    """The gate while the operator's client cannot use HAKeeper's answers: the pod's own
    readiness (its ``ContainersReady``), as a CN with no readiness gate would be; kept
    as it is where the kubelet has not said."""
    if cordoned(pod):
        cordon = f"the CN is cordoned ({labels.STORE_CORDON}): it takes no new session"
        return (False, "Cordoned", cordon), True
    containers = podutil.condition(pod, "ContainersReady")
    if containers is None:
        gate = podutil.condition(pod, labels.CN_STORE_READINESS) or {}
        return (gate.get("status") == "True", str(gate.get("reason") or FALLBACK), ""), True
    message = "the operator cannot use HAKeeper's answers: the gate follows the pod's own readiness"
    return (containers.get("status") == "True", FALLBACK, message), True


def _sync_store(view: CNSetView, pod: Mapping[str, Any], out: Draft) -> tuple[tuple[bool, str, str], bool]:
    """The readiness the pod's store warrants, after asking HAKeeper for the work
    state it should have; and whether the store is settled."""
    store = store_of(view.state, pod)
    uuid = cnpods.store_uuid(pod)
    want_labels = view.store_labels
    admin = view.admin
    if store is None:
        return (False, "NotRegistered", "the CN has not registered in HAKeeper yet"), False
    if cordoned(pod):
        if store.work_state is not WorkState.DRAINING:
            call = functools.partial(admin.set_cn_work_state, uuid, WorkState.DRAINING)
            out.intents.append(store_call(f"cordon CN {name_of(pod)}", call))
        return (
            False,
            "Cordoned",
            f"the CN is cordoned ({labels.STORE_CORDON}): it takes no new session",
        ), True
    if store.work_state is not WorkState.WORKING:
        call = functools.partial(admin.set_cn_work_state, uuid, WorkState.WORKING, want_labels)
        out.intents.append(store_call(f"put CN {name_of(pod)} to work", call))
        return (False, store.work_state.mo_name, f"the CN is {store.work_state.mo_name} in HAKeeper"), False
    if dict(store.labels) != want_labels:
        call = functools.partial(admin.set_cn_labels, uuid, want_labels)
        out.intents.append(store_call(f"set the labels of CN {name_of(pod)}", call))
    return (True, "Working", "the CN is registered and Working"), True
