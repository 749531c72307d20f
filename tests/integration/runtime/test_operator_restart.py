"""The operator process killed (SIGKILL) and started again: the new process
waits out the dead one's lease (it was never released), lists, and brings
everything changed meanwhile to its desired state; its handlers are told of
each object once, and its caches equal the server's state. A SIGTERM then
shuts it down cleanly and releases the lease
(https://kubernetes.io/docs/concepts/architecture/leases/#leader-election)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

from mo_devkit.localcluster.controlplane import ControlPlane

from .child_controller import CHILD_LABEL, PARENT_LABEL, all_children_as_desired, parent
from .conftest import ClientFactory
from .ledger import CONFIGMAPS, Ledger, eventually, server_state

NS = "default"
TESTS_DIR = Path(__file__).resolve().parents[2]


class OperatorProcess:
    """One run of ``operator_main``, its handler calls replayed into ledgers."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.ledgers = {"parents": Ledger(), "children": Ledger()}
        self.caches: asyncio.Queue[dict[str, dict[str, str]]] = asyncio.Queue()
        self.started = asyncio.Event()
        self._reader = asyncio.create_task(self._read())

    @classmethod
    async def start(cls, kubeconfig: Path, identity: str) -> OperatorProcess:
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "integration.runtime.operator_main",
            str(kubeconfig),
            identity,
            cwd=TESTS_DIR,
            stdout=asyncio.subprocess.PIPE,
            env={**os.environ, "PYTHONPATH": str(TESTS_DIR)},
        )
        op = cls(proc)
        await asyncio.wait_for(op.started.wait(), 30)
        return op

    async def _read(self) -> None:
        assert self.proc.stdout is not None
        async for raw in self.proc.stdout:
            line: dict[str, Any] = json.loads(raw)
            if "started" in line:
                self.started.set()
            elif "cache" in line:
                self.caches.put_nowait(line["cache"])
            else:
                self._replay(line)

    def _replay(self, line: dict[str, Any]) -> None:
        ledger = self.ledgers[line["i"]]
        ns, name = line["k"].split("/", 1)

        def obj(rv: str) -> dict[str, Any]:
            return {"metadata": {"namespace": ns, "name": name, "resourceVersion": rv}}

        if line["e"] == "add":
            ledger.on_add(obj(line["rv"]))
        elif line["e"] == "update":
            ledger.on_update(obj(line["old"]), obj(line["rv"]))
        else:
            ledger.on_delete(obj(line["rv"]))

    async def cache(self) -> dict[str, dict[str, str]]:
        self.proc.send_signal(signal.SIGUSR1)
        return await asyncio.wait_for(self.caches.get(), 5)

    async def wait(self) -> int:
        code = await asyncio.wait_for(self.proc.wait(), 15)
        await self._reader
        return code

    async def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            self.proc.kill()
        await self.wait()


def expected_caches(cp: ControlPlane) -> dict[str, dict[str, str]]:
    return {
        "parents": server_state(cp, NS, selector=PARENT_LABEL),
        "children": server_state(cp, NS, selector=CHILD_LABEL),
    }


async def test_operator_killed_and_restarted(control_plane: ControlPlane, clients: ClientFactory) -> None:
    assert control_plane.kubeconfig_path is not None
    user = clients("someone-else")
    for i in range(4):
        await user.create(CONFIGMAPS, parent(f"p{i}", v=str(i)))
    first = await OperatorProcess.start(control_plane.kubeconfig_path, "operator-1")
    second: OperatorProcess | None = None
    try:
        await eventually(lambda: all_children_as_desired(control_plane), 15, "the first run's work")
        await first.kill()
        assert first.proc.returncode == -signal.SIGKILL
        assert all(ledger.violations == [] for ledger in first.ledgers.values())

        # While no operator runs, everything it manages drifts.
        await user.create(CONFIGMAPS, parent("p4", v="4"))
        await user.patch(CONFIGMAPS, "p1", {"data": {"v": "changed"}}, NS)
        await user.delete(CONFIGMAPS, "p2", NS)
        await user.delete(CONFIGMAPS, "p3-child", NS)
        await user.patch(CONFIGMAPS, "p0-child", {"data": {"copy.v": "tampered"}}, NS)
        assert not all_children_as_desired(control_plane)

        second = await OperatorProcess.start(control_plane.kubeconfig_path, "operator-2")
        await eventually(lambda: all_children_as_desired(control_plane), 15, "the second run's work")
        await eventually(
            lambda: control_plane.server.store.get("configmaps", NS, "p2-child") is None,
            5,
            "p2-child collected",
        )

        async def caches_agree() -> bool:
            expected = expected_caches(control_plane)
            views = {name: ledger.live for name, ledger in second.ledgers.items()}
            return await second.cache() == expected == views

        for _ in range(50):
            if await caches_agree():
                break
            await asyncio.sleep(0.1)
        assert await caches_agree()
        assert all(ledger.violations == [] for ledger in second.ledgers.values())
        writers = {w.user_agent for w in control_plane.server.faults.writes(field_manager="child-controller")}
        assert writers == {"operator-1", "operator-2"}

        second.proc.send_signal(signal.SIGTERM)
        assert await second.wait() == 0
        lease = control_plane.server.store.get("leases.coordination.k8s.io", NS, "child-controller")
        assert lease is not None and lease["spec"]["holderIdentity"] == ""  # released on the way out
    finally:
        await first.kill()
        if second is not None:
            await second.kill()
