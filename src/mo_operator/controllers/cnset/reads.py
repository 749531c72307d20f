"""What a CNSet round asks MatrixOne about its CNs, each question once: their loads,
then, for the drained ones whose lock tables decide, the TN lock service."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from mo_operator.kube.meta.objects import name_of
from mo_operator.matrixone.admin import AdminError, CNLoad, MOAdmin

from . import pods as cnpods
from .locks import ask_locks, migrates_locks
from .observed import CNSetView, LockAnswer

log = logging.getLogger(__name__)


async def ask(
    view: CNSetView,
    loaded: Sequence[Mapping[str, Any]],
    asks_locks: Callable[[CNSetView, Mapping[str, Any]], bool],
) -> CNSetView:
    """``view`` with the loads of ``loaded`` (each CN once), then the lock service's
    answer for the drained CNs that ``asks_locks`` names."""
    loads = await ask_loads(view.admin, loaded)
    view = replace(view, loads=loads)
    locks: dict[str, LockAnswer] = {}
    for pod in view.pods:
        if name_of(pod) in loads and asks_locks(view, pod):
            locks[name_of(pod)] = await ask_locks(view.admin, pod)
    return replace(view, locks=locks)


async def ask_loads(admin: MOAdmin, pods: Sequence[Mapping[str, Any]]) -> dict[str, CNLoad | AdminError]:
    """What MatrixOne says of each CN's load, or why it did not say; each asked once."""
    out: dict[str, CNLoad | AdminError] = {}
    for pod in pods:
        if name_of(pod) in out:
            continue
        try:
            out[name_of(pod)] = await admin.cn_load(cnpods.store_uuid(pod))
        except AdminError as e:
            log.debug("cannot read the load of CN %s: %s", name_of(pod), e)
            out[name_of(pod)] = e
    return out


def drain_asks_locks(view: CNSetView, pod: Mapping[str, Any]) -> bool:
    """A draining CN that holds nothing else: on MatrixOne 1.2 and later its lock tables decide."""
    load = view.loads.get(name_of(pod))
    return (
        cnpods.draining_since(pod) is not None
        and isinstance(load, CNLoad)
        and load.idle
        and migrates_locks(pod, view.spec)
    )
