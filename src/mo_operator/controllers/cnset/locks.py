"""Moving a leaving CN's lock tables to other CNs before it stops (MatrixOne 1.2 and later).

A CN's lock service holds the lock tables of the transactions it runs; a CN
stopped while it still holds some leaves those transactions without their
locks. From MatrixOne 1.2 (upstream's ``LockMigration`` feature: 1.2.x and 2.x)
the TN's lock service can move them: once a draining CN holds no session, the
operator asks the TN whether the CN may stop (``CanRestartService``); if not, it
marks the CN restarting (``SetRestartService``, once, remembered in the pod
annotation ``matrixorigin.io/lock-restart`` as upstream does), and asks again
on later rounds until the TN says yes, which it does once the CN's remaining
transactions (``RemainTxnInService``) have ended and its lock tables moved. The
drain timeout still bounds the whole wait.

The version is the one the pod runs (its ``matrixorigin.io/semantic-version``
annotation), as upstream reads it: during a roll the old pods leave on their own
version's terms.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from mo_operator.api.common import PodSet
from mo_operator.kube.controller.actor import Context
from mo_operator.kube.meta.objects import annotations_of
from mo_operator.matrixone import labels
from mo_operator.matrixone.admin import AdminError, MOAdmin, StoreNotFound
from mo_operator.matrixone.version import MOFeature, has_feature, parse_version, version_from

from ..framework import resources as r
from ..framework.meta import name_of
from ..framework.writes import Writes
from . import pods as cnpods


def migrates_locks(pod: Mapping[str, Any], spec: PodSet) -> bool:
    """Whether the MatrixOne this pod runs moves lock tables before a CN stops."""
    annotated = annotations_of(pod).get(labels.SEMANTIC_VERSION)
    version = parse_version(str(annotated)) if annotated else version_from(spec.semantic_version, spec.image)
    return has_feature(version, MOFeature.LOCK_MIGRATION)


def marked(pod: Mapping[str, Any]) -> bool:
    """The TN lock service was told this CN restarts."""
    return labels.LOCK_RESTART in annotations_of(pod)


async def locks_moved(ctx: Context, admin: MOAdmin, pod: Mapping[str, Any], plan: Writes) -> tuple[bool, str]:
    """True once the TN lets the CN in ``pod`` stop; until then, mark it restarting
    (once), and say what it waits for (how many transactions remain)."""
    uuid = cnpods.store_uuid(pod)
    try:
        if await admin.can_restart_cn(uuid):
            return True, ""
        remain = await _remaining(ctx, admin, uuid)
    except StoreNotFound:
        return True, ""
    except AdminError as e:
        ctx.log.info("cannot ask the lock service about draining CN %s: %s", name_of(pod), e)
        return False, f"cannot ask the TN lock service whether it may stop: {e}"
    waiting = f"waits for the TN lock service to move its lock tables ({remain})"
    if marked(pod):
        ctx.log.info("CN %s waits for its lock tables to move: %s", name_of(pod), remain)
        return False, waiting
    plan.call(f"mark CN {name_of(pod)} restarting in the lock service", functools.partial(_mark, admin, uuid))
    plan.patch(
        r.PODS,
        pod["metadata"]["namespace"],
        name_of(pod),
        {"metadata": {"annotations": {labels.LOCK_RESTART: "true"}}},
        what=f"record that CN {name_of(pod)} is restarting in the lock service",
    )
    ctx.event(
        "Normal",
        "MigratingLockTables",
        f"CN {name_of(pod)} holds no session; the TN lock service moves its lock tables away ({remain})",
    )
    return False, waiting


async def _remaining(ctx: Context, admin: MOAdmin, uuid: str) -> str:
    """The remaining transactions, for people to read; a failure here blocks nothing."""
    try:
        count = await admin.remain_txn_count(uuid)
    except StoreNotFound:
        raise
    except AdminError as e:
        ctx.log.info("cannot read the remaining transactions of CN %s: %s", uuid, e)
        return "remaining transactions unknown"
    if count >= 0:
        return f"{count} transactions remain"
    # MatrixOne answers -1 for a CN with no transaction whose lock tables have not moved yet.
    return "no transaction remains; its lock tables are still moving"


async def _mark(admin: MOAdmin, uuid: str) -> None:
    if not await admin.set_restart_cn(uuid):
        raise AdminError(f"the TN lock service refused to mark CN {uuid} restarting")
