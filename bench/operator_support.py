"""Shared load of the operator benchmarks (``bench/operator_*.py``).

- **The cluster under the operator** (``target``): by default
  ``mo-operator control-plane --fast`` in its own process (API server,
  workload simulator with fast timings, simulated MatrixOne, whose admin URL
  the kubeconfig advertises), so the operator under test shares neither an
  event loop nor a CPU's worth of Python with it. With ``MO_TEST_KUBECONFIG``
  the API server is that cluster's, and this module runs the simulator in
  kubelet mode plus the simulated MatrixOne in a child process
  (``python bench/operator_support.py attach ...``) that advertises the
  admin URL in a private copy of the kubeconfig.
- **The operator under test** (``OperatorUnderTest``): the product's
  ``Operator`` in this process, leader election off, no client-side rate
  limit (``qps=None``) unless asked, instrumented from outside: its
  controllers' reconcile functions and its client's write method are
  wrapped (nothing in the product changes), so a benchmark can tell when it
  first reconciled, when it is idle, and which write answered what.
- **Loads**: ``N`` MatrixOneClusters converged by that operator
  (``converged_load``), and the objects one of them consists of, captured
  through the API (``capture``) so that they can be created again, renamed,
  without the operator (``replicate``, ``create_objects``).

Writes are always counted on the operator's own client (``ApiClient.writes``
and the wrapper), never from the server's request log, so every figure can
be taken on a real API server too.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import copy
import json
import os
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from lightkube.config.kubeconfig import KubeConfig

from bench_support import start_real_control_plane
from mo_operator.api.install import install_crds
from mo_operator.cli.main import FAST_SIMULATOR
from mo_operator.controllers.common import resources as r
from mo_operator.controllers.common.env import MANAGED_SELECTOR, OUR_KINDS, OWNED_KINDS
from mo_operator.controllers.common.env import Settings as OperatorSettings
from mo_operator.controllers.operator import FIELD_MANAGER, Operator, OperatorConfig
from mo_operator.kube.client import ApiClient, Send, WriteCall
from mo_operator.kube.conditions import get_condition
from mo_operator.kube.controller import Controller, Request, Result
from mo_operator.kube.errors import ApiError
from mo_operator.kube.informer import SharedInformer
from mo_operator.kube.informer_factory import InformerFactory
from mo_operator.kube.resource import Resource
from mo_operator.localcluster.simulator.config import SIMULATED_LABEL
from mo_operator.matrixone.admin import AdminError
from mo_operator.matrixone.simulated.remote import discover

Obj = dict[str, Any]

start_real_control_plane()
REAL_KUBECONFIG = os.environ.get("MO_TEST_KUBECONFIG")
"""A real API server to run against instead of the embedded control plane
(started here from ``KUBEBUILDER_ASSETS``, or an existing cluster)."""

GROUP_VERSION = "core.matrixorigin.io/v1alpha1"
VERSION = "2.0.0"
SIMULATED_STORAGE_CLASS = "localcluster-simulated"
NAMESPACES = Resource("", "v1", "Namespace", "namespaces", False)

ATTACHED_SIMULATOR = FAST_SIMULATOR
"""The kubelet-mode simulator's timing on a real API server (as ``control-plane --fast``)."""

CACHED_KINDS: tuple[Resource, ...] = tuple(res for res in OUR_KINDS + OWNED_KINDS if res.namespaced)
"""What the operator caches (our kinds in full, the built-in kinds it owns by
label), namespaced ones: what a MatrixOneCluster consists of."""
STATUS_KINDS = {*OUR_KINDS, r.PODS, r.STATEFULSETS, r.DEPLOYMENTS, r.PVCS}
"""Kinds whose status a create leaves out (written through ``/status`` after)."""
RESOURCES_BY_KIND = {v.kind: v for v in vars(r).values() if isinstance(v, Resource)}
NON_ACTOR_FOR = {"cnstore": r.PODS}
"""The kind each controller that is not an Actor reconciles (its ``For``)."""


def log(message: str) -> None:
    """Progress on stderr (stdout carries the figures)."""
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def load_average() -> float:
    """The 1-minute load average, recorded with each figure: the machine may be shared."""
    return round(os.getloadavg()[0], 2)


# ------------------------------------------------------------------- the cluster
@dataclass(frozen=True)
class Target:
    kubeconfig: Path
    """Kubeconfig for every client (advertises the simulated MatrixOne when there is one)."""
    pid: int | None
    """The embedded control plane's process (None on a real API server)."""
    real: bool


async def _wait_for_kubeconfig(path: Path, proc: asyncio.subprocess.Process, need_admin: bool) -> None:
    for _ in range(600):
        if proc.returncode is not None:
            raise RuntimeError(f"the control plane exited with {proc.returncode}")
        if path.exists() and path.stat().st_size > 0:
            try:
                if not need_admin or discover(path) is not None:
                    return
            except Exception:  # being written: read again
                pass
        await asyncio.sleep(0.05)
    raise RuntimeError("the control plane did not start")


@contextlib.asynccontextmanager
async def target(*, simulator: bool = True) -> AsyncIterator[Target]:
    """The cluster the operator runs against (see the module doc);
    ``simulator=False``: an API server alone (nothing runs pods)."""
    if REAL_KUBECONFIG and not simulator:
        yield Target(Path(REAL_KUBECONFIG), None, True)
        return
    with tempfile.TemporaryDirectory() as d:
        kubeconfig = Path(d) / "kubeconfig"
        if REAL_KUBECONFIG:
            args = [str(Path(__file__).resolve()), "attach", REAL_KUBECONFIG, str(kubeconfig)]
        else:
            args = ["-m", "mo_operator.cli.main", "--log-level", "ERROR", "control-plane"]
            args += ["--kubeconfig", str(kubeconfig), "--fast" if simulator else "--no-simulator"]
        proc = await asyncio.create_subprocess_exec(
            sys.executable, *args, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL
        )
        try:
            await _wait_for_kubeconfig(kubeconfig, proc, need_admin=simulator)
            yield Target(kubeconfig, None if REAL_KUBECONFIG else proc.pid, REAL_KUBECONFIG is not None)
        finally:
            if proc.returncode is None:
                proc.terminate()
                try:
                    await asyncio.wait_for(proc.wait(), 20)
                except TimeoutError:
                    proc.kill()
                    await proc.wait()


def client_of(t: Target, field_manager: str = "bench", **kw: Any) -> ApiClient:
    """A client without client-side rate limit."""
    return ApiClient(KubeConfig.from_file(str(t.kubeconfig)), field_manager=field_manager, qps=None, **kw)


async def prepare(client: ApiClient, t: Target, count: int) -> list[str]:
    """CRDs installed and ``count`` new namespaces (uniquely named on a real API server)."""
    await install_crds(client)
    suffix = f"-{uuid.uuid4().hex[:6]}" if t.real else ""
    names = [f"bench{i:04d}{suffix}" for i in range(count)]
    await bounded(16, [lambda ns=ns: client.create(NAMESPACES, {"metadata": {"name": ns}}) for ns in names])
    return names


async def cleanup(client: ApiClient, t: Target, namespaces: Iterable[str], timeout: float = 120.0) -> None:
    """On a real API server, remove what we made and wait until it is gone (an
    embedded one just exits). No operator is left to remove its finalizers, from
    our objects or from CN pods (their drain), so they go first; a pod still
    Terminating (its kubelet may be gone with the simulator) is deleted at once,
    as ``kubectl delete --force`` would."""
    if not t.real:
        return
    namespaces = list(namespaces)
    for ns in namespaces:
        for res in OUR_KINDS:
            if not res.namespaced:
                continue
            for obj in (await client.list(res, ns)).items:
                if obj["metadata"].get("finalizers"):
                    with contextlib.suppress(ApiError):
                        await client.patch(
                            res, obj["metadata"]["name"], {"metadata": {"finalizers": None}}, ns
                        )
        await client.delete(NAMESPACES, ns, missing_ok=True)
    async with asyncio.timeout(timeout):
        while left := [ns for ns in namespaces if await client.get_or_none(NAMESPACES, ns) is not None]:
            for ns in left:
                for pod in (await client.list(r.PODS, ns)).items:
                    await _force_out(client, pod, ns)
            await asyncio.sleep(0.5)


async def _force_out(client: ApiClient, pod: Mapping[str, Any], ns: str) -> None:
    meta = pod["metadata"]
    with contextlib.suppress(ApiError):  # gone meanwhile
        ours = [f for f in meta.get("finalizers") or () if f.startswith("matrixorigin.io/")]
        if ours:
            kept = [f for f in meta["finalizers"] if f not in ours]
            await client.patch(r.PODS, meta["name"], {"metadata": {"finalizers": kept or None}}, ns)
        if meta.get("deletionTimestamp"):
            await client.delete(r.PODS, meta["name"], ns, grace_period_seconds=0)


async def bounded(concurrency: int, jobs: Iterable[Callable[[], Awaitable[Any]]]) -> None:
    """Run ``jobs`` (coroutine functions) with at most ``concurrency`` at once."""
    sem = asyncio.Semaphore(concurrency)

    async def one(job: Callable[[], Awaitable[Any]]) -> None:
        async with sem:
            await job()

    await asyncio.gather(*(one(j) for j in jobs))


# ------------------------------------------------------------------- clusters
@dataclass(frozen=True)
class Shape:
    """Replicas of each component of a benchmark cluster."""

    log: int = 1
    tn: int = 1
    cn: int = 1
    proxy: int = 1

    @property
    def pods(self) -> int:
        return self.log + self.tn + self.cn + self.proxy


SMALL = Shape()
"""The default: every kind of object a cluster has, one pod of each component
(the simulated kubelet, not the operator, pays per pod)."""


@dataclass(frozen=True, order=True)
class ClusterRef:
    namespace: str
    name: str


def layout(count: int, namespaces: Sequence[str]) -> list[ClusterRef]:
    """``count`` clusters spread evenly over ``namespaces``, each uniquely named."""
    return [ClusterRef(namespaces[i % len(namespaces)], f"mo{i:04d}") for i in range(count)]


def cluster_manifest(ref: ClusterRef, shape: Shape, real: bool) -> Obj:
    """A MatrixOneCluster of ``shape`` (log service, TN, a CN group ``tp``, a proxy).
    On a real API server its pods go to the simulated nodes and volumes to their class."""
    spec: Obj = {
        "version": VERSION,
        "logService": {
            "replicas": shape.log,
            "volume": {"size": "1Gi"},
            "sharedStorage": {"s3": {"path": f"bucket/{ref.namespace}/{ref.name}"}},
        },
        "tn": {"replicas": shape.tn},
        "cnGroups": [{"name": "tp", "replicas": shape.cn, "scalingConfig": {"minDelaySeconds": 0}}],
        "proxy": {"replicas": shape.proxy},
    }
    if real:
        toleration = {"key": SIMULATED_LABEL, "operator": "Equal", "value": "true", "effect": "NoSchedule"}
        for s in [spec["logService"], spec["tn"], spec["proxy"], *spec["cnGroups"]]:
            s["overlay"] = {"tolerations": [toleration]}
            s["nodeSelector"] = {SIMULATED_LABEL: "true"}
        spec["logService"]["volume"]["storageClassName"] = SIMULATED_STORAGE_CLASS
    return {
        "apiVersion": GROUP_VERSION,
        "kind": "MatrixOneCluster",
        "metadata": {"name": ref.name, "namespace": ref.namespace},
        "spec": spec,
    }


async def create_clusters(client: ApiClient, t: Target, clusters: Sequence[ClusterRef], shape: Shape) -> None:
    """Create the clusters as a user would, 16 requests at a time."""
    await bounded(
        16,
        [
            lambda c=c: client.create(r.MATRIXONE_CLUSTERS, cluster_manifest(c, shape, t.real))
            for c in clusters
        ],
    )


def is_ready(obj: Mapping[str, Any] | None) -> bool:
    """Ready=True, reported for the latest generation."""
    if obj is None:
        return False
    status = obj.get("status") or {}
    ready = get_condition(status.get("conditions") or (), "Ready")
    observed = int(status.get("observedGeneration") or 0) >= int(obj["metadata"].get("generation") or 0)
    return bool(ready and ready.get("status") == "True" and observed)


class Watcher:
    """The user's view of the MatrixOneClusters (an informer on a client of its
    own), recording when each first became Ready."""

    def __init__(self, t: Target) -> None:
        self.client = client_of(t, "bench-watcher")
        self.informer: SharedInformer = InformerFactory(self.client).informer(r.MATRIXONE_CLUSTERS)
        self.first_ready: dict[ClusterRef, float] = {}
        self.informer.add_event_handler(self._seen, lambda _old, new: self._seen(new), lambda _obj: None)

    def _seen(self, obj: Mapping[str, Any]) -> None:
        ref = ClusterRef(obj["metadata"]["namespace"], obj["metadata"]["name"])
        if ref not in self.first_ready and is_ready(obj):
            self.first_ready[ref] = time.perf_counter()

    def get(self, ref: ClusterRef) -> Mapping[str, Any] | None:
        return self.informer.get(ref.namespace, ref.name)

    async def start(self) -> None:
        self.informer.start()
        await self.informer.wait_synced()

    async def wait_all_ready(self, clusters: Sequence[ClusterRef], timeout: float) -> float:
        """Wait until every cluster is Ready; return when the last one became so."""
        deadline = time.perf_counter() + timeout
        while not all(c in self.first_ready for c in clusters):
            if time.perf_counter() > deadline:
                missing = [c for c in clusters if c not in self.first_ready]
                raise TimeoutError(f"{len(missing)} of {len(clusters)} clusters not Ready after {timeout}s")
            await asyncio.sleep(0.02)
        return max(self.first_ready[c] for c in clusters)

    async def stop(self) -> None:
        await self.informer.stop()
        await self.client.close()


# ------------------------------------------------------------ the operator
class Unreachable:
    """The admin interface of an operator with no MatrixOne to talk to (memory,
    cold start): every call fails as an unreachable HAKeeper would."""

    def admin(self, discovery_address: str) -> Unreachable:
        return self

    def __getattr__(self, name: str) -> Callable[..., Awaitable[Any]]:
        async def fail(*_a: Any, **_kw: Any) -> Any:
            raise AdminError(f"{name}: no MatrixOne in this benchmark")

        return fail


@dataclass(frozen=True)
class Write:
    """One write call of the operator's client."""

    issued: float
    done: float
    verb: str
    kind: str
    namespace: str
    name: str
    subresource: str | None
    body: Any


@dataclass
class Instrumentation:
    first_reconcile: float | None = None
    in_flight: int = 0
    reconciles: int = 0
    finished_at: dict[tuple[str, Request], float] = field(default_factory=dict)
    writes: list[Write] = field(default_factory=list)
    on_write: list[Callable[[Write], None]] = field(default_factory=list)


def operator_settings(args: argparse.Namespace) -> OperatorSettings:
    return replace(
        OperatorSettings(), poll_seconds=args.poll_seconds, busy_poll_seconds=args.busy_poll_seconds
    )


def for_kind(controller: Controller) -> Resource:
    """The kind a controller reconciles (its ``For``)."""
    kind = getattr(controller.reconcile, "kind", None)  # an ActorReconciler knows it
    res = RESOURCES_BY_KIND.get(kind) if isinstance(kind, str) else NON_ACTOR_FOR.get(controller.name)
    if res is None:
        raise LookupError(
            f"which kind does controller {controller.name} reconcile? (add it to NON_ACTOR_FOR)"
        )
    return res


class OperatorUnderTest:
    """The product's ``Operator`` in this process, watched from outside."""

    def __init__(
        self,
        t: Target | None,
        *,
        client: ApiClient | None = None,
        admin: Any = None,
        settings: OperatorSettings | None = None,
        workers: int = 4,
        qps: float | None = None,
        record_writes: bool = True,
    ) -> None:
        if client is None:
            assert t is not None
            config = KubeConfig.from_file(str(t.kubeconfig))
            client = ApiClient(config, field_manager=FIELD_MANAGER, qps=qps, user_agent="bench-operator")
        self.client = client
        if admin is None and t is not None:
            admin = discover(t.kubeconfig)
        self.admin = admin if admin is not None else Unreachable()
        config = OperatorConfig(settings=settings or OperatorSettings(), workers=workers)
        self.operator = Operator(self.client, self.admin, config)
        self.seen = Instrumentation()
        self.kinds = {c.name: for_kind(c) for c in self.controllers}
        self._task: asyncio.Task[None] | None = None
        for controller in self.controllers:
            self._wrap_reconcile(controller)
        if record_writes:
            self._wrap_writes()

    @property
    def controllers(self) -> list[Controller]:
        return self.operator.controllers

    def _wrap_reconcile(self, controller: Controller) -> None:
        inner, seen, name = controller.reconcile, self.seen, controller.name

        async def reconcile(req: Request) -> Result | None:
            if seen.first_reconcile is None:
                seen.first_reconcile = time.perf_counter()
            seen.in_flight += 1
            try:
                return await inner(req)
            finally:
                seen.in_flight -= 1
                seen.reconciles += 1
                seen.finished_at[(name, req)] = time.perf_counter()

        controller.reconcile = reconcile

    def _wrap_writes(self) -> None:
        seen = self.seen

        async def record(call: WriteCall, send: Send) -> Obj:
            issued = time.perf_counter()
            result = await send()
            w = Write(
                issued,
                time.perf_counter(),
                call.verb,
                call.resource.kind,
                call.namespace or "",
                call.name or "",
                call.subresource,
                call.body,
            )
            seen.writes.append(w)
            for hook in seen.on_write:
                hook(w)
            return result

        self.client.write_hooks.append(record)

    def total_writes(self) -> int:
        return sum(self.client.writes.values())

    def launch(self) -> asyncio.Task[None]:
        """Run the operator (``Operator.run``) in a task."""
        self._task = asyncio.create_task(self.operator.run(), name="operator-under-test")
        return self._task

    async def start(self) -> None:
        """Run the operator; return once its caches are synced."""
        self._task = self.launch()
        while not self.operator.informers.has_synced():
            if self._task.done():
                self._task.result()
            await asyncio.sleep(0.01)

    async def stop(self) -> None:
        if self._task is not None:
            self.operator.stop()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._task, 60)
        await self.operator.recorder.close()
        await self.client.close()
        close = getattr(self.admin, "close", None)
        if close is not None and not isinstance(self.admin, Unreachable):
            await close()

    def idle(self) -> bool:
        """No key queued and no reconcile running (keys waiting on a timer,
        such as a ready set's periodic look at MatrixOne, do not count)."""
        return self.seen.in_flight == 0 and all(len(c.queue) == 0 for c in self.controllers)

    async def wait_idle(self, timeout: float = 120.0) -> None:
        deadline = time.perf_counter() + timeout
        while not self.idle():
            if time.perf_counter() > deadline:
                raise TimeoutError("the operator did not become idle")
            await asyncio.sleep(0.005)

    async def wait_quiet(self, quiet: float, timeout: float) -> bool:
        """Until ``quiet`` seconds pass without a write of the operator's, and
        it is idle; False if it kept writing for ``timeout`` seconds."""
        deadline = time.perf_counter() + timeout
        last, since = self.total_writes(), time.perf_counter()
        while time.perf_counter() - since < quiet or not self.idle():
            if time.perf_counter() > deadline:
                return False
            await asyncio.sleep(0.05)
            if self.total_writes() != last:
                last, since = self.total_writes(), time.perf_counter()
        return True

    def resync(self) -> list[tuple[str, Request]]:
        """Enqueue every cached object of every controller's kind, as a
        periodic resync would; return the (controller, request) pairs."""
        enqueued = []
        for controller in self.controllers:
            for obj in self.operator.caches.list(self.kinds[controller.name]):
                meta = obj["metadata"]
                req = Request(meta.get("namespace") or "", meta["name"])
                controller.queue.add(req)
                enqueued.append((controller.name, req))
        return enqueued


# --------------------------------------------------------------- objects
_SERVER_SET = (
    "uid",
    "resourceVersion",
    "creationTimestamp",
    "generation",
    "managedFields",
    "selfLink",
    "ownerReferences",  # the uids of another server's objects
    "finalizers",  # nothing would remove ours
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
)


def clean(obj: Mapping[str, Any]) -> tuple[Obj, Obj | None]:
    """``obj`` as a client creates it (no server-set metadata, no owner
    references, no finalizers), and its status apart."""
    body = copy.deepcopy(dict(obj))
    meta = body["metadata"]
    for key in _SERVER_SET:
        meta.pop(key, None)
    status = body.pop("status", None)
    spec = body.get("spec") or {}
    if body.get("kind") == "Pod":
        spec.pop("nodeName", None)  # bound to a node that may not exist there
    if body.get("kind") == "PersistentVolumeClaim":
        spec.pop("volumeName", None)
    if body.get("kind") == "Service":
        spec.pop("clusterIP", None)
        spec.pop("clusterIPs", None)
    return body, status


@dataclass(frozen=True)
class Captured:
    res: Resource
    body: Obj
    status: Obj | None
    by_operator: bool
    """Made by the operator, not by a workload controller (the pods of
    StatefulSets...) or by the user (see ``made_by_operator``)."""


def made_by_operator(obj: Mapping[str, Any]) -> bool:
    """The object's controller owner is one of our kinds; or it has none (a
    BucketClaim outlives its LogSet on purpose), is not a MatrixOneCluster
    (the user's), and the operator's field manager manages some of it."""
    meta = obj["metadata"]
    owner = next((ref for ref in meta.get("ownerReferences") or () if ref.get("controller")), None)
    if owner is not None:
        return owner.get("kind") in {res.kind for res in OUR_KINDS}
    managers = {entry.get("manager") for entry in meta.get("managedFields") or ()}
    return obj.get("kind") != r.MATRIXONE_CLUSTERS.kind and FIELD_MANAGER in managers


async def capture(client: ApiClient, namespaces: Iterable[str]) -> list[Captured]:
    """Every object of ``namespaces`` the operator caches, in creation order."""
    found: list[tuple[int, Captured]] = []
    for ns in namespaces:
        for res in CACHED_KINDS:
            selector = MANAGED_SELECTOR if res in OWNED_KINDS else None
            for obj in (await client.list(res, ns, label_selector=selector)).items:
                by_operator = made_by_operator(obj)
                body, status = clean(obj)
                rv = int(obj["metadata"]["resourceVersion"])
                found.append((rv, Captured(res, body, status, by_operator)))
    return [c for _, c in sorted(found, key=lambda pair: pair[0])]


def replicate(template: Sequence[Captured], old: ClusterRef, new: ClusterRef) -> list[Captured]:
    """The objects of cluster ``old`` as those of cluster ``new`` (the name
    substituted everywhere, the namespace set)."""
    text = json.dumps([[c.body, c.status] for c in template])
    text = text.replace(old.name, new.name).replace(old.namespace, new.namespace)
    out = []
    for c, (body, status) in zip(template, json.loads(text), strict=True):
        meta = body["metadata"]
        meta["namespace"] = new.namespace
        if new.name not in meta["name"]:  # not named after its cluster (a BucketClaim): make it unique
            meta["name"] = f"{meta['name'][: 62 - len(new.name)]}-{new.name}"
        out.append(Captured(c.res, body, status, c.by_operator))
    return out


async def create_objects(
    client: ApiClient, objects: Sequence[Captured], concurrency: int, *, with_status: bool
) -> None:
    """Create ``objects`` (then write their status, when asked), ``concurrency`` at a time."""

    async def one(c: Captured) -> None:
        await client.create(c.res, c.body)
        if with_status and c.status and c.res in STATUS_KINDS:
            meta = c.body["metadata"]
            await client.patch(
                c.res, meta["name"], {"status": c.status}, meta["namespace"], subresource="status"
            )

    await bounded(concurrency, [lambda c=c: one(c) for c in objects])


# ---------------------------------------------------------------- the N-cluster load
@dataclass
class Load:
    """MatrixOneClusters converged by a running operator."""

    target: Target
    user: ApiClient
    namespaces: list[str]
    clusters: list[ClusterRef]
    operator: OperatorUnderTest
    watcher: Watcher
    started: float
    all_ready: float

    @property
    def converge_seconds(self) -> float:
        return self.all_ready - self.started


@contextlib.asynccontextmanager
async def converged_load(
    count: int,
    *,
    shape: Shape = SMALL,
    settings: OperatorSettings | None = None,
    workers: int = 4,
    qps: float | None = None,
    timeout: float = 900.0,
) -> AsyncIterator[Load]:
    """``count`` clusters, one per namespace, applied to a running, synced
    operator, until all are Ready. ``started`` is taken just before the
    first one is created."""
    async with target() as t:
        user = client_of(t, "bench-user")
        namespaces = await prepare(user, t, count)
        clusters = layout(count, namespaces)
        op = OperatorUnderTest(t, settings=settings, workers=workers, qps=qps)
        watcher = Watcher(t)
        try:
            await op.start()
            await watcher.start()
            log(f"creating {count} MatrixOneClusters ({shape.pods} pods each)")
            started = time.perf_counter()
            await create_clusters(user, t, clusters, shape)
            all_ready = await watcher.wait_all_ready(clusters, timeout)
            log(f"{count} clusters Ready after {all_ready - started:.1f}s")
            yield Load(t, user, namespaces, clusters, op, watcher, started, all_ready)
        finally:
            await op.stop()
            await watcher.stop()
            await cleanup(user, t, namespaces)
            await user.close()


async def template_cluster(settings: OperatorSettings | None = None) -> tuple[ClusterRef, list[Captured]]:
    """The objects of one converged cluster (of the default shape), for
    benchmarks that create many clusters' worth of objects without the operator."""
    async with converged_load(1, settings=settings) as load:
        if not await load.operator.wait_quiet(1.0, timeout=30.0):
            log("the template cluster's operator kept writing; capturing anyway")
        captured = await capture(load.user, load.namespaces)
        return load.clusters[0], captured


async def populate(
    client: ApiClient,
    t: Target,
    template: tuple[ClusterRef, Sequence[Captured]],
    count: int,
    *,
    per_namespace: int,
    with_status: bool = True,
    concurrency: int = 32,
    batch: int = 50,
) -> tuple[list[str], int]:
    """``count`` clusters' worth of the template's objects (``per_namespace``
    clusters a namespace), created through the API, ``batch`` clusters at a
    time; the namespaces and the number of objects."""
    namespaces = await prepare(client, t, -(-count // per_namespace))
    old, objects = template
    refs = layout(count, namespaces)
    made = 0
    for start in range(0, count, batch):
        copies = [c for ref in refs[start : start + batch] for c in replicate(objects, old, ref)]
        await create_objects(client, copies, concurrency, with_status=with_status)
        made += len(copies)
        log(f"created {min(count, start + batch)} clusters' objects ({made})")
    return namespaces, made


async def run_child(script: Path, *args: str, timeout: float = 600.0) -> dict[str, Any]:
    """Run ``script`` with ``args`` in a fresh Python process; its last line of
    output, as JSON."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, str(script), *args, stdout=asyncio.subprocess.PIPE
    )
    out, _ = await asyncio.wait_for(proc.communicate(), timeout)
    if proc.returncode != 0:
        raise RuntimeError(f"{script.name} {' '.join(args)} exited with {proc.returncode}")
    found: dict[str, Any] = json.loads(out.decode().strip().splitlines()[-1])
    return found


# ------------------------------------------------------------------- arguments
def add_operator_arguments(parser: argparse.ArgumentParser) -> None:
    defaults = OperatorSettings()
    parser.add_argument("--workers", type=int, default=4, help="concurrent reconciles per controller")
    parser.add_argument("--qps", type=float, default=None, help="client rate limit (default: none)")
    parser.add_argument("--poll-seconds", type=float, default=defaults.poll_seconds)
    parser.add_argument("--busy-poll-seconds", type=float, default=defaults.busy_poll_seconds)
    parser.add_argument(
        "--converge-timeout", type=float, default=900.0, help="longest the clusters may take to be Ready"
    )


def common(args: argparse.Namespace) -> dict[str, Any]:
    """What every figure records about how it was taken."""
    return {
        "workers": args.workers,
        "qps": args.qps,
        "server": "real" if REAL_KUBECONFIG else "embedded",
        "loadavg": load_average(),
    }


# --------------------------------------------------------------- the attached simulator
async def _attach(real_kubeconfig: str, out: str) -> None:
    """Run the kubelet-mode simulator and the simulated MatrixOne against a
    real API server; write ``out``: a copy of its kubeconfig advertising the
    admin URL. Runs until SIGTERM."""
    import shutil
    import signal

    from mo_operator.matrixone.simulated.cluster import SimulatedCluster
    from mo_operator.matrixone.simulated.remote import publish

    cluster = SimulatedCluster(attach_to=real_kubeconfig, simulator_options=ATTACHED_SIMULATOR)
    await cluster.start()
    assert cluster.admin_server is not None
    tmp = out + ".tmp"
    shutil.copy(real_kubeconfig, tmp)
    publish(tmp, cluster.admin_server.url, cluster.admin_server.token)
    os.replace(tmp, out)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        await stop.wait()
    finally:
        await cluster.stop()


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "attach":
        asyncio.run(_attach(sys.argv[2], sys.argv[3]))
    else:
        sys.exit("usage: operator_support.py attach REAL_KUBECONFIG OUT_KUBECONFIG")
