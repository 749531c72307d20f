"""What a CNSet round asks MatrixOne about its CNs, each question once: their loads,
then, for the drained ones whose lock tables decide, the TN lock service."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from mo_operator.api.cnset import CNSetSpec
from mo_operator.kube.meta.objects import name_of
from mo_operator.matrixone.admin import AdminError, CNLoad, MOAdmin

from . import pods as cnpods
from .locks import ask_locks, migrates_locks
from .observed import LockAnswer

log = logging.getLogger(__name__)


Loads = Mapping[str, CNLoad | AdminError]
AsksLocks = Callable[[CNSetSpec, Mapping[str, Any], CNLoad | AdminError], bool]


async def ask(
    admin: MOAdmin,
    spec: CNSetSpec,
    loaded: Sequence[Mapping[str, Any]],
    drained: Sequence[Mapping[str, Any]],
    asks_locks: AsksLocks,
) -> tuple[dict[str, CNLoad | AdminError], dict[str, LockAnswer]]:
    """The loads of ``loaded`` and ``drained`` (each CN once), then the lock service's
    answer for the ``drained`` CNs that ``asks_locks`` names."""
    loads = await ask_loads(admin, [*loaded, *drained])
    locks: dict[str, LockAnswer] = {}
    for pod in drained:
        if asks_locks(spec, pod, loads[name_of(pod)]):
            locks[name_of(pod)] = await ask_locks(admin, pod)
    return loads, locks


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


def drain_asks_locks(spec: CNSetSpec, pod: Mapping[str, Any], load: CNLoad | AdminError) -> bool:
    """A drained CN that holds nothing else: on MatrixOne 1.2 and later its lock tables decide."""
    return isinstance(load, CNLoad) and load.idle and migrates_locks(pod, spec)
