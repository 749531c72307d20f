"""A CN's store in HAKeeper, kept in step with its pod.

HAKeeper, not Kubernetes, says whether a CN serves: a registered CN is put to
work (with draining on it starts Draining), its labels are kept equal to the
set's ``cnLabels``, and its pod's readiness gate (``matrixorigin.io/cn-store``)
says True only while HAKeeper holds it Working, so Services route only to CNs
that take sessions.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any

from mo_operator.kube.actor import Context
from mo_operator.matrixone import labels
from mo_operator.matrixone.admin import (
    AdminError,
    CNStore,
    HAKeeperState,
    MOAdmin,
    WorkState,
    cn_labels_from_spec,
)

from ..common import pods as podutil
from ..common import resources as r
from ..common.meta import is_deleting, name_of
from ..common.writes import Writes
from . import pods as cnpods

Obj = dict[str, Any]


async def hakeeper_state(ctx: Context, admin: MOAdmin) -> HAKeeperState | None:
    try:
        return await admin.hakeeper_state()
    except AdminError as e:
        ctx.log.debug("HAKeeper does not answer: %s", e)
        return None


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


def sync_stores(
    ctx: Context,
    admin: MOAdmin,
    spec: Mapping[str, Any],
    pods: Sequence[Mapping[str, Any]],
    state: HAKeeperState | None,
    retiring: set[str],
    now: float,
    plan: Writes,
) -> bool:
    """Put registered CNs to work, sync their labels and their readiness gate.
    True while some CN is not yet registered and Working."""
    if state is None:
        return bool(pods)
    want_labels = cn_labels_from_spec(spec.get("cnLabels"))
    unsettled = False
    for pod in pods:
        if is_deleting(pod) or cnpods.draining_since(pod) is not None or name_of(pod) in retiring:
            continue
        store = store_of(state, pod)
        uuid = cnpods.store_uuid(pod)
        if store is None:
            unsettled = True
            condition = (False, "NotRegistered", "the CN has not registered in HAKeeper yet")
        elif store.work_state is not WorkState.WORKING:
            unsettled = True
            plan.call(
                f"put CN {name_of(pod)} to work",
                functools.partial(admin.set_cn_work_state, uuid, WorkState.WORKING, want_labels),
            )
            condition = (
                False,
                store.work_state.mo_name,
                f"the CN is {store.work_state.mo_name} in HAKeeper",
            )
        else:
            if dict(store.labels) != want_labels:
                plan.call(
                    f"set the labels of CN {name_of(pod)}",
                    functools.partial(admin.set_cn_labels, uuid, want_labels),
                )
            condition = (True, "Working", "the CN is registered and Working")
        current = podutil.condition(pod, labels.CN_STORE_READINESS)
        if (
            current is None
            or current.get("status") != str(condition[0])
            or current.get("reason") != condition[1]
        ):
            plan.patch(
                r.PODS,
                pod["metadata"]["namespace"],
                name_of(pod),
                {"status": {"conditions": [store_condition(pod, *condition, now)]}},
                subresource="status",
                patch_type="strategic",
                what=f"mark CN {name_of(pod)} {condition[1]}",
            )
        annotation = cnpods.cn_labels_json(spec)
        if (pod["metadata"].get("annotations") or {}).get(labels.CN_LABEL) != annotation:
            plan.patch(
                r.PODS,
                pod["metadata"]["namespace"],
                name_of(pod),
                {"metadata": {"annotations": {labels.CN_LABEL: annotation}}},
                what=f"record the labels of CN {name_of(pod)}",
            )
    return unsettled
