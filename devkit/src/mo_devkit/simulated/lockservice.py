"""The TN's lock service of each simulated cluster, as an operator draining a CN meets it.

MatrixOne (1.2 and later) keeps, in the TN's lock table allocator, one binding per
CN lock service: the lock tables that CN serves and the transactions holding locks
there (``pkg/lockservice/lock_table_allocator.go``). Told that a CN restarts
(``SetRestartService``), the allocator marks its binding Waiting; the CN moves its
lock tables away as its transactions end, and the binding becomes CanRestart once
none is left. ``CanRestartService`` says whether it is; ``RemainTxnInService``
counts the transactions (-1 when there are none but the binding is not CanRestart
yet). A CN the allocator has no binding for may restart, has 0 transactions, and
``SetRestartService`` on it still answers OK, as the Go handlers answer.

Here a CN has a binding from the moment it registers in HAKeeper; a new process
(restart, new pod) starts a fresh one with no transaction. Tests give a CN
transactions (``set_transactions``); once it is marked restarting they end evenly
over ``txn_seconds``, so the wait is observable. The lock service answers only
while a TN of the cluster heartbeats.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass

from mo_devkit.simulated.resolve import LogSetKey
from mo_devkit.simulated.state import MOModel
from mo_operator.matrixone.admin import AdminError, StoreNotFound
from mo_operator.matrixone.component import Component


class BindStatus(enum.Enum):
    """``lock.Status`` of a CN's binding (same names and numbers)."""

    SERVICE_LOCK_ENABLE = 0
    SERVICE_LOCK_WAITING = 1
    SERVICE_UNLOCK_SUCC = 2
    SERVICE_CAN_RESTART = 3


@dataclass
class Binding:
    """The lock tables one CN process serves, and the transactions holding locks there."""

    process: str
    transactions: int = 0
    status: BindStatus = BindStatus.SERVICE_LOCK_ENABLE
    waiting_from: tuple[float, int] | None = None
    """``(since, transactions then)``: the baseline transactions end against once marked."""
    restartable_at: float | None = None
    """When it became CanRestart (for tests to compare with when the CN was removed)."""


class LockServices:
    """Every simulated cluster's TN lock service, keyed by its LogSet."""

    def __init__(self, model: MOModel, txn_seconds: float = 2.0) -> None:
        self.model = model
        self.txn_seconds = txn_seconds
        self.bindings: dict[tuple[LogSetKey, str], Binding] = {}

    # ------------------------------------------------------------ answering
    def can_restart(self, key: LogSetKey, uuid: str, now: float) -> bool:
        found = self._binding(key, uuid, now)
        return found is None or found.status is BindStatus.SERVICE_CAN_RESTART

    def set_restart(self, key: LogSetKey, uuid: str, now: float) -> bool:
        found = self._binding(key, uuid, now)
        if found is not None and found.status is BindStatus.SERVICE_LOCK_ENABLE:
            found.status = BindStatus.SERVICE_LOCK_WAITING
            found.waiting_from = (now, found.transactions)
        return True

    def remain_txn(self, key: LogSetKey, uuid: str, now: float) -> int:
        found = self._binding(key, uuid, now)
        if found is None:
            return 0
        if found.transactions == 0 and found.status is not BindStatus.SERVICE_CAN_RESTART:
            return -1
        return found.transactions

    # ----------------------------------------------------------------- knobs
    def set_transactions(self, uuid: str, count: int, now: float) -> None:
        """Give CN ``uuid`` exactly ``count`` transactions holding locks (a test's scene)."""
        if count < 0:
            raise ValueError(f"transactions must not be negative, got {count}")
        key = next((k for k, h in self.model.hakeepers.items() if uuid in h.stores[Component.CN]), None)
        if key is None:
            raise StoreNotFound(f"CN store {uuid} does not exist")
        found = self._get_or_start(key, uuid)
        assert found is not None
        found.transactions = count
        if found.status is not BindStatus.SERVICE_LOCK_ENABLE:
            found.status = BindStatus.SERVICE_LOCK_WAITING
            found.waiting_from = (now, count)
            found.restartable_at = None

    def binding(self, uuid: str) -> Binding | None:
        """CN ``uuid``'s binding in whichever cluster holds one, for tests to look at."""
        return next((b for (_, u), b in self.bindings.items() if u == uuid), None)

    # -------------------------------------------------------------- advancing
    def advance(self, now: float) -> None:
        """Forget bindings whose CN process is gone; end the transactions of marked CNs."""
        for (key, uuid), found in list(self.bindings.items()):
            hakeeper = self.model.hakeepers.get(key)
            record = hakeeper.stores[Component.CN].get(uuid) if hakeeper is not None else None
            if record is None or record.process != found.process:
                del self.bindings[(key, uuid)]
                continue
            if found.status is not BindStatus.SERVICE_LOCK_WAITING:
                continue
            since, start = found.waiting_from or (now, found.transactions)
            left = 0.0 if self.txn_seconds <= 0 else max(0.0, 1.0 - (now - since) / self.txn_seconds)
            found.transactions = min(found.transactions, math.ceil(start * left))
            if found.transactions == 0:
                found.status = BindStatus.SERVICE_CAN_RESTART
                found.restartable_at = now

    # ------------------------------------------------------------- internals
    def _binding(self, key: LogSetKey, uuid: str, now: float) -> Binding | None:
        """The binding the TN holds for CN ``uuid``; raises AdminError when no TN answers."""
        hakeeper = self.model.hakeepers[key]
        timeout = self.model.settings.store_timeout
        if not any(now - r.last_heartbeat <= timeout for r in hakeeper.stores[Component.TN].values()):
            raise AdminError("no TN lock service answers: no TN store is up")
        return self._get_or_start(key, uuid)

    def _get_or_start(self, key: LogSetKey, uuid: str) -> Binding | None:
        record = self.model.hakeepers[key].stores[Component.CN].get(uuid)
        if record is None:
            return None
        found = self.bindings.get((key, uuid))
        if found is None or found.process != record.process:
            found = self.bindings[(key, uuid)] = Binding(record.process)
        return found
