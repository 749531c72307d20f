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

The TN is asked in the round's read (``ask_locks``), only about a draining CN that
holds nothing else any more; the decision (``lock_step``) marks it and waits.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Mapping
from typing import Any

from mo_operator.api.common import PodSet
from mo_operator.kube.meta.objects import annotations_of
from mo_operator.matrixone import labels
from mo_operator.matrixone.admin import AdminError, MOAdmin, StoreNotFound
from mo_operator.matrixone.version import MOFeature, has_feature, parse_version, version_from

from ..framework.decision import Emit
from ..framework.meta import name_of
from ..framework.writes import Call
from . import pods as cnpods
from .observed import CNSetView, Draft, LockAnswer
from .stores import annotate

log = logging.getLogger(__name__)


def migrates_locks(pod: Mapping[str, Any], spec: PodSet) -> bool:
    """Whether the MatrixOne this pod runs moves lock tables before a CN stops."""
    annotated = annotations_of(pod).get(labels.SEMANTIC_VERSION)
    version = parse_version(str(annotated)) if annotated else version_from(spec.semantic_version, spec.image)
    return has_feature(version, MOFeature.LOCK_MIGRATION)


def marked(pod: Mapping[str, Any]) -> bool:
    """The TN lock service was told this CN restarts."""
    return labels.LOCK_RESTART in annotations_of(pod)


async def ask_locks(admin: MOAdmin, pod: Mapping[str, Any]) -> LockAnswer:
    """Whether the TN lets the CN in ``pod`` stop, and if not how many transactions remain."""
    uuid = cnpods.store_uuid(pod)
    try:
        if await admin.can_restart_cn(uuid):
            return LockAnswer(True)
        remain = await _remaining(admin, uuid)
    except StoreNotFound:
        return LockAnswer(True)
    except AdminError as e:
        log.info("cannot ask the lock service about draining CN %s: %s", name_of(pod), e)
        return LockAnswer(False, error=e)
    return LockAnswer(False, remain)


def lock_step(view: CNSetView, pod: Mapping[str, Any], out: Draft) -> tuple[bool, str]:
    """True once the TN lets the CN in ``pod`` stop; until then, mark it restarting
    (once), and say what it waits for (how many transactions remain)."""
    answer = view.locks.get(name_of(pod))
    if answer is None:
        return False, "waits to ask the TN lock service whether it may stop"
    if answer.moved:
        return True, ""
    if answer.error is not None:
        return False, f"cannot ask the TN lock service whether it may stop: {answer.error}"
    remain = answer.remain
    waiting = f"waits for the TN lock service to move its lock tables ({remain})"
    if marked(pod):
        out.log.append(f"CN {name_of(pod)} waits for its lock tables to move: {remain}")
        return False, waiting
    uuid = cnpods.store_uuid(pod)
    out.intents.append(
        Call(
            functools.partial(_mark, view.admin, uuid),
            f"mark CN {name_of(pod)} restarting in the lock service",
        )
    )
    out.intents.append(
        annotate(
            pod,
            {labels.LOCK_RESTART: "true"},
            f"record that CN {name_of(pod)} is restarting in the lock service",
        )
    )
    out.events.append(
        Emit(
            "Normal",
            "MigratingLockTables",
            f"CN {name_of(pod)} holds no session; the TN lock service moves its lock tables away ({remain})",
        )
    )
    return False, waiting


async def _remaining(admin: MOAdmin, uuid: str) -> str:
    """The remaining transactions, for people to read; a failure here blocks nothing."""
    try:
        count = await admin.remain_txn_count(uuid)
    except StoreNotFound:
        raise
    except AdminError as e:
        log.info("cannot read the remaining transactions of CN %s: %s", uuid, e)
        return "remaining transactions unknown"
    if count >= 0:
        return f"{count} transactions remain"
    # MatrixOne answers -1 for a CN with no transaction whose lock tables have not moved yet.
    return "no transaction remains; its lock tables are still moving"


async def _mark(admin: MOAdmin, uuid: str) -> None:
    if not await admin.set_restart_cn(uuid):
        raise AdminError(f"the TN lock service refused to mark CN {uuid} restarting")
