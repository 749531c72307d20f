"""409 Conflict from a concurrent writer: the Actor framework's finalizer
patches carry the resourceVersion they were decided on, so a write based on
a stale cache fails instead of overwriting someone else's change; the
controller backs off, sees the new version in its cache and succeeds
(optimistic concurrency,
https://kubernetes.io/docs/reference/using-api/api-concepts/#resource-versions;
controller-runtime requeues a failed reconcile with rate limiting).
Afterwards nothing anyone wrote is lost and the cache equals the server."""

from __future__ import annotations

import asyncio
import itertools
import time
from typing import Any

from mo_devkit.localcluster.controlplane import ControlPlane
from mo_operator.kube.client.client import ApiClient
from mo_operator.kube.controller.actor import ActorReconciler, Context
from mo_operator.kube.controller.controller import Controller
from mo_operator.kube.manager.adapters import ClientEventSink, ClientWriter
from mo_operator.kube.meta.errors import is_conflict
from mo_operator.kube.recorder.events import EventRecorder

from .conftest import ClientFactory, make_informers
from .ledger import Ledger, cache_state, eventually, server_state
from .widgets import WIDGETS, install_widget_crd, widget

NS = "default"
FINALIZER = "example.com/cleanup"
NAMES = [f"w{i}" for i in range(5)]


class EchoActor:
    """Mirrors ``spec.value`` into ``status.echo``; finalizes at once."""

    def __init__(self) -> None:
        self.finalized: list[str] = []

    async def observe(self, ctx: Context) -> None:
        ctx.status["echo"] = ctx.spec.get("value")

    async def finalize(self, ctx: Context) -> bool:
        self.finalized.append(ctx.name)
        return True


class RacingWriter(ClientWriter):
    """Lets a concurrent writer change each object just before the
    framework's first write to it, so the 409 is certain, not likely."""

    def __init__(self, client: ApiClient, rival: ApiClient) -> None:
        super().__init__(client, WIDGETS)
        self.rival = rival
        self.raced: set[str] = set()

    async def merge_patch(self, namespace: str, name: str, patch: dict[str, Any]) -> dict[str, Any]:
        if name not in self.raced:
            self.raced.add(name)
            await bump(self.rival, name)
        return await super().merge_patch(namespace, name, patch)


async def bump(client: ApiClient, name: str) -> int:
    """Read-modify-write of ``spec.value`` with PUT, retried on conflict."""
    while True:
        obj = await client.get(WIDGETS, name, NS)
        value = int(obj["spec"]["value"]) + 1
        obj["spec"]["value"] = value
        try:
            await client.update(WIDGETS, obj)
            return value
        except Exception as e:
            if not is_conflict(e):
                raise


def widgets_done(cp: ControlPlane, expected: dict[str, int]) -> bool:
    for name, value in expected.items():
        w = cp.server.store.get("widgets.example.com", NS, name)
        if w is None:
            return False
        meta, status = w["metadata"], w.get("status") or {}
        if (
            FINALIZER not in (meta.get("finalizers") or [])
            or w["spec"]["value"] != value
            or status.get("echo") != value
            or status.get("observedGeneration") != meta.get("generation")
        ):
            return False
    return True


async def test_conflicting_writes_are_retried_and_nothing_is_lost(
    control_plane: ControlPlane, clients: ClientFactory
) -> None:
    client, rival = clients("widget-controller"), clients("rival")
    await install_widget_crd(rival)
    informers = make_informers(client)
    informer = informers.informer(WIDGETS, NS)
    ledger = Ledger().register(informer)
    actor = EchoActor()
    recorder = EventRecorder(ClientEventSink(client), "widget-controller")
    reconciler = ActorReconciler(
        kind="Widget",
        actor=actor,
        get=lambda req: informer.get(req.namespace, req.name),
        writer=RacingWriter(client, rival),
        recorder=recorder,
        finalizer=FINALIZER,
        pause_annotation="example.com/paused",
    )
    controller = Controller("widgets", reconciler, max_concurrent=2).for_(informer)
    await informers.start()
    assert await informers.wait_synced(5)
    controller.start()
    t0 = time.time()
    try:
        for name in NAMES:
            await rival.create(WIDGETS, widget(name, value=0))
        expected = dict.fromkeys(NAMES, 0)

        async def hammer() -> None:  # a free-running concurrent writer as well
            for name in itertools.islice(itertools.cycle(NAMES), 30):
                expected[name] = await bump(rival, name)
                await asyncio.sleep(0.01)

        await hammer()
        await eventually(lambda: widgets_done(control_plane, expected), 15, "every widget reconciled")
        conflicts = [r for r in control_plane.server.faults.log if r.time >= t0 and r.code == 409]
        ours = [r for r in conflicts if r.field_manager == "widget-controller"]
        assert len(ours) >= len(NAMES)  # each raced finalizer patch failed once at least
        state = server_state(control_plane, NS, "widgets.example.com")
        await eventually(lambda: cache_state(informer) == ledger.live == state, 5, "cache == server")
        assert ledger.violations == []

        for name in NAMES:
            await rival.delete(WIDGETS, name, NS)
        await eventually(
            lambda: server_state(control_plane, NS, "widgets.example.com") == {}, 10, "finalized deletions"
        )
        assert sorted(actor.finalized) == NAMES
        await eventually(lambda: cache_state(informer) == ledger.live == {}, 5, "cache emptied")
        assert ledger.violations == []
    finally:
        await controller.stop(5)
        await informers.stop()
        await recorder.close()
