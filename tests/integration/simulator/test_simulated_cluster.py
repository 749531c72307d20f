"""End-to-end behaviour of the simulated kube-controller-manager, scheduler
and kubelets through the HTTP API (what kubectl and the operator see)."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import pytest

from mo_devkit.localcluster.simulator.core.kinds import (
    CONFIGMAP,
    DEPLOYMENT,
    ENDPOINTS,
    JOB,
    NODE,
    POD,
    PV,
    PVC,
    SERVICE,
    STATEFULSET,
)
from mo_devkit.localcluster.simulator.core.objects import find_condition
from mo_devkit.localcluster.simulator.rules import Effect, FailureRule, RuleSet, rules_configmap

from .conftest import CONTROL_PLANE_MISSING, Cluster, eventually

pytestmark = pytest.mark.skipif(CONTROL_PLANE_MISSING is not None, reason=CONTROL_PLANE_MISSING or "")


def statefulset(name: str = "db", replicas: int = 3, image: str = "db:1") -> dict:
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "replicas": replicas,
            "serviceName": name,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {
                    "containers": [
                        {"name": "db", "image": image, "ports": [{"name": "sql", "containerPort": 6001}]}
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


async def test_nodes_are_registered_ready(cluster: Cluster) -> None:
    """Each simulated kubelet registers a Node that reports Ready with its
    capacity, and renews a Lease in kube-node-lease."""
    for name in ("sim-node-0", "sim-node-1"):
        node = await cluster.api.get(NODE, "", name)
        assert node is not None
        ready = find_condition(node["status"]["conditions"], "Ready")
        assert ready is not None and ready["status"] == "True" and ready["reason"] == "KubeletReady"
        assert node["status"]["allocatable"]["pods"] == "110"
        assert node["metadata"]["labels"]["kubernetes.io/hostname"] == name


async def test_statefulset_pods_claims_endpoints_and_rolling_update(cluster: Cluster) -> None:
    """docs: concepts/workloads/controllers/statefulset — ordered pods
    ``<sts>-<ordinal>``, claims ``<vct>-<sts>-<ordinal>`` bound to provisioned
    volumes, a headless Service's Endpoints with hostnames, and a rolling
    update that ends with currentRevision == updateRevision."""
    api = cluster.api
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

    async def status() -> dict:
        sts = await api.get(STATEFULSET, "default", "db")
        return (sts or {}).get("status") or {}

    await eventually(lambda: _ready(status, 3), timeout=30)
    for i in range(3):
        pod = await api.get(POD, "default", f"db-{i}")
        assert pod is not None and pod["status"]["phase"] == "Running"
        assert pod["metadata"]["labels"]["statefulset.kubernetes.io/pod-name"] == f"db-{i}"
        scheduled = find_condition(pod["status"]["conditions"], "PodScheduled")
        assert scheduled is not None and scheduled["status"] == "True"
        claim = await eventually(lambda i=i: _bound_claim(api, f"data-db-{i}"))
        pv = await api.get(PV, "", claim["spec"]["volumeName"])
        assert pv is not None and pv["spec"]["claimRef"]["name"] == f"data-db-{i}"
    eps = await eventually(lambda: _endpoints_with(api, "db", 3))
    assert {a["hostname"] for a in eps["subsets"][0]["addresses"]} == {"db-0", "db-1", "db-2"}

    old = (await status())["currentRevision"]
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

    async def rolled() -> bool:
        st = await status()
        return st.get("currentRevision") == st.get("updateRevision") != old and st.get("readyReplicas") == 3

    await eventually(rolled, timeout=30)
    pods = [await api.get(POD, "default", f"db-{i}") for i in range(3)]
    assert {p["spec"]["containers"][0]["image"] for p in pods if p} == {"db:2"}


async def test_deployment_rolls_out_and_failure_rules_apply(cluster: Cluster) -> None:
    """A Deployment's ReplicaSet pods become available; a NeverReady rule set
    from Python keeps them unready until lifted."""
    api = cluster.api
    cluster.sim.rules.add(FailureRule(Effect.NEVER_READY, labels={"app": "web"}))
    await api.create(
        DEPLOYMENT,
        {
            "metadata": {"name": "web", "namespace": "default"},
            "spec": {
                "replicas": 2,
                "selector": {"matchLabels": {"app": "web"}},
                "template": {
                    "metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "w", "image": "web:1"}]},
                },
            },
        },
    )

    async def dep_status() -> dict:
        d = await api.get(DEPLOYMENT, "default", "web")
        return (d or {}).get("status") or {}

    await eventually(lambda: _value(dep_status, "replicas", 2), timeout=20)
    assert (await dep_status()).get("availableReplicas", 0) == 0
    cluster.sim.rules.clear()
    await eventually(lambda: _value(dep_status, "availableReplicas", 2), timeout=20)
    d = await api.get(DEPLOYMENT, "default", "web")
    assert d is not None and d["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "1"


async def test_rules_through_the_configmap(cluster: Cluster) -> None:
    """Rules published as the ``simulator-rules`` ConfigMap work like rules set
    from Python: here an image pull failure."""
    api = cluster.api
    rules = RuleSet()
    rules.add(FailureRule(Effect.IMAGE_PULL_ERROR, image="*:missing"))
    await api.create(CONFIGMAP, rules_configmap(rules))
    # Any other ConfigMap (the kubelets watch them all) leaves the rules alone.
    await api.create(CONFIGMAP, {"metadata": {"name": "unrelated", "namespace": "localcluster-system"}})
    await api.create(
        POD,
        {
            "metadata": {"name": "puller", "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "app:missing"}]},
        },
    )

    async def waiting_reason() -> str:
        pod = await api.get(POD, "default", "puller")
        states = [
            cs.get("state", {}).get("waiting", {}).get("reason", "")
            for cs in (pod or {}).get("status", {}).get("containerStatuses") or []
        ]
        return states[0] if states else ""

    await eventually(lambda: _equals(waiting_reason, "ImagePullBackOff"), timeout=20)
    cm = await api.get(CONFIGMAP, "localcluster-system", "simulator-rules")
    assert cm is not None
    await api.patch(
        CONFIGMAP,
        "localcluster-system",
        "simulator-rules",
        {"data": {"rules.json": json.dumps(RuleSet().to_dict())}},
    )
    await eventually(lambda: _phase(api, "puller", "Running"), timeout=20)


async def test_job_completes(cluster: Cluster) -> None:
    api = cluster.api
    await api.create(
        JOB,
        {
            "metadata": {"name": "once", "namespace": "default"},
            "spec": {
                "completions": 2,
                "template": {
                    "spec": {"restartPolicy": "Never", "containers": [{"name": "j", "image": "job:1"}]}
                },
            },
        },
    )

    async def complete() -> bool:
        job = await api.get(JOB, "default", "once")
        return find_condition(((job or {}).get("status") or {}).get("conditions"), "Complete") is not None

    await eventually(complete, timeout=30)
    job = await api.get(JOB, "default", "once")
    assert job is not None and job["status"]["succeeded"] == 2


async def test_unschedulable_pod_reports_why(cluster: Cluster) -> None:
    api = cluster.api
    await api.create(
        POD,
        {
            "metadata": {"name": "huge", "namespace": "default"},
            "spec": {"containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1000"}}}]},
        },
    )

    async def message() -> str:
        pod = await api.get(POD, "default", "huge")
        c = find_condition(((pod or {}).get("status") or {}).get("conditions"), "PodScheduled")
        return (c or {}).get("message", "")

    msg = await eventually(message)
    assert msg.startswith("0/2 nodes are available: 2 Insufficient cpu.")


async def _ready(status: object, n: int) -> bool:
    st = await status()  # type: ignore[operator]
    return st.get("readyReplicas") == n and st.get("currentRevision") == st.get("updateRevision")


async def _value(status: object, key: str, want: int) -> bool:
    return (await status()).get(key) == want  # type: ignore[operator]


async def _equals(fn: object, want: str) -> bool:
    return await fn() == want  # type: ignore[operator]


async def _bound_claim(api: object, name: str) -> dict | None:
    claim = await api.get(PVC, "default", name)  # type: ignore[attr-defined]
    return claim if claim and claim.get("status", {}).get("phase") == "Bound" else None


async def _endpoints_with(api: object, name: str, n: int) -> dict | None:
    eps = await api.get(ENDPOINTS, "default", name)  # type: ignore[attr-defined]
    subsets = (eps or {}).get("subsets") or []
    return eps if subsets and len(subsets[0].get("addresses") or []) == n else None


async def _phase(api: object, name: str, phase: str) -> bool:
    pod = await api.get(POD, "default", name)  # type: ignore[attr-defined]
    return bool(pod) and pod["status"].get("phase") == phase


async def test_nothing_more_is_created_for_a_statefulset_once_it_is_deleted(
    cluster: Cluster, control_plane: Any
) -> None:
    """A StatefulSet of a hundred thousand replicas used to be planned whole: its pods
    and claims went on being created long after it (and its owner) were deleted, and
    the control plane grew past a gigabyte. A sync now creates at most BURST pods, and
    the simulator creates nothing for an owner the cache shows gone or going."""
    api = cluster.api
    big = statefulset("big", replicas=100_000)
    big["spec"]["podManagementPolicy"] = "Parallel"
    await api.create(STATEFULSET, big)

    async def growing() -> bool:
        return len((await api.list_all(PVC, "default"))[0]) >= 50

    await eventually(growing, timeout=30)
    await api.delete(STATEFULSET, "default", "big")
    deleted = time.time()
    await eventually(lambda: cluster.sim.caches[STATEFULSET].get("default", "big") is None)
    seen = time.time()
    await asyncio.sleep(1.0)
    made = control_plane.server.faults.writes(field_manager="kube-controller-manager", since=deleted)
    late = [r for r in made if r.verb == "create" and r.time > seen]
    assert late == [], f"{len(late)} objects created for a StatefulSet already gone"
    assert len((await api.list_all(PVC, "default"))[0]) < 1000, "a sync creates a bounded number"
