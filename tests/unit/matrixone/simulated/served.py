"""A ``World`` scene served over morpc: the simulated MatrixOne's servers for its processes
on loopback, and the product's client (``RpcAdminProvider``) reaching them by the
cluster's names through the network's dialer."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass

from mo_devkit.simulated.lockservice import LockServices
from mo_devkit.simulated.rpc.network import MorpcNetwork
from mo_operator.matrixone import names
from mo_operator.matrixone.rpc.provider import RpcAdminProvider

from .factories import NS, World

DISCOVERY = names.discovery_address("mo", NS)


@dataclass
class Served:
    world: World
    locks: LockServices
    network: MorpcNetwork
    provider: RpcAdminProvider
    changes: list[int]

    async def step(self, seconds: float = 1.0) -> None:
        """Let time pass in the model, then open and close servers as the processes now do."""
        self.world.step(seconds)
        self.locks.advance(self.world.now)
        await self.sync()

    async def sync(self) -> None:
        self.network.plan(self.world.instances.values(), self.world.snapshot())
        await self.network.settle()

    def methods(self, service: str | None = None) -> list[str]:
        return self.network.journal.methods(service)


@contextlib.asynccontextmanager
async def served(world: World, *, timeout: float = 1.0, txn_seconds: float = 2.0) -> AsyncIterator[Served]:
    locks = LockServices(world.model, txn_seconds)
    changes: list[int] = []
    network = MorpcNetwork(world.model, locks, lambda: world.now, lambda: changes.append(1))
    provider = RpcAdminProvider(dialer=network.dialer, timeout=timeout, connect_timeout=0.5)
    scene = Served(world, locks, network, provider, changes)
    await scene.sync()
    try:
        yield scene
    finally:
        await provider.close()
        await network.stop()
