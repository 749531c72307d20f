"""The simulated MatrixOne wired into a running workload simulator.

It watches what a MatrixOne process would see (pods, the ConfigMaps and Services
they refer to, nodes, volume claims) through the simulator's API client, so it works on the embedded
control plane and against a real API server alike. On every change, and every
``refresh_interval`` for what moves with time (heartbeat timeouts, drains), it
brings the instances up to date (an ``InstanceTracker`` computes only those whose
inputs changed), advances the model and has the kubelet look again at the pods
whose verdict changed. Every ``full_refresh_interval`` it computes every instance
afresh and has the kubelet look at every pod: a backstop, so that an input the
incremental path missed, or a look the kubelet lost, is made good within that time.

The operator reaches it over morpc, as it reaches a real MatrixOne: the processes'
servers listen on loopback (``rpc/network.py``), and ``dialer`` (or the address book
file, ``book_path``, for an operator in another process) leads the names and ports of
the cluster to them. Tests get knobs: bad images, sessions, transactions, RPC faults
(``faults``), the requests the servers read (``calls``), and the model's ``settings``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from types import TracebackType

from mo_devkit.localcluster.simulator.behaviour import ContainerExit
from mo_devkit.localcluster.simulator.core.cache import ObjectCache
from mo_devkit.localcluster.simulator.core.kinds import CONFIGMAP, NODE, POD, PVC, SERVICE
from mo_devkit.localcluster.simulator.simulator import Simulator
from mo_devkit.simulated.backuptool import BackupTool, ToolRun, run_tool
from mo_devkit.simulated.behaviour import MatrixOneBehaviour
from mo_devkit.simulated.instances import Instance
from mo_devkit.simulated.lockservice import Binding, LockServices
from mo_devkit.simulated.objectstore import ObjectStore, cleanup_commands
from mo_devkit.simulated.rpc.addressbook import BookDialer
from mo_devkit.simulated.rpc.network import MorpcNetwork
from mo_devkit.simulated.rpc.server import Call, Faults
from mo_devkit.simulated.state import HAKeeper, MOModel, Settings
from mo_devkit.simulated.tracker import InstanceTracker
from mo_devkit.simulated.verdicts import verdict
from mo_devkit.simulated.view import Key, Obj, Snapshot, mo_component

log = logging.getLogger(__name__)

MAX_BUSY_SHARE = 0.25
"""The most of the event loop's time refreshing may take while changes keep coming."""

FULL_REFRESH_INTERVAL = 2.0
"""Seconds (of the simulator's clock) between two refreshes that compute everything afresh."""


class SimulatedMatrixOne:
    """Simulated MatrixOne processes for every MatrixOne pod the simulator runs."""

    def __init__(
        self,
        simulator: Simulator,
        settings: Settings | None = None,
        *,
        bad_images: Iterable[str] = (),
        refresh_interval: float = 0.2,
        cn_store_condition: bool = True,
        full_refresh_interval: float = FULL_REFRESH_INTERVAL,
        book_path: Path | None = None,
    ) -> None:
        self.simulator = simulator
        self.full_refresh_interval = full_refresh_interval
        self.cn_store_condition = cn_store_condition
        self.model = MOModel(settings)
        self.objects = ObjectStore()
        """The simulated object storage: ``objects.holds_data(path, endpoint)``."""
        self.refresh_interval = refresh_interval
        self._clock = simulator.ctx.clock
        self._bad_images = list(bad_images)
        self._snapshot = Snapshot()
        self._instances: dict[tuple[str, str], Instance] = {}
        self._tracker = InstanceTracker()
        self._next_full = 0.0
        self._dirty = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self.behaviour = MatrixOneBehaviour(self._dirty.set)
        self.backup_tool = BackupTool(self._run_tool)
        self.locks = LockServices(self.model)
        """The clusters' TN lock services (``lockservice.py``)."""
        self.network = MorpcNetwork(self.model, self.locks, self._clock, self._dirty.set, book_path=book_path)
        relist = simulator.config.relist_period
        self._configmaps = ObjectCache(simulator.api, CONFIGMAP, relist_period=relist)
        self._services = ObjectCache(simulator.api, SERVICE, relist_period=relist)

    @property
    def settings(self) -> Settings:
        return self.model.settings

    @property
    def dialer(self) -> BookDialer:
        """The dialer an operator in this process is constructed with (``RpcAdminProvider``)."""
        return self.network.dialer

    @property
    def faults(self) -> Faults:
        """Make the morpc servers misbehave (``rpc/server.py``): ``faults.set("refuse")``, ``clear()``."""
        return self.network.faults

    @property
    def calls(self) -> list[Call]:
        """Every request the morpc servers read, oldest first."""
        return self.network.calls

    # ------------------------------------------------------------ lifecycle
    async def start(self) -> None:
        """Watch, take over MatrixOne pods from the kubelet's default, and keep refreshing."""
        if self._task is not None:
            return
        for cache in (self._configmaps, self._services):
            cache.add_handler(self._on_event)
            await cache.start()
        self.simulator.cache(POD).add_handler(self._on_pod)
        self.simulator.cache(NODE).add_handler(self._on_event)
        self.network.start()
        self.refresh()
        self.simulator.add_behaviour(self.behaviour)
        self.simulator.add_behaviour(self.backup_tool)
        self._task = asyncio.create_task(
            refresh_loop(self.refresh, self._dirty, self.refresh_interval), name="simulated-matrixone"
        )

    async def stop(self) -> None:
        """Stop simulating: MatrixOne pods fall back to the simulator's default behaviour."""
        self.behaviour.enabled = False
        self.backup_tool.enabled = False
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        await self.network.stop()
        for cache in (self._configmaps, self._services):
            await cache.stop()
        self.simulator.resync_pods()

    async def __aenter__(self) -> SimulatedMatrixOne:
        await self.start()
        return self

    async def __aexit__(
        self, _t: type[BaseException] | None, _e: BaseException | None, _tb: TracebackType | None
    ) -> None:
        await self.stop()

    # ---------------------------------------------------------------- knobs
    def mark_image_bad(self, glob: str) -> None:
        """Pods whose main container image matches ``glob`` never work (e.g. ``*:2.0.0-broken``)."""
        self._bad_images.append(glob)
        self._dirty.set()

    def mark_image_good(self, glob: str) -> None:
        """Undo ``mark_image_bad(glob)``."""
        self._bad_images = [g for g in self._bad_images if g != glob]
        self._dirty.set()

    def store_uuid(self, namespace: str, pod: str) -> str | None:
        """The store UUID of the MatrixOne process in ``pod`` (as of the last refresh)."""
        found = self._instances.get((namespace, pod))
        return found.uuid if found is not None else None

    def set_sessions(self, uuid: str, sessions: int) -> None:
        """Give CN ``uuid`` exactly ``sessions`` sessions; raises StoreNotFound if not registered."""
        self.model.set_sessions(uuid, sessions, self._clock())
        self._dirty.set()

    def sessions(self, uuid: str) -> int:
        return self.model.sessions(uuid)

    def open_sessions(self, namespace: str, logset: str, count: int) -> int:
        """Clients open ``count`` sessions on the cluster of LogSet ``namespace/logset``.

        They go to its Working CNs, fewest first; returns how many found one.
        """
        placed = self.model.open_sessions((namespace, logset), count)
        self._dirty.set()
        return placed

    def set_transactions(self, uuid: str, count: int) -> None:
        """Give CN ``uuid`` ``count`` transactions holding locks in the TN lock service;
        once the CN is marked restarting they end over ``locks.txn_seconds``."""
        self.locks.set_transactions(uuid, count, self._clock())
        self._dirty.set()

    def lock_binding(self, uuid: str) -> Binding | None:
        """CN ``uuid``'s binding in its TN lock service (status, transactions left)."""
        return self.locks.binding(uuid)

    def hakeeper(self, namespace: str, logset: str) -> HAKeeper | None:
        """The HAKeeper of a LogSet as the model holds it (phase, stores), for tests to look at."""
        return self.model.hakeepers.get((namespace, logset))

    # ------------------------------------------------------------- internal
    def refresh(self) -> None:
        """Observe the current objects now, advance the model and publish the verdicts."""
        full = self._clock() >= self._next_full
        if full:
            self._tracker.full()
            self._next_full = self._clock() + self.full_refresh_interval
        snapshot = self._take_snapshot()
        instances = self._tracker.observe(snapshot, self._bad_images)
        all_pods = self.simulator.cache(POD).objects()
        self.model.observe(instances, self._clock(), snapshot.volume_claims)
        self.locks.advance(self._clock())
        self.objects.observe(instances, snapshot, self.model, all_pods)
        before = self._instances
        self._snapshot = snapshot
        self._instances = {i.key: i for i in instances}
        self.network.plan(instances, snapshot)
        verdicts = {
            i.uid: verdict(i, self.model, cn_store_condition=self.cn_store_condition) for i in instances
        }
        changed = self.behaviour.update(verdicts)
        if full:
            self.simulator.resync_pods()
        elif changed:
            self._look_again(changed, before)
        self.backup_tool.forget_except({str(p["metadata"].get("uid")) for p in all_pods})

    def _look_again(self, changed: set[str], before: Mapping[Key, Instance]) -> None:
        """Have the kubelet judge again the pods (by UID) whose verdict changed, and
        only those: looking at every pod on each change costs the square of their number."""
        if not self.simulator.config.plays_kubelets:
            return
        where = {i.uid: i.key for i in (*before.values(), *self._instances.values())}
        for uid in changed:
            key = where.get(uid)
            if key is not None:
                self.simulator.kubelet.enqueue(key)

    def _take_snapshot(self) -> Snapshot:
        pods = [p for p in self.simulator.cache(POD).objects() if mo_component(p) is not None]
        configmaps: list[Obj] = []
        for pod in pods:
            namespace = str((pod.get("metadata") or {}).get("namespace") or "")
            for volume in (pod.get("spec") or {}).get("volumes") or []:
                name = (volume.get("configMap") or {}).get("name")
                found = self._configmaps.get(namespace, str(name)) if name else None
                if found is not None:
                    configmaps.append(found)
        return Snapshot.of(
            pods=pods,
            configmaps=configmaps,
            services=self._services.objects(),
            nodes=self.simulator.cache(NODE).objects(),
            volume_claims=self.simulator.cache(PVC).objects(),
        )

    def _run_tool(self, pod: Obj, run: ToolRun) -> ContainerExit:
        """A ``mo_br`` pod's outcome against the clusters as of the last refresh."""
        return run_tool(pod, run, self._snapshot, self._instances, self.model, self._clock())

    def _on_pod(self, _etype: str, old: Obj | None, new: Obj | None) -> None:
        if any(p is not None and (mo_component(p) is not None or cleanup_commands(p)) for p in (old, new)):
            self._dirty.set()

    def _on_event(self, _etype: str, _old: Obj | None, _new: Obj | None) -> None:
        self._dirty.set()


async def refresh_loop(
    refresh: Callable[[], None],
    dirty: asyncio.Event,
    interval: float,
    max_busy_share: float = MAX_BUSY_SHARE,
) -> None:
    """Call ``refresh`` when ``dirty`` is set, and at least every ``interval`` seconds.

    Every refresh passes over every MatrixOne pod (if only to find it unchanged), so
    under a stream of changes refreshing back to back would take the whole core from
    the API server it shares a process with. Resting in proportion to the last refresh
    keeps its share at ``max_busy_share``, and a large fleet's changes are taken in
    batches.
    """
    rest = 0.0
    while True:
        await asyncio.sleep(rest)
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(interval):
                await dirty.wait()
        dirty.clear()
        started = time.perf_counter()
        try:
            refresh()
        except Exception:  # a bug here must not stop the simulation
            log.exception("simulated MatrixOne refresh failed")
        rest = (time.perf_counter() - started) * (1 / max_busy_share - 1)


async def install_simulated_matrixone(
    simulator: Simulator,
    settings: Settings | None = None,
    *,
    bad_images: Iterable[str] = (),
    refresh_interval: float = 0.2,
    cn_store_condition: bool = True,
    full_refresh_interval: float = FULL_REFRESH_INTERVAL,
    book_path: Path | None = None,
) -> SimulatedMatrixOne:
    """Start a simulated MatrixOne on a started ``simulator`` (e.g. ``ControlPlane.simulator``).

    Construct the operator's ``RpcAdminProvider`` with ``.dialer`` (an operator in another
    process: with a dialer reading ``book_path``); ``await .stop()`` when done.
    With ``cn_store_condition=False`` CN pods get no ``matrixorigin.io/cn-store``
    condition from the simulation (for an operator that writes it itself, as upstream's).
    """
    simulated = SimulatedMatrixOne(
        simulator,
        settings,
        bad_images=bad_images,
        refresh_interval=refresh_interval,
        cn_store_condition=cn_store_condition,
        full_refresh_interval=full_refresh_interval,
        book_path=book_path,
    )
    await simulated.start()
    return simulated
