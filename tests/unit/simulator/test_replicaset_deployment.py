"""The ReplicaSet and Deployment controllers (pkg/controller/replicaset,
pkg/controller/deployment; docs: concepts/workloads/controllers/deployment)."""

from __future__ import annotations

import copy
from typing import Any

from mo_devkit.localcluster.simulator.core.actions import Create, Delete, Patch
from mo_devkit.localcluster.simulator.core.objects import find_condition, name_of
from mo_devkit.localcluster.simulator.decisions.deployment import fenceposts, plan_deployment
from mo_devkit.localcluster.simulator.decisions.replicaset import plan_replicaset

from .factories import pod, ready_pod

T0 = 1_700_000_000.0


def rs(replicas: int = 3, **meta: Any) -> dict:
    return {
        "metadata": {"name": "web-abc", "namespace": "default", "uid": "rs-uid", "generation": 2, **meta},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "c", "image": "x"}]},
            },
        },
        "status": {},
    }


def owned(p: dict, uid: str = "rs-uid") -> dict:
    p["metadata"]["ownerReferences"] = [
        {"kind": "ReplicaSet", "name": "web-abc", "uid": uid, "controller": True}
    ]
    return p


def test_replicaset_creates_missing_pods_from_its_template() -> None:
    plan = plan_replicaset(rs(3), [owned(ready_pod("web-abc-1", labels={"app": "web"}))], T0)
    made = [a.obj for a in plan.actions if isinstance(a, Create)]
    assert len(made) == 2
    assert made[0]["metadata"]["generateName"] == "web-abc-"
    assert made[0]["metadata"]["labels"] == {"app": "web"}
    assert made[0]["metadata"]["ownerReferences"][0]["uid"] == "rs-uid"
    assert plan.status == {
        "replicas": 1,
        "fullyLabeledReplicas": 1,
        "readyReplicas": 1,
        "availableReplicas": 1,
        "observedGeneration": 2,
    }


def test_replicaset_deletes_unready_and_unscheduled_pods_first() -> None:
    """controller.ActivePods ordering: unassigned < Pending < not ready < ready."""
    pods = [
        owned(ready_pod("ready", labels={"app": "web"})),
        owned(pod("pending", labels={"app": "web"})),
        owned(pod("unbound", labels={"app": "web"}, node=None)),
    ]
    plan = plan_replicaset(rs(1), pods, T0)
    assert [a.name for a in plan.actions if isinstance(a, Delete)] == ["unbound", "pending"]


def test_replicaset_adopts_orphans_and_releases_mismatches() -> None:
    orphan = ready_pod("orphan", labels={"app": "web"})
    stray = owned(ready_pod("stray", labels={"app": "other"}))
    plan = plan_replicaset(rs(1), [orphan, stray], T0)
    patches = {a.name: a.patch for a in plan.actions if isinstance(a, Patch)}
    assert patches["orphan"]["metadata"]["ownerReferences"][0]["uid"] == "rs-uid"
    assert patches["stray"]["metadata"]["ownerReferences"] == []
    assert not any(isinstance(a, Create) for a in plan.actions)


def deployment(replicas: int = 4, **spec: Any) -> dict:
    return {
        "metadata": {
            "name": "web",
            "namespace": "default",
            "uid": "d-uid",
            "generation": 1,
            "annotations": {},
        },
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "web"}},
            "strategy": {
                "type": "RollingUpdate",
                "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"},
            },
            "progressDeadlineSeconds": 600,
            "revisionHistoryLimit": 10,
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "c", "image": "x:1"}]},
            },
            **spec,
        },
        "status": {},
    }


class DWorld:
    def __init__(self, d: dict) -> None:
        self.d = d
        self.rss: dict[str, dict] = {}
        self.n = 0

    def step(self) -> list[Any]:
        plan = plan_deployment(self.d, list(self.rss.values()), [], T0)
        for a in plan.actions:
            if isinstance(a, Create):
                obj = copy.deepcopy(a.obj)
                self.n += 1
                obj["metadata"]["uid"] = f"rs-{self.n}"
                obj["metadata"]["creationTimestamp"] = f"2024-01-01T00:00:{self.n:02d}Z"
                obj["status"] = {}
                self.rss[name_of(obj)] = obj
            elif isinstance(a, Patch) and a.kind.kind == "ReplicaSet":
                target = self.rss[a.name]
                target["metadata"].setdefault("annotations", {}).update(
                    a.patch.get("metadata", {}).get("annotations", {})
                )
                target["spec"].update(a.patch.get("spec", {}))
            elif isinstance(a, Patch) and a.kind.kind == "Deployment":
                self.d["metadata"]["annotations"].update(a.patch["metadata"]["annotations"])
            elif isinstance(a, Delete):
                self.rss.pop(a.name)
        if plan.status is not None:
            self.d["status"] = plan.status
        return plan.actions

    def settle_replicasets(self) -> None:
        """The ReplicaSet controller and kubelets catch up: every pod ready."""
        for r in self.rss.values():
            n = r["spec"]["replicas"]
            r["status"] = {"replicas": n, "readyReplicas": n, "availableReplicas": n}


def test_fenceposts_round_surge_up_and_unavailable_down() -> None:
    assert fenceposts(deployment(10)) == (3, 2)
    assert fenceposts(
        deployment(
            1, strategy={"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 0}}
        )
    ) == (0, 1)


def test_first_rollout_creates_hashed_replicaset_with_revision() -> None:
    w = DWorld(deployment())
    w.step()
    [rs_obj] = w.rss.values()
    h = rs_obj["metadata"]["labels"]["pod-template-hash"]
    assert name_of(rs_obj) == f"web-{h}"
    assert rs_obj["spec"]["selector"]["matchLabels"] == {"app": "web", "pod-template-hash": h}
    assert rs_obj["spec"]["template"]["metadata"]["labels"]["pod-template-hash"] == h
    ann = rs_obj["metadata"]["annotations"]
    assert ann["deployment.kubernetes.io/revision"] == "1"
    assert ann["deployment.kubernetes.io/desired-replicas"] == "4"
    assert ann["deployment.kubernetes.io/max-replicas"] == "5"
    assert rs_obj["spec"]["replicas"] == 4
    w.step()
    assert w.d["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "1"
    prog = find_condition(w.d["status"]["conditions"], "Progressing")
    assert prog is not None and prog["reason"] in ("NewReplicaSetCreated", "ReplicaSetUpdated")
    w.settle_replicasets()
    w.step()
    st = w.d["status"]
    assert st["replicas"] == st["updatedReplicas"] == st["availableReplicas"] == 4
    prog = find_condition(st["conditions"], "Progressing")
    assert prog is not None and prog["reason"] == "NewReplicaSetAvailable"
    assert prog["message"] == f'ReplicaSet "{name_of(rs_obj)}" has successfully progressed.'
    avail = find_condition(st["conditions"], "Available")
    assert avail is not None and avail["status"] == "True" and avail["reason"] == "MinimumReplicasAvailable"


def test_rolling_update_respects_surge_and_unavailability() -> None:
    """maxSurge 1, maxUnavailable 1 with 4 replicas: never more than 5 pods,
    never fewer than 3 available, until the new ReplicaSet has them all."""
    w = DWorld(deployment())
    w.step()
    w.settle_replicasets()
    w.step()
    w.d["spec"]["template"]["spec"]["containers"][0]["image"] = "x:2"
    w.d["metadata"]["generation"] = 2
    for _ in range(30):
        w.step()
        total = sum(r["spec"]["replicas"] for r in w.rss.values())
        assert total <= 5
        w.settle_replicasets()
        available = sum(r["status"]["availableReplicas"] for r in w.rss.values())
        assert available >= 3
    new = [r for r in w.rss.values() if r["spec"]["template"]["spec"]["containers"][0]["image"] == "x:2"]
    old = [r for r in w.rss.values() if r not in new]
    assert len(new) == 1 and new[0]["spec"]["replicas"] == 4
    assert all(r["spec"]["replicas"] == 0 for r in old)
    assert new[0]["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "2"
    assert w.d["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "2"


def test_recreate_scales_old_to_zero_before_creating_new() -> None:
    w = DWorld(deployment(strategy={"type": "Recreate"}))
    w.step()
    w.settle_replicasets()
    w.d["spec"]["template"]["spec"]["containers"][0]["image"] = "x:2"
    acts = w.step()
    assert not any(isinstance(a, Create) for a in acts)
    assert all(r["spec"]["replicas"] == 0 for r in w.rss.values())
    for r in w.rss.values():
        r["status"] = {"replicas": 0}
    acts = w.step()
    made = [a.obj for a in acts if isinstance(a, Create)]
    assert len(made) == 1 and made[0]["spec"]["replicas"] == 4
