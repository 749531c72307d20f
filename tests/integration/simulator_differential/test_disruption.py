"""PodDisruptionBudgets and the Eviction API as a client sees them (docs: tasks/run-
application/configure-pdb, concepts/scheduling-eviction/api-eviction): the disruption
controller's status (expected, desired and current healthy pods, the disruptions it
allows, its DisruptionAllowed condition), for pods a StatefulSet controls and for pods
a custom resource with a scale subresource controls (how an operator that makes its
pods itself, like the CNSet's, is counted), and what ``pods/<name>/eviction`` answers:
201 while the budget allows one, 429 with the budget's numbers when it does not, the
failure a pod under two budgets gets, and the evicted pod's DisruptionTarget condition."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from typing import Any

from mo_devkit.localcluster.simulator.core.kinds import PDB, POD, STATEFULSET, Kind
from mo_devkit.localcluster.simulator.core.kubeapi import KubeError
from mo_devkit.localcluster.simulator.core.objects import Obj, find_condition, is_deleting, status_of
from mo_devkit.localcluster.simulator.core.pods import is_pod_ready

from .harness import REQUIRES_REAL, Side, both

pytestmark = REQUIRES_REAL

CRDS = Kind("apiextensions.k8s.io", "v1", "CustomResourceDefinition", "customresourcedefinitions", False)
STATUS_FIELDS = (
    "expectedPods",
    "desiredHealthy",
    "currentHealthy",
    "disruptionsAllowed",
    "observedGeneration",
)


def _statefulset(side: Side) -> Obj:
    return {
        "metadata": {"name": "log"},
        "spec": {
            "replicas": 3,
            "serviceName": "log",
            "podManagementPolicy": "Parallel",
            "selector": {"matchLabels": {"app": "log"}},
            "template": {
                "metadata": {"labels": {"app": "log"}},
                # a graceful deletion (the simulated kubelets scale it to a moment): the
                # disruption controller then sees the evicted pod go and forgets it before
                # its replacement, of the same name, appears
                "spec": side.place({"containers": [{"name": "log", "image": "registry.local/log:v1"}]}),
            },
        },
    }


def _budget(name: str, app: str, **bound: Any) -> Obj:
    return {"metadata": {"name": name}, "spec": {**bound, "selector": {"matchLabels": {"app": app}}}}


def _crd(group: str) -> Obj:
    return {
        "metadata": {"name": f"gizmos.{group}"},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": "gizmos", "kind": "Gizmo"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "subresources": {
                        "scale": {
                            "specReplicasPath": ".spec.replicas",
                            "statusReplicasPath": ".status.replicas",
                        },
                        "status": {},
                    },
                    "schema": {
                        "openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
                    },
                }
            ],
        },
    }


def budget_status(side: Side, name: str) -> dict[str, Any]:
    pdb = side.get(PDB, name) or {}
    st = status_of(pdb)
    cond = find_condition(st.get("conditions"), "DisruptionAllowed") or {}
    return {
        **{f: st.get(f, 0) for f in STATUS_FIELDS},
        "generation": pdb.get("metadata", {}).get("generation"),
        "condition": (cond.get("status"), cond.get("reason"), cond.get("message")),
    }


async def evict(side: Side, pod: str) -> tuple[int, dict[str, Any]]:
    """POST the eviction; (HTTP code, the Status's code, reason, message and causes)."""
    http = side.api.client._client._client
    resp = await http.post(
        f"/api/v1/namespaces/{side.namespace}/pods/{pod}/eviction",
        json={
            "apiVersion": "policy/v1",
            "kind": "Eviction",
            "metadata": {"name": pod, "namespace": side.namespace},
        },
    )
    body = resp.json()
    keep = {k: body.get(k) for k in ("status", "code", "reason", "message")}
    keep["causes"] = (body.get("details") or {}).get("causes")
    return resp.status_code, keep


def settled(side: Side, name: str, healthy: int) -> bool:
    st = budget_status(side, name)
    return st["observedGeneration"] == st["generation"] and st["currentHealthy"] == healthy


async def disruptions(side: Side, group: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    await side.create(STATEFULSET, _statefulset(side))
    await side.create(PDB, _budget("log", "log", maxUnavailable=1))
    await side.wait(lambda: settled(side, "log", 3), "the log budget sees 3 healthy pods")
    out["ready"] = budget_status(side, "log")

    out["first"] = await evict(side, "log-0")
    await side.wait(lambda: budget_status(side, "log")["currentHealthy"] == 2, "the eviction is counted")
    out["second"] = await evict(side, "log-1")
    gone = await side.wait(lambda: _deleting(side, "log-0"), "log-0 goes")
    target = find_condition(status_of(gone).get("conditions"), "DisruptionTarget") or {}
    out["target"] = (target.get("status"), target.get("reason"), target.get("message"))

    await side.wait(lambda: _ready_again(side, "log-0", gone) and settled(side, "log", 3), "log-0 is back")
    out["after"] = budget_status(side, "log")
    out["third"] = await evict(side, "log-1")

    # pods of a custom resource with a scale subresource: its desired replicas count
    gizmos = Kind(group, "v1", "Gizmo", "gizmos")
    owner = await side.create(
        gizmos,
        {"apiVersion": f"{group}/v1", "kind": "Gizmo", "metadata": {"name": "g"}, "spec": {"replicas": 3}},
    )
    ref = {
        "apiVersion": f"{group}/v1",
        "kind": "Gizmo",
        "name": "g",
        "uid": owner["metadata"]["uid"],
        "controller": True,
    }
    for i in range(2):
        await side.create(
            POD,
            {
                "metadata": {"name": f"g-{i}", "labels": {"app": "g"}, "ownerReferences": [ref]},
                "spec": side.place(
                    {
                        "containers": [{"name": "g", "image": "registry.local/g:v1"}],
                        "terminationGracePeriodSeconds": 0,
                    }
                ),
            },
        )
    await side.create(PDB, _budget("g", "g", maxUnavailable=1))
    await _counted_once_mapped(side, "g", 2)
    out["scaled"] = budget_status(side, "g")
    out["scaled_eviction"] = await evict(side, "g-0")

    # a pod under two budgets cannot be evicted
    await side.create(PDB, _budget("g-too", "g", minAvailable=0))
    await side.wait(
        lambda: budget_status(side, "g-too")["observedGeneration"] == 1, "the second budget is seen"
    )
    out["two_budgets"] = await evict(side, "g-1")
    return out


async def _counted_once_mapped(side: Side, name: str, healthy: int) -> None:
    """Wait for the budget to count ``healthy`` pods. kube-controller-manager maps a new
    CRD's kind up to 30 s late (its discovery is reread every 30 s), and its disruption
    controller, having reported SyncFailed, looks again only when a pod changes: touch
    one until the budget counts, as any change of the pods would."""
    for touch in range(24):
        with contextlib.suppress(AssertionError):
            await side.wait(
                lambda: settled(side, name, healthy), f"the {name} budget sees {healthy}", timeout=5
            )
            return
        await side.patch(POD, "g-0", {"metadata": {"annotations": {"simdiff/touch": str(touch)}}})
    raise AssertionError(
        f"{side.name}: the {name} budget never counted {healthy} pods: {budget_status(side, name)}"
    )


def _deleting(side: Side, name: str) -> Obj | None:
    """The pod's last version seen while it was being deleted (or gone)."""
    for e in reversed(side.recorder.of(POD)):
        if e.obj.get("metadata", {}).get("name") == name and (e.type == "DELETED" or is_deleting(e.obj)):
            return e.obj
    return None


def _ready_again(side: Side, name: str, old: Obj) -> bool:
    pod = side.get(POD, name)
    return pod is not None and pod["metadata"]["uid"] != old["metadata"]["uid"] and is_pod_ready(pod)


async def test_budgets_count_controllers_and_evictions_respect_them(sides: tuple[Side, Side]) -> None:
    group = f"g{uuid.uuid4().hex[:6]}.simdiff.example.com"
    embedded, real = sides
    for side in sides:
        await side.api.create(CRDS, _crd(group))
    try:
        for side in sides:
            await _established(side, group)
        a, b = await both(lambda side: disruptions(side, group), embedded, real)
    finally:
        for side in sides:
            with contextlib.suppress(KubeError):
                await side.api.delete(CRDS, "", f"gizmos.{group}")
    assert b["first"][0] == 201 and b["second"][0] == 429, b
    assert b["ready"]["desiredHealthy"] == 2 and b["scaled"]["expectedPods"] == 3, b
    assert a == b, f"embedded: {a}\nreal: {b}"


async def _established(side: Side, group: str) -> None:
    async with asyncio.timeout(30):
        while True:
            crd = await side.api.get(CRDS, "", f"gizmos.{group}")
            if (find_condition(status_of(crd or {}).get("conditions"), "Established") or {}).get(
                "status"
            ) == "True":
                return
            await asyncio.sleep(0.1)
