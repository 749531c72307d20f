"""``MOAdmin`` over the simulated clusters: what the operator reaches at a discovery address.

The address is resolved as a real client's DNS lookup would resolve it (a Service
selecting a LogSet's log pods), at every call, so a deleted Service or a LogSet that
lost its quorum makes calls fail with ``AdminError`` as a real client's would time out.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from mo_operator.matrixone.admin import AdminError, CNLoad, HAKeeperState, WorkState
from mo_operator.matrixone.simulated.lockservice import LockServices
from mo_operator.matrixone.simulated.resolve import LogSetKey, Unresolved
from mo_operator.matrixone.simulated.state import MOModel

Resolver = Callable[[str], LogSetKey | Unresolved]
"""Finds the LogSet behind a discovery address, or says why there is none."""


@dataclass(frozen=True)
class AdminCall:
    """One call the operator made, for tests that check what was asked and in which order."""

    address: str
    method: str
    uuid: str = ""
    work_state: WorkState | None = None


class SimulatedAdmin:
    """The admin interface of the simulated cluster behind one discovery address."""

    def __init__(
        self,
        address: str,
        model: MOModel,
        resolve: Resolver,
        clock: Callable[[], float],
        on_change: Callable[[], None],
        journal: list[AdminCall],
        locks: LockServices | None = None,
    ) -> None:
        self.address = address
        self._model = model
        self._locks = locks if locks is not None else LockServices(model)
        self._resolve = resolve
        self._clock = clock
        self._on_change = on_change
        self._journal = journal

    def _hakeeper(self, method: str, uuid: str = "", work_state: WorkState | None = None) -> LogSetKey:
        self._journal.append(AdminCall(self.address, method, uuid, work_state))
        key = self._resolve(self.address)
        if isinstance(key, Unresolved):
            raise AdminError(f"{method}: cannot reach HAKeeper at {self.address}: {key.reason}")
        if not self._model.available(key):
            raise AdminError(f"{method}: HAKeeper at {self.address} did not answer: timed out")
        return key

    async def hakeeper_state(self) -> HAKeeperState:
        key = self._hakeeper("hakeeper_state")
        return self._model.hakeeper_state(key, self._clock())

    async def cn_load(self, uuid: str) -> CNLoad:
        key = self._hakeeper("cn_load", uuid)
        return self._model.cn_load(key, uuid)

    async def set_cn_work_state(
        self, uuid: str, state: WorkState, labels: Mapping[str, tuple[str, ...]] | None = None
    ) -> None:
        key = self._hakeeper("set_cn_work_state", uuid, state)
        if state is WorkState.UNKNOWN:
            raise AdminError(f"set_cn_work_state: {state.mo_name} is not a state a CN can be put in")
        self._model.set_work_state(key, uuid, state, labels, self._clock())
        self._on_change()

    async def set_cn_labels(self, uuid: str, labels: Mapping[str, tuple[str, ...]]) -> None:
        key = self._hakeeper("set_cn_labels", uuid)
        self._model.set_labels(key, uuid, labels)
        self._on_change()

    async def delete_cn_store(self, uuid: str) -> None:
        key = self._hakeeper("delete_cn_store", uuid)
        self._model.delete_cn(key, uuid)
        self._on_change()

    async def can_restart_cn(self, uuid: str) -> bool:
        key = self._hakeeper("can_restart_cn", uuid)
        return self._locks.can_restart(key, uuid, self._clock())

    async def set_restart_cn(self, uuid: str) -> bool:
        key = self._hakeeper("set_restart_cn", uuid)
        marked = self._locks.set_restart(key, uuid, self._clock())
        self._on_change()
        return marked

    async def remain_txn_count(self, uuid: str) -> int:
        key = self._hakeeper("remain_txn_count", uuid)
        return self._locks.remain_txn(key, uuid, self._clock())


class SimulatedAdminProvider:
    """Hands out one ``SimulatedAdmin`` per discovery address; ``calls`` journals every call."""

    def __init__(
        self,
        model: MOModel,
        resolve: Resolver,
        clock: Callable[[], float],
        on_change: Callable[[], None] = lambda: None,
        locks: LockServices | None = None,
    ) -> None:
        self._model = model
        self._resolve = resolve
        self._clock = clock
        self._on_change = on_change
        self.locks = locks if locks is not None else LockServices(model)
        """The clusters' TN lock services (``lockservice.py``)."""
        self._admins: dict[str, SimulatedAdmin] = {}
        self.calls: list[AdminCall] = []

    def admin(self, discovery_address: str) -> SimulatedAdmin:
        found = self._admins.get(discovery_address)
        if found is None:
            found = SimulatedAdmin(
                discovery_address,
                self._model,
                self._resolve,
                self._clock,
                self._on_change,
                self.calls,
                self.locks,
            )
            self._admins[discovery_address] = found
        return found
