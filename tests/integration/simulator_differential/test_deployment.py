"""A Deployment rolled onto an image whose pods never become ready
(pkg/controller/deployment, rolling.go and progress.go; docs: concepts/
workloads/controllers/deployment, "Failed Deployment"): maxSurge and
maxUnavailable bound how far the stuck new ReplicaSet grows and the old one
shrinks, Progressing turns False with ProgressDeadlineExceeded, and a fixed
template rolls forward, scaling the stuck ReplicaSet away first."""

from __future__ import annotations

from typing import Any

from mo_devkit.localcluster.simulator.core.kinds import DEPLOYMENT, REPLICASET
from mo_devkit.localcluster.simulator.core.objects import (
    Obj,
    annotations_of,
    generation_of,
    spec_of,
    status_of,
)

from .harness import REQUIRES_REAL, Side, both, condition_summary, template_image

pytestmark = REQUIRES_REAL

V1, BROKEN, V2 = "registry.local/app:v1", "registry.local/app:broken", "registry.local/app:v2"
GOAL = {
    "replicas": 2,
    "updatedReplicas": 2,
    "readyReplicas": 2,
    "availableReplicas": 2,
    "unavailableReplicas": 0,
}
STATUS_FIELDS = (
    "replicas",
    "updatedReplicas",
    "readyReplicas",
    "availableReplicas",
    "unavailableReplicas",
)


def template(side: Side, image: str) -> Obj:
    return {
        "metadata": {"labels": {"app": "app"}},
        "spec": side.place(
            {"containers": [{"name": "app", "image": image}], "terminationGracePeriodSeconds": 5}
        ),
    }


def deployment(side: Side) -> Obj:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "app"},
        "spec": {
            "replicas": 2,
            "progressDeadlineSeconds": 3,
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 1}},
            "selector": {"matchLabels": {"app": "app"}},
            "template": template(side, V1),
        },
    }


def replica_sets(side: Side) -> dict[str, Obj]:
    """The Deployment's ReplicaSets by image: their names hash the template differently on each side."""
    return {template_image(rs): rs for rs in side.recorder.objects(REPLICASET)}


def snapshot(side: Side) -> dict[str, Any]:
    d = side.get(DEPLOYMENT, "app") or {}
    st = status_of(d)
    return {
        "status": {f: st.get(f, 0) for f in STATUS_FIELDS},
        # The number too: the controller's revision annotation goes through
        # /status, which moves no generation on either server.
        "generation": generation_of(d),
        "observed": st.get("observedGeneration") == generation_of(d),
        "conditions": condition_summary(d, "Available", "Progressing"),
        "replicaSets": {
            image: (
                spec_of(rs).get("replicas"),
                status_of(rs).get("availableReplicas", 0),
                annotations_of(rs).get("deployment.kubernetes.io/revision"),
            )
            for image, rs in sorted(replica_sets(side).items())
        },
    }


def replica_sets_settled(side: Side) -> bool:
    """Every ReplicaSet's status has caught up with its spec (its watch may
    deliver after the Deployment's, whose status is computed from them)."""
    return all(
        status_of(rs).get("observedGeneration") == generation_of(rs)
        and status_of(rs).get("replicas", 0) == spec_of(rs).get("replicas")
        for rs in side.recorder.objects(REPLICASET)
    )


def progressing(side: Side, image: str, reason: str) -> bool:
    """The controller has seen the template with ``image`` and says ``reason``."""
    d = side.get(DEPLOYMENT, "app") or {}
    cond = condition_summary(d, "Progressing")
    return (
        replica_sets_settled(side)
        and template_image(d) == image
        and status_of(d).get("observedGeneration") == generation_of(d)
        and bool(cond)
        and cond[0][2] == reason
    )


async def rollout(side: Side) -> dict[str, Any]:
    side.sim.rules.add(effect="NeverReady", namespace=side.namespace, image=BROKEN)
    await side.create(DEPLOYMENT, deployment(side))
    await side.wait(lambda: progressing(side, V1, "NewReplicaSetAvailable"), "v1 is rolled out")
    await side.wait(lambda: snapshot(side)["status"]["availableReplicas"] == 2, "2 pods available")
    created = snapshot(side)

    await side.patch(DEPLOYMENT, "app", {"spec": {"template": template(side, BROKEN)}})
    await side.wait(
        lambda: progressing(side, BROKEN, "ProgressDeadlineExceeded"), "the deadline passes", timeout=30
    )
    stuck = snapshot(side)

    await side.patch(DEPLOYMENT, "app", {"spec": {"template": template(side, V2)}})
    await side.wait(lambda: progressing(side, V2, "NewReplicaSetAvailable"), "v2 is rolled out")
    await side.wait(
        lambda: snapshot(side)["status"] == GOAL and replica_sets_settled(side),
        "the old pods are gone",
    )
    fixed = snapshot(side)

    rec = side.recorder
    return {
        "created": created,
        "stuck": stuck,
        "fixed": fixed,
        "scaling": {
            image: rec.history(
                REPLICASET, lambda rs: spec_of(rs).get("replicas"), name=rs["metadata"]["name"]
            )
            for image, rs in sorted(replica_sets(side).items())
        },
        "progressing": rec.history(DEPLOYMENT, lambda d: condition_summary(d, "Progressing")),
        "available": rec.history(DEPLOYMENT, lambda d: condition_summary(d, "Available")),
    }


async def test_a_stuck_rollout_exceeds_its_deadline_and_a_fix_rolls_forward(sides: tuple[Side, Side]) -> None:
    """replicas 2, maxSurge 1, maxUnavailable 1: the broken ReplicaSet grows to
    2 while v1 keeps 1 pod; ProgressDeadlineExceeded after 3 s; v2 then
    scales the broken one to 0 first, and v1 once v2's pods are available."""
    embedded, real = await both(rollout, *sides)
    assert real["stuck"]["replicaSets"][V1][:2] == (1, 1)
    assert real["stuck"]["replicaSets"][BROKEN][:2] == (2, 0)
    assert real["scaling"][BROKEN] == [1, 2, 0]
    assert embedded == real, f"embedded: {embedded}\nreal: {real}"
