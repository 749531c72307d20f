"""Two sides of one scenario: the embedded control plane with the full workload
simulator, and the real control plane ``MO_TEST_KUBECONFIG`` names (real
kube-controller-manager and kube-scheduler) where a simulator plays only the
kubelets of its own Nodes and the provisioner of its StorageClass.

Both get the same manifests: the embedded simulator's Nodes carry the same
taint and labels as the attached one's, so the same toleration and
nodeSelector place pods on either. Each side has a :class:`Recorder`, the
test's own informers on the scenario's namespace, so what a scenario compares
is every change the API server delivered, in order; object names that the
two sides make differently (revision hashes, generated pod names) are
replaced by what they stand for (the image, the order of creation).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import uuid
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import pytest
from lightkube import AsyncClient, KubeConfig

from mo_devkit.localcluster.controlplane import ControlPlane
from mo_devkit.localcluster.simulator.config import SIMULATED_LABEL, SimulatorConfig
from mo_devkit.localcluster.simulator.core.cache import Caches
from mo_devkit.localcluster.simulator.core.kinds import (
    CONTROLLER_REVISION,
    DEPLOYMENT,
    JOB,
    NAMESPACE,
    NODE,
    PDB,
    POD,
    PV,
    PVC,
    REPLICASET,
    STATEFULSET,
    STORAGE_CLASS,
    Kind,
)
from mo_devkit.localcluster.simulator.core.kubeapi import KubeApi, KubeError
from mo_devkit.localcluster.simulator.core.objects import (
    Obj,
    find_condition,
    is_deleting,
    name_of,
    resource_version_of,
    spec_of,
    status_of,
    uid_of,
)
from mo_devkit.localcluster.simulator.simulator import Simulator
from mo_operator.kube.client.keepalive import lightkube_client

REAL_KUBECONFIG = os.environ.get("MO_TEST_KUBECONFIG")
"""The real control plane (tests/conftest.py starts one from KUBEBUILDER_ASSETS)."""

REQUIRES_REAL = pytest.mark.skipif(
    REAL_KUBECONFIG is None,
    reason=(
        "differential tests need a real control plane: set KUBEBUILDER_ASSETS to a folder with etcd, "
        "kube-apiserver, kube-controller-manager and kube-scheduler (or MO_TEST_KUBECONFIG to a cluster)"
    ),
)

POOL_LABEL = "localcluster.dev/node-pool"
"""Selects this module's Nodes only: Nodes other suites' simulators left behind are played by no one."""
POOL = "simdiff"
TAINT = {"key": SIMULATED_LABEL, "value": "true", "effect": "NoSchedule"}
SIMULATOR = {
    "nodes": 2,
    "node_prefix": "simdiff-node-",
    "node_labels": {SIMULATED_LABEL: "true", POOL_LABEL: POOL},
    "node_taints": [TAINT],
    "start_delay": 0.05,
    "ready_delay": 0.05,
    "run_duration": 0.1,
    "time_scale": 0.002,
    "storage_class": f"{POOL}-immediate",
}
"""The same Nodes and kubelet timings on both sides; only the controllers differ."""

WATCHED = (POD, STATEFULSET, CONTROLLER_REVISION, DEPLOYMENT, REPLICASET, JOB, PVC, PDB)


@dataclass(frozen=True)
class Event:
    """One change a recorder's informer delivered (old and new as it saw them)."""

    kind: str
    type: str  # ADDED, MODIFIED, DELETED
    old: Obj | None
    new: Obj | None

    @property
    def obj(self) -> Obj:
        """The object as it is after the change (as it was, for a deletion)."""
        return self.new if self.new is not None else self.old or {}


def image_of(template_or_pod_spec: Obj) -> str:
    """The first container's image: what a revision stands for in these scenarios."""
    containers = template_or_pod_spec.get("containers") or [{}]
    return str(containers[0].get("image", ""))


def template_image(obj: Obj) -> str:
    """The image of a workload's (or a ControllerRevision's) pod template."""
    if obj.get("kind") == "ControllerRevision":
        spec = (((obj.get("data") or {}).get("spec") or {}).get("template") or {}).get("spec") or {}
        return image_of(spec)
    return image_of((spec_of(obj).get("template") or {}).get("spec") or {})


def distinct(values: Sequence[Any]) -> list[Any]:
    """``values`` without consecutive repeats: a history of states, not of writes."""
    out: list[Any] = []
    for v in values:
        if not out or out[-1] != v:
            out.append(v)
    return out


class Recorder:
    """The test's own informers on one namespace (and its claims' volumes):
    every change, in the order the API server delivered it."""

    def __init__(self, api: KubeApi, namespace: str) -> None:
        self.namespace = namespace
        self.caches = Caches(api, relist_period=600.0)
        self.events: list[Event] = []
        for kind in WATCHED:
            self.caches.scoped(kind, namespace).add_handler(partial(self._on, kind.kind))
        self.caches[PV].add_handler(self._on_volume)

    def _on(self, kind: str, etype: str, old: Obj | None, new: Obj | None) -> None:
        if old is not None and new is not None and uid_of(old) != uid_of(new):  # replaced between lists
            self.events += [Event(kind, "DELETED", old, None), Event(kind, "ADDED", None, new)]
        else:
            self.events.append(Event(kind, etype, old, new))

    def _on_volume(self, etype: str, old: Obj | None, new: Obj | None) -> None:
        if any(
            (spec_of(o).get("claimRef") or {}).get("namespace") == self.namespace
            for o in (old, new)
            if o is not None
        ):
            self._on("PersistentVolume", etype, old, new)

    async def start(self) -> None:
        await self.caches.start()

    async def stop(self) -> None:
        await self.caches.stop()

    # ------------------------------------------------------------- reading
    def get(self, kind: Kind, name: str) -> Obj | None:
        return self.caches[kind].get(self.namespace if kind.namespaced else "", name)

    def objects(self, kind: Kind) -> list[Obj]:
        if kind is PV:
            return [
                v
                for v in self.caches[PV].objects()
                if (spec_of(v).get("claimRef") or {}).get("namespace") == self.namespace
            ]
        return self.caches[kind].objects(self.namespace)

    def of(self, kind: Kind) -> list[Event]:
        return [e for e in self.events if e.kind == kind.kind]

    def lifecycle(self, kind: Kind, symbol: Callable[[Obj], str]) -> list[str]:
        """``+x`` when an object appears and ``-x`` when its deletion starts
        (deletionTimestamp, or gone without one): the order of the controllers' decisions."""
        out: list[str] = []
        deleting: set[str] = set()
        for e in self.of(kind):
            uid = uid_of(e.obj)
            if e.type == "ADDED":
                out.append(f"+{symbol(e.obj)}")
            if uid in deleting:
                continue
            if (e.new is not None and is_deleting(e.new)) or e.type == "DELETED":
                deleting.add(uid)
                out.append(f"-{symbol(e.obj)}")
        return out

    def history(self, kind: Kind, project: Callable[[Obj], Any], name: str | None = None) -> list[Any]:
        """The distinct successive values of ``project`` over one object's (or all objects') versions."""
        return distinct(
            [project(e.new) for e in self.of(kind) if e.new is not None and name in (None, name_of(e.new))]
        )

    def timeline(self, project: Callable[[Event], str | None]) -> list[str]:
        """Every kind's changes in the order the server made them, projected
        (None: left out), consecutive repeats dropped. resourceVersions are
        opaque to clients, but both servers count one revision for all kinds
        (etcd's), so they order writes across kinds; only a scenario's causally
        ordered writes (one controller's, or what it reacts to) make a stable
        timeline."""
        ordered = sorted(
            (e for e in self.events if e.new is not None), key=lambda e: int(resource_version_of(e.obj))
        )
        return distinct([s for e in ordered if (s := project(e)) is not None])

    def revision_images(self) -> dict[str, str]:
        """ControllerRevision name to the image it records: hashes differ between the sides."""
        return {name_of(r): template_image(r) for r in self.objects(CONTROLLER_REVISION)}


def condition_summary(obj: Obj | None, *types: str) -> list[tuple[str, str, str]]:
    """(type, status, reason) of the named conditions, in that order: what a client reads."""
    conds = status_of(obj or {}).get("conditions")
    out = []
    for t in types:
        c = find_condition(conds, t)
        if c is not None:
            out.append((t, str(c.get("status")), str(c.get("reason") or "")))
    return out


@dataclass
class Side:
    """One control plane, the scenario's namespace on it, and its recorder."""

    name: str
    api: KubeApi
    sim: Simulator
    namespace: str
    recorder: Recorder
    storage_class: str
    uids: dict[str, int] = field(default_factory=dict)

    def place(self, pod_spec: Obj) -> Obj:
        """``pod_spec`` made to run on this module's simulated Nodes."""
        return {
            **pod_spec,
            "tolerations": [{**TAINT, "operator": "Equal"}],
            "nodeSelector": {SIMULATED_LABEL: "true", POOL_LABEL: POOL},
        }

    def ordinal(self, obj: Obj) -> int:
        """1, 2, ... in order of first sight: a stable stand-in for a generated name."""
        return self.uids.setdefault(uid_of(obj), len(self.uids) + 1)

    async def create(self, kind: Kind, obj: Obj) -> Obj:
        obj = {**obj, "metadata": {**obj.get("metadata", {}), "namespace": self.namespace}}
        return await self.api.create(kind, obj)

    async def patch(self, kind: Kind, name: str, patch: Obj) -> Obj:
        return await self.api.patch(kind, self.namespace if kind.namespaced else "", name, patch)

    async def delete(self, kind: Kind, name: str, uid: str | None = None) -> None:
        await self.api.delete(kind, self.namespace if kind.namespaced else "", name, uid=uid)

    def get(self, kind: Kind, name: str) -> Obj | None:
        return self.recorder.get(kind, name)

    async def wait(self, check: Callable[[], Any], what: str, timeout: float = 60.0) -> Any:
        """Until ``check`` (which reads the recorder) returns something truthy."""
        try:
            async with asyncio.timeout(timeout):
                while not (result := check()):
                    await asyncio.sleep(0.05)
        except TimeoutError:
            raise AssertionError(f"{self.name}: not true after {timeout}s: {what}") from None
        return result


async def _start_side(
    name: str,
    client: AsyncClient,
    config: SimulatorConfig,
    namespace: str,
    *,
    own_simulator: Simulator | None,
) -> Side:
    api = KubeApi(client, "simdiff")
    sim = own_simulator if own_simulator is not None else Simulator(client, config)
    if own_simulator is None:
        await sim.start()
    await api.create(NAMESPACE, {"metadata": {"name": namespace}})
    recorder = Recorder(api, namespace)
    await recorder.start()
    assert config.storage_class is not None
    return Side(name, api, sim, namespace, recorder, config.storage_class)


async def _empty_real_namespace(side: Side, timeout: float = 60.0) -> None:
    """Delete the namespace and wait until it and its volumes are gone, while the
    kubelets still run: a real cluster keeps pods Terminating without them."""
    with contextlib.suppress(KubeError):
        await side.api.delete(NAMESPACE, "", side.namespace)

    async def gone() -> bool:
        for pv in side.recorder.objects(PV):
            if status_of(pv).get("phase") == "Released" and not is_deleting(pv):
                with contextlib.suppress(KubeError):  # Retain: nothing else removes it
                    await side.api.delete(PV, "", name_of(pv))
        return await side.api.get(NAMESPACE, "", side.namespace) is None and not side.recorder.objects(PV)

    async with asyncio.timeout(timeout):
        while not await gone():
            await asyncio.sleep(0.2)


@contextlib.asynccontextmanager
async def two_sides(**options: Any) -> AsyncIterator[tuple[Side, Side]]:
    """(embedded, real) with a fresh namespace each; ``options`` change the
    simulators' configuration (a StorageClass's binding mode, say)."""
    assert REAL_KUBECONFIG is not None
    namespace = f"simdiff-{uuid.uuid4().hex[:8]}"
    settings = {**SIMULATOR, **options}
    plane = ControlPlane(simulator_options={"mode": "full", **settings})
    await plane.start()
    embedded_client = plane.client()
    real_client = lightkube_client(KubeConfig.from_file(REAL_KUBECONFIG), field_manager="simdiff")
    kubelets_config = SimulatorConfig(mode="kubelet", **settings)
    sides: list[Side] = []
    try:
        sides.append(
            await _start_side(
                "embedded", embedded_client, plane.simulator.config, namespace, own_simulator=plane.simulator
            )
        )
        sides.append(await _start_side("real", real_client, kubelets_config, namespace, own_simulator=None))
        yield sides[0], sides[1]
    finally:
        try:
            if len(sides) == 2:
                await _empty_real_namespace(sides[1])
        finally:
            for side in sides:
                await side.recorder.stop()
            if len(sides) == 2:
                await _leave_no_nodes(sides[1])
            await plane.stop()
            await embedded_client.close()
            await real_client.close()


async def _leave_no_nodes(side: Side) -> None:
    """Stop the attached kubelets and remove what they registered (Nodes; a
    StorageClass of this module's own), as the real cluster had none of it."""
    await side.sim.stop()
    for node in side.sim.config.node_names():
        with contextlib.suppress(KubeError):
            await side.api.delete(NODE, "", node)
    if side.storage_class.startswith(POOL):
        with contextlib.suppress(KubeError):
            await side.api.delete(STORAGE_CLASS, "", side.storage_class)


async def both(scenario: Callable[[Side], Any], embedded: Side, real: Side) -> tuple[Any, Any]:
    """Run ``scenario`` on both sides at once; the first failure stops both."""
    async with asyncio.TaskGroup() as tg:
        a = tg.create_task(scenario(embedded))
        b = tg.create_task(scenario(real))
    return a.result(), b.result()
