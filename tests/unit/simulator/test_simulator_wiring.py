"""The simulator's components wired together, run against the in-memory
client of fake_api.py (the same scenarios run against the embedded API
server in tests/integration/simulator)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from mo_devkit.localcluster.simulator.config import SimulatorConfig
from mo_devkit.localcluster.simulator.controllers.scheduler import Scheduler
from mo_devkit.localcluster.simulator.core.kinds import DEPLOYMENT, JOB, POD, SERVICE, STATEFULSET
from mo_devkit.localcluster.simulator.core.kubeapi import KubeError
from mo_devkit.localcluster.simulator.rules import Effect, FailureRule
from mo_devkit.localcluster.simulator.simulator import Simulator

from .fake_api import FakeKubeApi

FAST = {"start_delay": 0.02, "ready_delay": 0.02, "run_duration": 0.05, "time_scale": 0.001}


async def eventually(check: Callable[[], Any], timeout: float = 5.0) -> Any:
    async with asyncio.timeout(timeout):
        while True:
            result = check()
            if result:
                return result
            await asyncio.sleep(0.01)


@pytest.fixture
async def sim() -> AsyncIterator[tuple[Simulator, FakeKubeApi]]:
    api = FakeKubeApi()
    s = Simulator(api, SimulatorConfig(nodes=2, **FAST))
    await s.start(timeout=5)
    try:
        yield s, api
    finally:
        await s.stop()


def statefulset(replicas: int = 3) -> dict:
    return {
        "metadata": {"name": "db", "namespace": "default"},
        "spec": {
            "replicas": replicas,
            "serviceName": "db",
            "podManagementPolicy": "OrderedReady",
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}},
            "selector": {"matchLabels": {"app": "db"}},
            "template": {
                "metadata": {"labels": {"app": "db"}},
                "spec": {
                    "containers": [
                        {"name": "db", "image": "db:1", "ports": [{"name": "sql", "containerPort": 6001}]}
                    ]
                },
            },
            "volumeClaimTemplates": [
                {
                    "metadata": {"name": "data"},
                    "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
                }
            ],
        },
    }


def deployment(replicas: int = 2) -> dict:
    return {
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "web"}},
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "w", "image": "web:1"}]},
            },
        },
    }


async def test_nodes_register_ready_with_leases(sim: tuple[Simulator, FakeKubeApi]) -> None:
    _s, api = sim
    nodes = api.objects("Node")
    assert sorted(n["metadata"]["name"] for n in nodes) == ["sim-node-0", "sim-node-1"]
    assert {lease["metadata"]["name"] for lease in api.objects("Lease")} == {"sim-node-0", "sim-node-1"}
    assert any(sc["metadata"]["name"] == "standard" for sc in api.objects("StorageClass"))


async def test_statefulset_comes_up_in_order_with_bound_claims_and_endpoints(
    sim: tuple[Simulator, FakeKubeApi],
) -> None:
    _s, api = sim
    await api.create(
        SERVICE,
        {
            "metadata": {"name": "db", "namespace": "default"},
            "spec": {
                "clusterIP": "None",
                "selector": {"app": "db"},
                "ports": [{"name": "sql", "port": 6001, "targetPort": "sql"}],
            },
        },
    )
    await api.create(STATEFULSET, statefulset())

    def ready() -> bool:
        st = (api.store.get(("StatefulSet", "default", "db")) or {}).get("status") or {}
        return st.get("readyReplicas") == 3 and st.get("availableReplicas") == 3

    await eventually(ready)
    pods = sorted(api.objects("Pod"), key=lambda p: p["metadata"]["name"])
    assert [p["metadata"]["name"] for p in pods] == ["db-0", "db-1", "db-2"]
    assert all(p["status"]["phase"] == "Running" and p["status"]["podIP"] for p in pods)
    claims = api.objects("PersistentVolumeClaim")
    assert sorted(c["metadata"]["name"] for c in claims) == ["data-db-0", "data-db-1", "data-db-2"]
    await eventually(
        lambda: all(c.get("status", {}).get("phase") == "Bound" for c in api.objects("PersistentVolumeClaim"))
    )
    eps = await eventually(lambda: api.store.get(("Endpoints", "default", "db")))
    await eventually(
        lambda: (
            len((api.store[("Endpoints", "default", "db")].get("subsets") or [{}])[0].get("addresses") or [])
            == 3
        )
    )
    eps = api.store[("Endpoints", "default", "db")]
    assert eps["subsets"][0]["ports"] == [{"name": "sql", "port": 6001, "protocol": "TCP"}]
    assert {a["hostname"] for a in eps["subsets"][0]["addresses"]} == {"db-0", "db-1", "db-2"}

    # Rolling update: every pod replaced, currentRevision catches up.
    st = api.store[("StatefulSet", "default", "db")]
    await api.patch(
        STATEFULSET,
        "default",
        "db",
        {
            "spec": {
                "template": {
                    "spec": {
                        "containers": [
                            {"name": "db", "image": "db:2", "ports": [{"name": "sql", "containerPort": 6001}]}
                        ]
                    }
                }
            }
        },
    )
    old_rev = st["status"]["currentRevision"]

    def rolled() -> bool:
        st = api.store[("StatefulSet", "default", "db")]["status"]
        return st["currentRevision"] == st["updateRevision"] != old_rev and st.get("readyReplicas") == 3

    await eventually(rolled, timeout=10)
    assert {p["spec"]["containers"][0]["image"] for p in api.objects("Pod")} == {"db:2"}


async def test_deployment_job_and_failure_rules(sim: tuple[Simulator, FakeKubeApi]) -> None:
    s, api = sim
    s.rules.add(FailureRule(Effect.NEVER_READY, name="web-*"))
    await api.create(DEPLOYMENT, deployment(replicas=2))
    await eventually(
        lambda: len([p for p in api.objects("Pod") if p["status"].get("phase") == "Running"]) == 2
    )
    await asyncio.sleep(0.1)
    dep = api.store[("Deployment", "default", "web")]
    assert dep["status"].get("readyReplicas", 0) == 0
    s.rules.clear()
    await eventually(
        lambda: api.store[("Deployment", "default", "web")]["status"].get("availableReplicas") == 2
    )

    await api.create(
        JOB,
        {
            "metadata": {"name": "once", "namespace": "default"},
            "spec": {
                "completions": 2,
                "parallelism": 1,
                "backoffLimit": 3,
                "selector": {"matchLabels": {"job": "once"}},
                "template": {
                    "metadata": {"labels": {"job": "once"}},
                    "spec": {"restartPolicy": "Never", "containers": [{"name": "j", "image": "job"}]},
                },
            },
        },
    )

    def complete() -> bool:
        st = api.store[("Job", "default", "once")].get("status") or {}
        return any(c["type"] == "Complete" and c["status"] == "True" for c in st.get("conditions") or [])

    await eventually(complete, timeout=10)
    st = api.store[("Job", "default", "once")]["status"]
    assert st["succeeded"] == 2
    job_pods = [p for p in api.objects("Pod") if p["metadata"]["labels"].get("job") == "once"]
    assert all(
        "batch.kubernetes.io/job-tracking" not in (p["metadata"].get("finalizers") or []) for p in job_pods
    )


async def test_kill_node_marks_it_unreachable_and_evicts(sim: tuple[Simulator, FakeKubeApi]) -> None:
    s, api = sim
    await api.create(
        POD,
        {
            "metadata": {"name": "solo", "namespace": "default"},
            "spec": {"nodeName": "sim-node-1", "containers": [{"name": "c", "image": "x"}]},
        },
    )
    await eventually(
        lambda: any(
            c["type"] == "Ready" and c["status"] == "True"
            for c in api.store[("Pod", "default", "solo")]["status"].get("conditions") or []
        )
    )
    s.kill_node("sim-node-1")

    def unreachable() -> bool:
        n = api.store[("Node", "", "sim-node-1")]
        return any(t["key"] == "node.kubernetes.io/unreachable" for t in n["spec"].get("taints") or [])

    await eventually(unreachable)
    pod = await eventually(
        lambda: (
            (p := api.store.get(("Pod", "default", "solo"))) and p["metadata"].get("deletionTimestamp") and p
        )
    )
    assert any(c["type"] == "Ready" and c["status"] == "False" for c in pod["status"]["conditions"])
    s.revive_node("sim-node-1")
    await eventually(lambda: ("Pod", "default", "solo") not in api.store)
    await eventually(lambda: not unreachable())


async def test_a_settled_cluster_makes_no_writes(sim: tuple[Simulator, FakeKubeApi]) -> None:
    """Level-based loops that agree with the world write nothing: no status
    churn once every object is where it should be."""
    s, api = sim
    await api.create(
        SERVICE,
        {
            "metadata": {"name": "db", "namespace": "default"},
            "spec": {
                "selector": {"app": "db"},
                "ports": [{"name": "sql", "port": 6001, "targetPort": "sql"}],
            },
        },
    )
    await api.create(STATEFULSET, statefulset(2))
    await eventually(
        lambda: (
            (api.store[("StatefulSet", "default", "db")].get("status") or {}).get("availableReplicas") == 2
        )
    )
    await eventually(
        lambda: all(c.get("status", {}).get("phase") == "Bound" for c in api.objects("PersistentVolumeClaim"))
    )
    await asyncio.sleep(0.3)
    before = len(api.writes)
    for c in s.components:
        c.resync()
    await asyncio.sleep(0.5)
    assert api.writes[before:] == []


async def test_pod_behaviour_plugin_decides_readiness_and_annotates(
    sim: tuple[Simulator, FakeKubeApi],
) -> None:
    """A PodBehaviour holds pods unready, sets a readiness-gate condition and
    annotations; after it changes its mind, resync_pods lets them be ready."""
    s, api = sim
    from mo_devkit.localcluster.simulator.behaviour import PodVerdict

    class Gate:
        open = False

        def judge(self, pod: dict, node: dict | None) -> PodVerdict | None:
            if pod["metadata"]["name"] != "gated":
                return None
            status = "True" if self.open else "False"
            return PodVerdict(
                ready=self.open,
                conditions=({"type": "example.com/ok", "status": status},),
                annotations={"example.com/role": "leader" if self.open else "follower"},
            )

    gate = Gate()
    s.add_behaviour(gate)
    await api.create(
        POD,
        {
            "metadata": {"name": "gated", "namespace": "default"},
            "spec": {
                "readinessGates": [{"conditionType": "example.com/ok"}],
                "containers": [{"name": "c", "image": "x"}],
            },
        },
    )

    def get() -> dict:
        return api.store[("Pod", "default", "gated")]

    def ready() -> bool:
        return any(
            c["type"] == "Ready" and c["status"] == "True" for c in get()["status"].get("conditions") or []
        )

    await eventually(
        lambda: (
            get()["status"].get("phase") == "Running"
            and get()["metadata"].get("annotations", {}).get("example.com/role") == "follower"
        )
    )
    await asyncio.sleep(0.1)
    assert not ready()
    gate.open = True
    s.resync_pods()
    await eventually(ready)
    assert get()["metadata"]["annotations"]["example.com/role"] == "leader"


async def test_kubelet_mode_plays_only_kubelets_and_provisioner() -> None:
    """Against a real control plane the simulator registers tainted, labelled
    nodes, runs the pods bound to them, provisions volumes of its own class
    once the real PV controller hands a claim over, and leaves scheduling and
    workloads alone."""
    api = FakeKubeApi()
    s = Simulator(api, SimulatorConfig(mode="kubelet", nodes=1, **FAST))
    await s.start(timeout=5)
    try:
        [node] = api.objects("Node")
        assert node["spec"]["taints"] == [
            {"key": "localcluster.dev/simulated", "value": "true", "effect": "NoSchedule"}
        ]
        assert node["metadata"]["labels"]["localcluster.dev/simulated"] == "true"
        [sc] = api.objects("StorageClass")
        assert sc["metadata"]["name"] == "localcluster-simulated" and "annotations" not in sc["metadata"]
        await api.create(
            POD,
            {
                "metadata": {"name": "unbound", "namespace": "t"},
                "spec": {"containers": [{"name": "c", "image": "x"}]},
            },
        )
        await api.create(
            POD,
            {
                "metadata": {"name": "bound", "namespace": "t"},
                "spec": {"nodeName": "sim-node-0", "containers": [{"name": "c", "image": "x"}]},
            },
        )
        await eventually(lambda: api.store[("Pod", "t", "bound")]["status"].get("phase") == "Running")
        await asyncio.sleep(0.1)
        assert not api.store[("Pod", "t", "unbound")]["spec"].get("nodeName"), "no scheduler in kubelet mode"
        from mo_devkit.localcluster.simulator.core.kinds import PVC

        await api.create(
            PVC,
            {
                "metadata": {
                    "name": "c1",
                    "namespace": "t",
                    "annotations": {"volume.kubernetes.io/storage-provisioner": "localcluster.dev/simulated"},
                },
                "spec": {
                    "storageClassName": "localcluster-simulated",
                    "accessModes": ["ReadWriteOnce"],
                    "resources": {"requests": {"storage": "1Gi"}},
                },
            },
        )
        pv = await eventually(lambda: next(iter(api.objects("PersistentVolume")), None))
        assert pv["spec"]["claimRef"]["name"] == "c1"
        assert api.store[("PersistentVolumeClaim", "t", "c1")]["spec"].get("volumeName") is None, (
            "binding is the real PV controller's"
        )
    finally:
        await s.stop()


class RefusingWorkloadStatus(FakeKubeApi):
    """Answers 429 to status writes of workloads while ``refusing``, as during a storm."""

    refusing = True

    async def patch(self, kind: Any, namespace: str, name: str, patch: Any, **kw: Any) -> dict:
        if self.refusing and kw.get("subresource") == "status" and kind in (STATEFULSET, DEPLOYMENT):
            raise KubeError(429, "TooManyRequests", "try again later")
        return await super().patch(kind, namespace, name, patch, **kw)


@pytest.mark.parametrize("kind", [STATEFULSET, DEPLOYMENT])
async def test_a_workload_status_write_that_failed_is_retried(kind: Any) -> None:
    """Pods come up while the controller's status writes fail; once the server takes
    writes again the status catches up, with nothing else changing to wake it."""
    api = RefusingWorkloadStatus()
    s = Simulator(api, SimulatorConfig(nodes=1, **FAST))
    await s.start(timeout=5)
    try:
        if kind is STATEFULSET:
            await api.create(STATEFULSET, statefulset(replicas=1))
        else:
            await api.create(DEPLOYMENT, deployment(replicas=1))
        await eventually(lambda: any(p["status"].get("phase") == "Running" for p in api.objects("Pod")))
        await asyncio.sleep(0.2)  # every event of the start has been handled
        api.refusing = False
        await eventually(
            lambda: (api.objects(kind.kind)[0].get("status") or {}).get("readyReplicas") == 1, timeout=3
        )
    finally:
        await s.stop()


async def test_controllers_mode_and_kubelet_mode_make_a_whole_cluster() -> None:
    """The controllers mode is the other half of the kubelet mode: alone it registers
    no Node and no StorageClass; beside a kubelet-mode simulator (as ``control-plane
    --controllers-only`` beside the e2e suite's attached one) a StatefulSet with a
    volume claim comes up on the tainted nodes, bound and provisioned."""
    api = FakeKubeApi()
    controllers = Simulator(api, SimulatorConfig(mode="controllers", **FAST))
    await controllers.start(timeout=5)
    kubelets = Simulator(api, SimulatorConfig(mode="kubelet", nodes=1, **FAST))
    try:
        assert api.objects("Node") == [] and api.objects("StorageClass") == []
        await kubelets.start(timeout=5)
        sts = statefulset(replicas=2)
        template = sts["spec"]["template"]["spec"]
        template["tolerations"] = [{"key": "localcluster.dev/simulated", "operator": "Exists"}]
        template["nodeSelector"] = {"localcluster.dev/simulated": "true"}
        sts["spec"]["volumeClaimTemplates"][0]["spec"]["storageClassName"] = "localcluster-simulated"
        await api.create(STATEFULSET, sts)
        await eventually(
            lambda: (
                (api.store[("StatefulSet", "default", "db")].get("status") or {}).get("readyReplicas") == 2
            ),
            timeout=5,
        )
        assert {p["spec"]["nodeName"] for p in api.objects("Pod")} == {"sim-node-0"}
        assert all(c["status"].get("phase") == "Bound" for c in api.objects("PersistentVolumeClaim"))
    finally:
        await kubelets.stop()
        await controllers.stop()


async def test_a_replacement_pod_is_scheduled_though_its_namesake_was_never_seen_bound(
    sim: tuple[Simulator, FakeKubeApi],
) -> None:
    """The scheduler bound a pod, then lost its watch: a relist shows a pod of the same
    name, unscheduled, with another UID (the StatefulSet replaced the first meanwhile)
    and never the first one bound or deleted. The replacement is scheduled; it stayed
    Pending for ever when the scheduler's assumption was keyed by name only."""
    s, api = sim
    scheduler = next(c for c in s.components if isinstance(c, Scheduler))
    scheduler.assumed[("default", "db-1")] = ("uid-of-the-replaced-pod", "sim-node-0")
    await api.create(
        POD,
        {
            "metadata": {"name": "db-1", "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "x"}]},
        },
    )
    await eventually(lambda: api.store[("Pod", "default", "db-1")]["spec"].get("nodeName"))
