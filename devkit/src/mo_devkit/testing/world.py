"""The world a scenario or a benchmark runs in, the same on the embedded control
plane and on a real API server: a cluster (``SimulatedCluster``: embedded, or
its simulator and simulated MatrixOne attached to a real API server), a
namespace of its own (a benchmark adds more), a client acting as the user, and
kubectl.

``open_world`` is envtest as a library: it starts that cluster, installs our
CRDs and makes the namespace, and on a shared real cluster leaves nothing
behind. A scenario looks inside its cluster (the simulated MatrixOne's model,
the API server's faults), so the cluster runs in its process; a benchmark
times the operator, so its cluster runs in a process of its own
(``cluster_process``). Nothing here relies on what only the embedded server offers: pods are
made to fail through the simulator's rules ConfigMap, which any API server
stores.
"""

from __future__ import annotations

import builtins
import contextlib
import copy
import functools
import subprocess
import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import yaml
from lightkube.config.kubeconfig import KubeConfig

from mo_devkit.localcluster.apiserver.server import ApiServer
from mo_devkit.localcluster.simulator.config import SIMULATED_LABEL
from mo_devkit.localcluster.simulator.rules import RuleSet, rules_configmap
from mo_devkit.simulated.cluster import SimulatedCluster
from mo_operator.api.crdgen import all_crds
from mo_operator.api.install import CRDS, install_crds
from mo_operator.controllers.framework import resources as r
from mo_operator.kube.client.client import ApiClient
from mo_operator.kube.client.resource import Resource

from . import cleanup, manifests
from .cluster_process import ClusterProcess, start_cluster_process
from .concurrency import bounded
from .kubectl import Kubectl
from .timings import FAST_SIMULATOR, MO_SETTINGS
from .waiting import eventually, is_ready, is_settled

Obj = dict[str, Any]
NODES = Resource("", "v1", "Node", "nodes", False)


Cluster = SimulatedCluster | ClusterProcess
"""The cluster in this process (a scenario's), or in a process of its own (a benchmark's)."""


class World:
    """One scenario's (or benchmark's) cluster, namespaces, user client and kubectl."""

    def __init__(
        self,
        cluster: Cluster,
        kubeconfig: Path,
        namespace: str,
        client: ApiClient,
        *,
        real: bool = False,
    ) -> None:
        self.cluster = cluster
        self.kubeconfig = kubeconfig
        self.namespace = namespace
        self.namespaces = [namespace]
        """Every namespace of the world's (removed with it from a real cluster)."""
        self.client = client
        self.real = real
        self.deletions: cleanup.PendingDeletions | None = None
        """The session's record of what it leaves a shared cluster to remove, if it keeps one."""
        self._kubectl = Kubectl(kubeconfig, namespace)

    async def add_namespaces(self, count: int, prefix: str = "bench") -> list[str]:
        """``count`` more namespaces, made 16 at a time (a benchmark puts a cluster or a
        few in each); on a real, shared API server their names are made unique."""
        suffix = f"-{uuid.uuid4().hex[:6]}" if self.real else ""
        first = len(self.namespaces) - 1
        names = [f"{prefix}{i:04d}{suffix}" for i in range(first, first + count)]

        async def create(name: str) -> None:
            await self.client.create(cleanup.NAMESPACES, {"metadata": {"name": name}})

        await bounded(16, [functools.partial(create, ns) for ns in names])
        self.namespaces += names
        return names

    # ------------------------------------------------------------- manifests
    def for_cluster(self, obj: Obj) -> Obj:
        """``obj`` made runnable here (see ``manifests.runnable``)."""
        return manifests.runnable(obj, self.namespace, real=self.real)

    def runnable_set(self, set_spec: Obj) -> Obj:
        """A set's spec (a CN group, say) made runnable here, for a patch that replaces one."""
        set_spec = copy.deepcopy(set_spec)
        if self.real:
            manifests.place(set_spec)
        return set_spec

    def cluster_manifest(self, name: str = "mo", **spec: Any) -> Obj:
        """A minimal MatrixOneCluster, with ``spec`` fields replacing the defaults, runnable here."""
        return self.for_cluster(manifests.cluster_manifest(name, **spec))

    # ---------------------------------------------------------------- actions
    async def kubectl(
        self, *args: str, input: str | None = None, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        """Run kubectl in the scenario's namespace, as a user would (retrying while the API
        server is unreachable, as a user would too)."""
        return await self._kubectl.run_riding_out_restarts(*args, input=input, check=check)

    async def apply(self, obj: Obj) -> None:
        """``kubectl apply`` a manifest, as a user would."""
        await self.kubectl("apply", "-f", "-", input=yaml.safe_dump(obj))

    async def get(self, res: Any, name: str) -> Obj | None:
        return await self.client.get_or_none(res, name, self.namespace)

    async def list(self, res: Any, **labels: str) -> list[Obj]:
        selector = ",".join(f"{k}={v}" for k, v in labels.items()) or None
        return (await self.client.list(res, self.namespace, label_selector=selector)).items

    async def pods(self, **labels: str) -> builtins.list[Obj]:
        """The namespace's pods not being deleted."""
        return [p for p in await self.list(r.PODS, **labels) if not p["metadata"].get("deletionTimestamp")]

    # ------------------------------------------------------------------ waits
    async def wait_ready(self, res: Any, name: str, timeout: float = 60.0) -> Obj:
        return await self._wait(res, name, timeout, "Ready", is_ready)

    async def wait_settled(self, res: Any, name: str, timeout: float = 60.0) -> Obj:
        """Ready and every pod on the current spec (``UpToDate``), at the latest generation."""
        return await self._wait(res, name, timeout, "settled", is_settled)

    async def _wait(
        self, res: Any, name: str, timeout: float, what: str, done: Callable[[Obj | None], bool]
    ) -> Obj:
        last: list[Obj | None] = [None]

        async def check() -> Obj | None:
            last[0] = await self.get(res, name)
            return last[0] if done(last[0]) else None

        try:
            found: Obj = await eventually(check, timeout)
        except AssertionError:
            conditions = ((last[0] or {}).get("status") or {}).get("conditions")
            raise AssertionError(
                f"{res.kind} {name} not {what} after {timeout}s; conditions: {conditions}"
                f"\n{await self.workloads()}"
            ) from None
        return found

    async def workloads(self) -> str:
        """The namespace's StatefulSets and Deployments as the server holds them, a line each:
        a wait that timed out then tells whether the workload controllers or the operator lag."""
        lines = []
        for res in (r.STATEFULSETS, r.DEPLOYMENTS):
            for obj in await self.list(res):
                meta, spec, status = obj["metadata"], obj.get("spec") or {}, obj.get("status") or {}
                revisions = (status.get("currentRevision"), status.get("updateRevision"))
                lines.append(
                    f"  {res.kind} {meta['name']}: generation {meta.get('generation')} observed"
                    f" {status.get('observedGeneration')}, replicas {spec.get('replicas')} status"
                    f" {status.get('replicas')}/ready {status.get('readyReplicas')}/updated"
                    f" {status.get('updatedReplicas')}, revisions {revisions}"
                )
        return "\n".join(["workloads on the server:", *lines])

    # ----------------------------------------------------------------- faults
    async def restart_api_server(self) -> None:
        """Stop the embedded API server and start a new one on the same port from its
        data directory, as kube-apiserver restarts over etcd: objects and the
        resourceVersion counter survive, watches and the watch cache do not."""
        assert isinstance(self.cluster, SimulatedCluster), "needs the cluster in this process"
        control_plane = self.cluster.control_plane
        assert control_plane is not None and control_plane.server.data_dir is not None, "needs a data dir"
        old = control_plane.server
        await old.stop()
        control_plane.server = ApiServer(
            port=old.port,
            data_dir=old.data_dir,
            history_size=old.store.history_size,
            bookmark_interval=old.watch_settings.bookmark_interval,
        )
        await control_plane.server.start()

    async def set_simulator_rules(self, rules: RuleSet) -> None:
        """Make chosen pods fail (image pull errors, crashes, never ready) by rule,
        through the rules ConfigMap (which works against a real API server too)."""
        body = rules_configmap(rules)
        namespace = body["metadata"]["namespace"]
        if await self.client.get_or_none(cleanup.NAMESPACES, namespace) is None:
            await self.client.create(cleanup.NAMESPACES, {"metadata": {"name": namespace}})
            if self.deletions is not None:
                self.deletions.made_by_session(cleanup.NAMESPACES, namespace)
        await self.client.apply(body, resource=r.CONFIGMAPS, force=True)

    # ---------------------------------------------------------------- cleanup
    async def remove_our_objects(self, wait: float) -> None:
        """Delete our objects in the world's namespaces, finalized by the operator within
        ``wait`` seconds (0: none runs) or stripped of their finalizers after (see ``cleanup``)."""
        await cleanup.remove_our_objects(self.client, self.namespaces, wait)

    async def delete_namespaces(self, timeout: float = 60.0) -> None:
        """Delete the world's namespaces and wait until they and their volumes are gone
        (see ``cleanup``)."""
        await cleanup.delete_namespaces(self.client, self.namespaces, timeout)


def _in_process(real_kubeconfig: str | None, workdir: Path) -> SimulatedCluster:
    """The world's cluster in this process; its simulated MatrixOne's address book in
    ``workdir``, for an operator the scenario runs as a child process."""
    book = workdir / "mo-addresses.json"
    if real_kubeconfig:  # the kubelets' timing; the controllers are the real ones
        return SimulatedCluster(
            attach_to=real_kubeconfig,
            simulator_options=FAST_SIMULATOR,
            mo_settings=MO_SETTINGS,
            refresh_interval=0.05,
            address_book=book,
        )
    return SimulatedCluster(
        data_dir=workdir / "etcd",  # so a scenario can restart the API server over its state
        simulator_options=FAST_SIMULATOR,
        mo_settings=MO_SETTINGS,
        refresh_interval=0.05,
        address_book=book,
    )


async def _start(
    workdir: Path, real_kubeconfig: str | None, apart: bool, simulator: bool
) -> tuple[Cluster, Path]:
    """The world's cluster, started, and its kubeconfig (see ``open_world``)."""
    if apart:
        process = await start_cluster_process(workdir, real_kubeconfig, simulator=simulator)
        return process, process.kubeconfig
    if not simulator:
        raise ValueError("a cluster in this process always simulates: ask for one apart")
    cluster = _in_process(real_kubeconfig, workdir)
    if real_kubeconfig:
        await cluster.start()
        return cluster, Path(real_kubeconfig)
    await cluster.start(workdir / "kubeconfig")
    return cluster, workdir / "kubeconfig"


@contextlib.asynccontextmanager
async def open_world(
    workdir: Path,
    real_kubeconfig: str | None = None,
    *,
    apart: bool = False,
    simulator: bool = True,
    finalize_wait: float = 5.0,
    deletions: cleanup.PendingDeletions | None = None,
) -> AsyncIterator[World]:
    """A fresh world in ``workdir``: an embedded cluster of its own, or the real cluster
    ``real_kubeconfig`` names (shared: the world has its own namespaces there, and its
    objects and namespaces are removed at the end, its objects finalized by an operator
    still running within ``finalize_wait`` seconds, 0 when none is left). The world
    waits until its namespaces are gone, unless it hands them to ``deletions``, which
    a test session checks once, at its end.

    ``apart``: the cluster runs in a process of its own, with the timings of
    ``mo-operator control-plane --fast`` (see ``cluster_process``); ``simulator=False``
    there: an API server alone, nothing runs pods. Else it runs in this process, with
    the kit's timings (``timings``)."""
    cluster, kubeconfig = await _start(workdir, real_kubeconfig, apart, simulator)
    client = ApiClient(KubeConfig.from_file(str(kubeconfig)), field_manager="e2e-user", qps=None)
    world = World(cluster, kubeconfig, f"e2e-{uuid.uuid4().hex[:8]}", client, real=bool(real_kubeconfig))
    world.deletions = deletions if real_kubeconfig else None
    try:
        await install_crds(client)
        await client.create(cleanup.NAMESPACES, {"metadata": {"name": world.namespace}})
        yield world
    finally:
        try:
            if real_kubeconfig:  # a shared cluster: leave nothing behind, nothing Terminating
                await world.remove_our_objects(wait=finalize_wait)
                if deletions is not None:
                    await deletions.start(client, world.namespaces)
                else:  # a benchmark's world holds hundreds of namespaces
                    await world.delete_namespaces(timeout=60.0 + len(world.namespaces))
        finally:
            await client.close()
            await cluster.stop()


@contextlib.asynccontextmanager
async def joined_world(kubeconfig: Path) -> AsyncIterator[World]:
    """The world another process opened, seen from a child process it spawned (a fresh
    operator process that a benchmark measures there): nothing is made or removed."""
    cluster = ClusterProcess.joined(kubeconfig)
    client = ApiClient(KubeConfig.from_file(str(kubeconfig)), field_manager="e2e-user", qps=None)
    try:
        yield World(cluster, kubeconfig, "default", client)
    finally:
        await client.close()
        await cluster.stop()


async def remove_crds_and_simulated_nodes(real_kubeconfig: str) -> None:
    """At the end of a session on a real cluster: our CRDs deleted (and gone, so that a
    next session does not find them Terminating), and the simulated Nodes, which
    outlive each world's simulator (the next one takes them over) but have no kubelet
    once the session ends."""
    client = ApiClient(KubeConfig.from_file(real_kubeconfig), field_manager="e2e-user")
    try:
        names = [crd["metadata"]["name"] for crd in all_crds()]
        for name in names:
            await client.delete(CRDS, name, missing_ok=True)
        nodes = await client.list(NODES, label_selector=f"{SIMULATED_LABEL}=true")
        for node in nodes.items:
            await client.delete(NODES, node["metadata"]["name"], missing_ok=True)

        async def gone() -> bool:
            return all([await client.get_or_none(CRDS, name) is None for name in names])

        await eventually(gone, timeout=60, message="the CRDs are deleted")
    finally:
        await client.close()
