"""The simulated MatrixOne's morpc servers, opened and closed as its processes come and go.

Every process that serves opens real loopback listeners where MatrixOne listens: a log
store its log service (HAKeeper calls included), a TN that has found its HAKeeper its
lock service, a CN that has found its HAKeeper its query service (MatrixOne starts them
only after ``waitHAKeeperReady``, see state.py). A process that stops, or restarts,
closes them and drops their connections, so a stopped pod refuses connections as in
reality. The servers are a view of the model: they answer from it when asked.

The address book (``addressbook.py``) follows: each server under the names and ports a
real cluster gives it (its advertised address, its pod's DNS name and IP), each Service
under its DNS name, leading to the servers of its ready endpoints. While ``Faults``
refuse, every listener is closed and every name refuses.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mo_devkit.simulated.instances import Instance
from mo_devkit.simulated.lockservice import LockServices
from mo_devkit.simulated.rpc.addressbook import AddressBook, BookDialer, canonical
from mo_devkit.simulated.rpc.server import Faults, Journal, MorpcServer, Service
from mo_devkit.simulated.rpc.services import LockService, LogStoreService, QueryService
from mo_devkit.simulated.state import MOModel
from mo_devkit.simulated.view import Snapshot
from mo_operator.kube.meta.objects import labels_of
from mo_operator.matrixone import ports
from mo_operator.matrixone.component import Component

log = logging.getLogger(__name__)

EndpointKey = tuple[str, str, int]
"""``(namespace, pod, port)``: where a process listens."""

SERVED_PORTS: Mapping[Component, int] = {
    Component.LOG: ports.LOG_SERVICE,
    Component.TN: ports.TN_LOCK_SERVICE,
    Component.CN: ports.CN_QUERY,
}
"""The port of the one morpc service of each component the operator calls."""


@dataclass(frozen=True)
class Endpoint:
    """A server a process should have open."""

    key: EndpointKey
    process: str
    names: tuple[str, ...]
    """Canonical ``host:port`` names that lead to it."""
    make: Callable[[], Service]


def _host_port(address: str) -> tuple[str, int] | None:
    host, sep, port = address.rpartition(":")
    return (host, int(port)) if sep and host and port.isdigit() else None


def _names(*addresses: str) -> tuple[str, ...]:
    found = []
    for address in addresses:
        split = _host_port(address)
        if split is not None and split[0]:
            found.append(canonical(*split))
    return tuple(dict.fromkeys(found))


class MorpcNetwork:
    """Loopback morpc servers for every serving MatrixOne process, and the book that finds them."""

    def __init__(
        self,
        model: MOModel,
        locks: LockServices,
        clock: Callable[[], float],
        on_change: Callable[[], None] = lambda: None,
        *,
        book_path: Path | None = None,
    ) -> None:
        self.model = model
        self.locks = locks
        self.clock = clock
        self.on_change = on_change
        self.book_path = book_path
        self.journal = Journal()
        self.faults = Faults(on_change=self._replan)
        self.book = AddressBook()
        self.dialer = BookDialer(lambda: self.book)
        """The dialer an operator in this process is constructed with."""
        self.servers: dict[EndpointKey, tuple[str, MorpcServer]] = {}
        self._wanted: dict[EndpointKey, Endpoint] = {}
        self._names: dict[str, tuple[EndpointKey, ...]] = {}
        self._dirty = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._written: str | None = None

    @property
    def calls(self) -> list[Any]:
        """Every request the servers read, oldest first (``server.Call``)."""
        return list(self.journal.calls)

    # ------------------------------------------------------------ lifecycle
    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run(), name="simulated-morpc")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        for _, server in self.servers.values():
            await server.stop()
        self.servers = {}
        self._publish({})

    async def settle(self) -> None:
        """Open and close listeners for the last plan now (tests, and the loop)."""
        self._dirty.clear()
        await self._apply()

    # ----------------------------------------------------------------- plan
    def plan(self, instances: Iterable[Instance], snapshot: Snapshot) -> None:
        """What should listen, and under which names, given what every process does now."""
        wanted: dict[EndpointKey, Endpoint] = {}
        names: dict[str, list[EndpointKey]] = {}
        for instance in instances:
            port = SERVED_PORTS.get(instance.component)
            if port is None or instance.uuid is None:
                continue
            key = (instance.namespace, instance.pod, port)
            pod_names = _names(_advertised(instance), f"{instance.pod_ip}:{port}")
            endpoint = self._endpoint(instance, key, pod_names)
            for name in pod_names:
                found = names.setdefault(name, [])
                if endpoint is not None:
                    found.append(key)
            if endpoint is not None:
                wanted[key] = endpoint
        self._services(snapshot, wanted, names)
        self._wanted = wanted
        self._names = {name: tuple(dict.fromkeys(keys)) for name, keys in names.items()}
        self._dirty.set()

    def _endpoint(self, i: Instance, key: EndpointKey, names: tuple[str, ...]) -> Endpoint | None:
        """The server ``i`` has open, if it serves (TN and CN: once registered)."""
        assert i.uuid is not None
        uuid, model, address = i.uuid, self.model, _advertised(i)
        if not i.serving:
            return None
        if i.component is Component.LOG:
            assert i.logset is not None
            logset = i.logset
            return Endpoint(
                key,
                i.process,
                names,
                lambda: LogStoreService(model, logset, uuid, address, self.clock, self.on_change),
            )
        if model.registration(i) is None:
            return None
        if i.component is Component.TN:
            return Endpoint(key, i.process, names, lambda: LockService(self.locks, uuid, address, self.clock))
        return Endpoint(key, i.process, names, lambda: QueryService(model, uuid, address))

    @staticmethod
    def _services(
        snapshot: Snapshot, wanted: Mapping[EndpointKey, Endpoint], names: dict[str, list[EndpointKey]]
    ) -> None:
        """Each Service's DNS name and port → the servers of its ready endpoints."""
        for (namespace, name), service in snapshot.services.items():
            spec = service.get("spec") or {}
            selector = spec.get("selector") or {}
            if not selector:
                continue
            selected = [
                pod
                for pod in snapshot.pods_in(namespace)
                if all(labels_of(pod).get(k) == v for k, v in selector.items())
                and not (pod.get("metadata") or {}).get("deletionTimestamp")
                and (spec.get("publishNotReadyAddresses") or _ready(pod))
            ]
            if not selected:
                continue
            for item in spec.get("ports") or ():
                port, target = item.get("port"), item.get("targetPort", item.get("port"))
                if not isinstance(port, int) or not isinstance(target, int):
                    continue
                keys = [
                    (namespace, str(pod["metadata"]["name"]), target)
                    for pod in selected
                    if (namespace, str(pod["metadata"]["name"]), target) in wanted
                ]
                names[canonical(f"{name}.{namespace}.svc", port)] = keys

    def _replan(self) -> None:
        self._dirty.set()
        self.on_change()

    # ---------------------------------------------------------------- apply
    async def _run(self) -> None:
        while True:
            await self._dirty.wait()
            self._dirty.clear()
            try:
                await self._apply()
            except Exception:  # a bug here must not stop the simulation
                log.exception("simulated morpc servers failed to follow the processes")

    async def _apply(self) -> None:
        wanted = {} if self.faults.refusing else self._wanted
        for key, (process, server) in list(self.servers.items()):
            endpoint = wanted.get(key)
            if endpoint is None or endpoint.process != process:
                del self.servers[key]
                server.close()
        for key, endpoint in wanted.items():
            if key not in self.servers:
                server = await MorpcServer(endpoint.make(), self.faults, self.journal).start()
                self.servers[key] = (endpoint.process, server)
        self._publish(
            {
                name: tuple(self.servers[k][1].port for k in keys if k in self.servers)
                for name, keys in self._names.items()
            }
        )

    def _publish(self, entries: dict[str, tuple[int, ...]]) -> None:
        self.book = AddressBook(entries)
        if self.book_path is not None:
            text = self.book.to_json()
            if text != self._written:
                self.book.write(self.book_path)
                self._written = text

    def server(self, address: str) -> MorpcServer | None:
        """The server standing for ``address`` (as MatrixOne advertises it), for tests."""
        wanted = _names(address)
        return next((s for _, s in self.servers.values() if _names(s.service.address) == wanted), None)


def _advertised(instance: Instance) -> str:
    """The address MatrixOne gives the component's one service the operator calls."""
    if instance.component is Component.LOG:
        return instance.service_address
    if instance.component is Component.TN:
        return instance.lock_service_address
    return instance.query_address


def _ready(pod: Mapping[str, Any]) -> bool:
    conditions = (pod.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)
