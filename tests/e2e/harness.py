"""The world an end-to-end scenario runs in, the same on the embedded control
plane and on a real API server.

``World`` is a cluster (``SimulatedCluster``: embedded, or attached to the
API server ``MO_TEST_KUBECONFIG`` names), a namespace of the test's own, a
client acting as the user, and kubectl. ``OperatorRunner`` runs the
operator in this process (fast, the default) or as a child process that
tests kill with SIGKILL.

Nothing here relies on what only the embedded server offers: writes are
counted from the operator's own client, not the server's request log, and
pods are made to fail through the simulator's rules ConfigMap, which any
API server stores.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import os
import signal
import subprocess
import sys
import uuid
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

import yaml
from lightkube.config.kubeconfig import KubeConfig

from mo_operator.controllers.common import resources as r
from mo_operator.controllers.common.env import OUR_KINDS
from mo_operator.controllers.common.env import Settings as OperatorSettings
from mo_operator.controllers.operator import Operator, OperatorConfig
from mo_operator.kube.client import ApiClient
from mo_operator.kube.conditions import get_condition
from mo_operator.kube.errors import ApiConnectionError, ApiError
from mo_operator.kube.resource import Resource
from mo_operator.kube.webhook_certs import GeneratedCerts
from mo_operator.kube.webhook_server import WebhookServer
from mo_operator.localcluster.apiserver.server import ApiServer
from mo_operator.localcluster.simulator.config import SIMULATED_LABEL
from mo_operator.localcluster.simulator.rules import RuleSet, rules_configmap
from mo_operator.matrixone.labels import NAMESPACE as NAMESPACE_LABEL
from mo_operator.matrixone.simulated.cluster import SimulatedCluster
from mo_operator.matrixone.simulated.state import Settings as MOSettings
from mo_operator.webhooks import (
    api_claim_lookup,
    configuration_names,
    install_webhook_configurations,
    register,
)
from mo_operator.webhooks.configurations import MUTATING_CONFIGURATION, VALIDATING_CONFIGURATION

from .rbac import refused

REAL_KUBECONFIG = os.environ.get("MO_TEST_KUBECONFIG")
"""A real API server to run against instead of the embedded one."""

GROUP_VERSION = "core.matrixorigin.io/v1alpha1"
VERSION = "2.0.0"
FAST_SIMULATOR = {
    "nodes": 3,
    "start_delay": 0.05,
    "ready_delay": 0.05,
    "run_duration": 0.1,
    "time_scale": 0.002,
}
MO_SETTINGS = MOSettings(store_timeout=1.0, tick_seconds=0.1, drain_seconds=1.0)
OPERATOR_SETTINGS = OperatorSettings(
    busy_poll_seconds=0.2, poll_seconds=1.0, rollout_stall_seconds=3.0, drain_timeout_seconds=30.0
)
SIMULATED_STORAGE_CLASS = "localcluster-simulated"
_UNREACHABLE = ("connection refused", "connection reset", "the server is currently unable", "EOF")
NAMESPACES = Resource("", "v1", "Namespace", "namespaces", False)
PERSISTENT_VOLUMES = Resource("", "v1", "PersistentVolume", "persistentvolumes", False)
OUR_FINALIZERS = "matrixorigin.io/"
"""The prefix of the finalizers the operator puts on pods (and only it removes)."""

Obj = dict[str, Any]


def _claim_namespace(volume: Obj) -> str | None:
    return ((volume.get("spec") or {}).get("claimRef") or {}).get("namespace")


async def eventually(
    check: Callable[[], Any], timeout: float = 30.0, interval: float = 0.1, message: str = ""
) -> Any:
    """Poll ``check`` (sync or async) until it returns something truthy; return that."""
    last: Any = None
    try:
        async with asyncio.timeout(timeout):
            while True:
                try:
                    last = check()
                    if asyncio.iscoroutine(last):
                        last = await last
                except Exception as e:
                    if not _transient(e):
                        raise
                    last = e  # the API server restarts or throttles: ask again
                else:
                    if last:
                        return last
                await asyncio.sleep(interval)
    except TimeoutError:
        raise AssertionError(f"not true after {timeout}s: {message or check} (last: {last!r})") from None


def _transient(e: Exception) -> bool:
    """An API error a client rides out: the server is away, overloaded or throttling."""
    if isinstance(e, (ConnectionError, OSError, ApiConnectionError, TimeoutError)):
        return True
    status = getattr(e, "status", 0)
    return bool(status == 429 or status >= 500)


def condition(obj: Mapping[str, Any] | None, ctype: str) -> Mapping[str, Any]:
    found = get_condition(((obj or {}).get("status") or {}).get("conditions") or (), ctype)
    return found or {}


def is_ready(obj: Mapping[str, Any] | None) -> bool:
    return condition(obj, "Ready").get("status") == "True"


class World:
    """One scenario's cluster, namespace, user client and kubectl."""

    def __init__(
        self, cluster: SimulatedCluster, kubeconfig: Path, namespace: str, client: ApiClient
    ) -> None:
        self.cluster = cluster
        self.kubeconfig = kubeconfig
        self.namespace = namespace
        self.client = client
        self.real = REAL_KUBECONFIG is not None

    # ------------------------------------------------------------- manifests
    def for_cluster(self, obj: Obj) -> Obj:
        """``obj`` made runnable here: on a real API server, pods go to the
        simulated nodes and volumes to their StorageClass."""
        obj = copy.deepcopy(obj)
        obj.setdefault("metadata", {}).setdefault("namespace", self.namespace)
        if not self.real:
            return obj
        spec = obj.get("spec") or {}
        sets = (
            [spec]
            if obj.get("kind") != "MatrixOneCluster"
            else [
                spec.get(k) for k in ("logService", "tn", "dn", "proxy", "tp", "ap", "webui") if spec.get(k)
            ]
            + list(spec.get("cnGroups") or [])
        )
        for s in sets:
            self._place(s)
        return obj

    def runnable_set(self, set_spec: Obj) -> Obj:
        """A set's spec (a CN group, say) made runnable here, for a patch that replaces one."""
        set_spec = copy.deepcopy(set_spec)
        if self.real:
            self._place(set_spec)
        return set_spec

    @staticmethod
    def _place(set_spec: Obj) -> None:
        """Pods on the simulated nodes (their taint tolerated), volumes of their StorageClass."""
        overlay = set_spec.setdefault("overlay", {})
        overlay.setdefault("tolerations", []).append(
            {"key": SIMULATED_LABEL, "operator": "Equal", "value": "true", "effect": "NoSchedule"}
        )
        set_spec.setdefault("nodeSelector", {})[SIMULATED_LABEL] = "true"
        for volume in ("volume", "cacheVolume"):
            if set_spec.get(volume):
                set_spec[volume].setdefault("storageClassName", SIMULATED_STORAGE_CLASS)

    def cluster_manifest(self, name: str = "mo", **spec: Any) -> Obj:
        """A minimal MatrixOneCluster, with ``spec`` fields replacing the defaults."""
        base: Obj = {
            "version": VERSION,
            "logService": {
                "replicas": 3,
                "volume": {"size": "1Gi"},
                "sharedStorage": {"s3": {"path": f"bucket/{name}"}},
            },
            "tn": {"replicas": 1},
            "cnGroups": [{"name": "tp", "replicas": 2, "scalingConfig": {"minDelaySeconds": 0}}],
        }
        base.update(spec)
        return self.for_cluster(
            {
                "apiVersion": GROUP_VERSION,
                "kind": "MatrixOneCluster",
                "metadata": {"name": name},
                "spec": base,
            }
        )

    # ---------------------------------------------------------------- actions
    async def kubectl(
        self, *args: str, input: str | None = None, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        """Run kubectl in the test's namespace, as a user would (retrying while the API
        server is unreachable, as a user would too)."""
        for attempt in range(20):
            result = await self._kubectl_once(*args, input=input)
            unreachable = any(t in result.stderr for t in _UNREACHABLE)
            if result.returncode == 0 or not unreachable or attempt == 19:
                break
            await asyncio.sleep(0.5)
        if check and result.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed:\n{result.stderr}{result.stdout}")
        return result

    async def _kubectl_once(self, *args: str, input: str | None) -> subprocess.CompletedProcess[str]:
        from mo_operator.cli.demo import kubectl_binary

        proc = await asyncio.create_subprocess_exec(
            kubectl_binary(),
            "--kubeconfig",
            str(self.kubeconfig),
            "-n",
            self.namespace,
            *args,
            stdin=asyncio.subprocess.PIPE if input is not None else None,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env={**os.environ, "KUBECACHEDIR": str(self.kubeconfig.parent / "kubecache")},
        )
        out, err = await asyncio.wait_for(proc.communicate(input.encode() if input is not None else None), 60)
        return subprocess.CompletedProcess(list(args), proc.returncode or 0, out.decode(), err.decode())

    async def apply(self, obj: Obj) -> None:
        """``kubectl apply`` a manifest, as a user would."""
        await self.kubectl("apply", "-f", "-", input=yaml.safe_dump(obj))

    async def get(self, res: Any, name: str) -> Obj | None:
        return await self.client.get_or_none(res, name, self.namespace)

    async def list(self, res: Any, **labels: str) -> list[Obj]:
        selector = ",".join(f"{k}={v}" for k, v in labels.items()) or None
        return (await self.client.list(res, self.namespace, label_selector=selector)).items

    async def wait_ready(self, res: Any, name: str, timeout: float = 60.0) -> Obj:
        return await self._wait(res, name, timeout, "Ready", lambda o: is_ready(o) and _observed(o))

    async def wait_settled(self, res: Any, name: str, timeout: float = 60.0) -> Obj:
        """Ready and every pod on the current spec (``UpToDate``), at the latest generation."""

        def settled(obj: Obj | None) -> bool:
            return is_ready(obj) and condition(obj, "UpToDate").get("status") == "True" and _observed(obj)

        return await self._wait(res, name, timeout, "settled", settled)

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

    async def remove_our_objects(self, wait: float) -> None:
        """Delete every object of our kinds in the namespace (and the Backups made from it),
        give the operator ``wait`` seconds to finalize them, then take the finalizers off
        what is left: on a shared real cluster nothing of a test may stay behind, and an
        object whose finalizer nobody removes keeps its namespace (and CRD) Terminating."""
        namespaced = [res for res in OUR_KINDS if res.namespaced]
        for res in namespaced:
            for obj in await self.list(res):
                await self.client.delete(res, obj["metadata"]["name"], self.namespace, missing_ok=True)
        for obj in await self._our_backups():
            await self.client.delete(r.BACKUPS, obj["metadata"]["name"], missing_ok=True)

        async def gone() -> bool:
            left = [o for res in namespaced for o in await self.list(res)]
            return not left and not await self._our_backups()

        with contextlib.suppress(AssertionError):
            await eventually(gone, timeout=wait)
        for res in namespaced:
            for obj in await self.list(res):
                await self._drop_finalizers(res, obj, self.namespace)
        for obj in await self._our_backups():
            await self._drop_finalizers(r.BACKUPS, obj, None)

    async def _our_backups(self) -> list[Obj]:
        found = await self.client.list(r.BACKUPS, label_selector=f"{NAMESPACE_LABEL}={self.namespace}")
        return list(found.items)

    async def _drop_finalizers(
        self, res: Resource, obj: Obj, namespace: str | None, prefix: str = ""
    ) -> None:
        """Take off the object's finalizers (those starting with ``prefix``)."""
        finalizers = list(obj["metadata"].get("finalizers") or ())
        kept = [f for f in finalizers if not f.startswith(prefix)]
        if kept != finalizers:
            patch = {"metadata": {"finalizers": kept or None}}
            with contextlib.suppress(ApiError):  # gone meanwhile
                await self.client.patch(res, obj["metadata"]["name"], patch, namespace)

    async def delete_namespace(self, timeout: float = 60.0) -> None:
        """Delete the namespace and wait until it is gone (its pods need the simulated kubelets).

        The operator has stopped by then: the finalizers it puts on pods (a CN's drain)
        are taken off, or the pods, and so the namespace, would never go."""
        await self.client.delete(NAMESPACES, self.namespace, missing_ok=True)

        async def gone() -> bool:
            for pod in await self.list(r.PODS):
                await self._drop_finalizers(r.PODS, pod, self.namespace, OUR_FINALIZERS)
            return await self.client.get_or_none(NAMESPACES, self.namespace) is None

        await eventually(gone, timeout=timeout, message=f"namespace {self.namespace} is deleted")

        async def released() -> bool:  # the simulated provisioner reclaims them while it runs
            volumes = (await self.client.list(PERSISTENT_VOLUMES)).items
            return not [v for v in volumes if _claim_namespace(v) == self.namespace]

        await eventually(released, timeout=timeout, message=f"the volumes of {self.namespace} are deleted")

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

    async def pods(self, **labels: str) -> list[Obj]:
        return [p for p in await self.list(r.PODS, **labels) if not p["metadata"].get("deletionTimestamp")]

    async def restart_api_server(self) -> None:
        """Stop the embedded API server and start a new one on the same port from its
        data directory, as kube-apiserver restarts over etcd: objects and the
        resourceVersion counter survive, watches and the watch cache do not."""
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
        if await self.client.get_or_none(NAMESPACES, namespace) is None:
            await self.client.create(NAMESPACES, {"metadata": {"name": namespace}})
        await self.client.apply(body, resource=r.CONFIGMAPS, force=True)


def _observed(obj: Mapping[str, Any] | None) -> bool:
    meta, status = (obj or {}).get("metadata") or {}, (obj or {}).get("status") or {}
    return int(status.get("observedGeneration") or 0) >= int(meta.get("generation") or 0)


class OperatorRunner:
    """The operator under test: in this process, or as a process tests can kill."""

    def __init__(self, world: World) -> None:
        self.world = world
        self.operator: Operator | None = None
        self.client: ApiClient | None = None
        self._task: asyncio.Task[None] | None = None
        self.process: asyncio.subprocess.Process | None = None
        self.webhooks: WebhookServer | None = None

    async def start(self, *, webhooks: bool = True, **config: Any) -> Operator:
        """Run the operator in this process (the world's simulated MatrixOne in process
        too), with its webhooks served and registered as an install would."""
        self.client = ApiClient(
            KubeConfig.from_file(str(self.world.kubeconfig)), field_manager="mo-operator", qps=None
        )
        if webhooks:
            await self.start_webhooks()
        config = {"settings": OPERATOR_SETTINGS, **config}
        self.operator = Operator(self.client, self.world.cluster.provider, OperatorConfig(**config))
        self._task = asyncio.create_task(self.operator.run(), name="operator-under-test")
        return self.operator

    async def quiet(self, seconds: float = 1.0, timeout: float = 30.0) -> None:
        """Until the in-process operator is idle and has written nothing for ``seconds``.

        A world the tests see settled may still move for the operator (a pod finishing
        its termination, a status catching up), on a real server more than here: a check
        of "a resync writes nothing" must start from quiet, not from settled."""
        op, client = self.operator, self.client
        assert op is not None and client is not None, "the operator runs in this process"
        async with asyncio.timeout(timeout):
            while True:
                await op.wait_idle()
                before = sum(client.writes.values())
                await asyncio.sleep(seconds)
                if sum(client.writes.values()) == before and all(c.idle for c in op.controllers):
                    return

    async def start_webhooks(self) -> None:
        certs = GeneratedCerts(["127.0.0.1", "localhost"])
        self.webhooks = WebhookServer(certs, host="127.0.0.1", port=0)
        register(self.webhooks, claims=api_claim_lookup(self.world.client))
        await self.webhooks.start()
        await install_webhook_configurations(
            self.world.client, url_base=f"https://127.0.0.1:{self.webhooks.port}", ca_bundle=certs.ca_bundle
        )

    async def stop_webhooks(self) -> None:
        """Stop serving and remove the configurations (else failurePolicy Fail blocks every write)."""
        if self.webhooks is not None:
            await self.webhooks.stop()
            self.webhooks = None
        resources = (MUTATING_CONFIGURATION, VALIDATING_CONFIGURATION)
        for res, name in zip(resources, configuration_names(), strict=True):
            await self.world.client.delete(res, name, missing_ok=True)

    async def stop(self) -> None:
        if self.operator is not None and self._task is not None:
            self.operator.stop()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._task, 30)
        if self.webhooks is not None:
            await self.stop_webhooks()
        client, self.operator, self.client, self._task = self.client, None, None, None
        await self.kill()
        if client is not None:
            await client.close()
            denied = refused(client.rest.requests_made)
            assert not denied, f"the operator made requests its install's RBAC refuses: {denied}"

    async def spawn(self, *extra: str, identity: str | None = None) -> asyncio.subprocess.Process:
        """Run ``mo-operator run`` as a child process against the world's cluster."""
        if self.process is not None and self.process.returncode is None:
            raise RuntimeError("this runner's operator still runs: kill it first (two would both write)")
        assert self.world.cluster.admin_server is not None
        admin = self.world.cluster.admin_server
        args = [
            sys.executable,
            "-m",
            "mo_operator.cli.main",
            "--log-level",
            "WARNING",
            "run",
            "--kubeconfig",
            str(self.world.kubeconfig),
            "--health-probe-bind-address",
            "0",
            "--metrics-bind-address",
            "0",
            "--no-webhooks",
            "--mo-admin-url",
            admin.url,
            "--mo-admin-token",
            admin.token,
            "--identity",
            identity or f"e2e-{uuid.uuid4().hex[:6]}",
            "--poll-seconds",
            str(OPERATOR_SETTINGS.poll_seconds),
            "--busy-poll-seconds",
            str(OPERATOR_SETTINGS.busy_poll_seconds),
            "--rollout-stall-seconds",
            str(OPERATOR_SETTINGS.rollout_stall_seconds),
            *extra,
        ]
        self.process = await asyncio.create_subprocess_exec(*args)
        return self.process

    async def kill(self) -> None:
        """SIGKILL the child operator: no clean-up, no lease release, nothing."""
        if self.process is not None and self.process.returncode is None:
            self.process.send_signal(signal.SIGKILL)
            await self.process.wait()
        self.process = None


Check = Callable[[], Awaitable[Any]]
