"""The StatefulSet controller (pkg/controller/statefulset/stateful_set_control.go,
stateful_set_utils.go; docs: concepts/workloads/controllers/statefulset)."""

from __future__ import annotations

import copy
from typing import Any

from mo_devkit.localcluster.simulator.core.actions import Create, Delete, Patch
from mo_devkit.localcluster.simulator.core.objects import name_of
from mo_devkit.localcluster.simulator.decisions.replicaset import BURST
from mo_devkit.localcluster.simulator.decisions.statefulset import StatefulSetPlan, plan_statefulset

from .factories import ready_pod

T0 = 1_700_000_000.0


def sts(replicas: int = 3, **spec: Any) -> dict:
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "web", "namespace": "default", "uid": "sts-uid", "generation": 1},
        "spec": {
            "replicas": replicas,
            "serviceName": "web",
            "selector": {"matchLabels": {"app": "web"}},
            "podManagementPolicy": "OrderedReady",
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}},
            "revisionHistoryLimit": 10,
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "app", "image": "nginx:1"}]},
            },
            "volumeClaimTemplates": [
                {
                    "metadata": {"name": "data"},
                    "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
                }
            ],
            **spec,
        },
        "status": {},
    }


class World:
    """Applies a plan's writes to in-memory objects, as the API server would."""

    def __init__(self, s: dict) -> None:
        self.sts = s
        self.pods: dict[str, dict] = {}
        self.claims: dict[str, dict] = {}
        self.revisions: dict[str, dict] = {}
        self.uid = 0

    def plan(self) -> StatefulSetPlan:
        return plan_statefulset(
            self.sts, list(self.pods.values()), self.claims, list(self.revisions.values()), T0
        )

    def step(self) -> StatefulSetPlan:
        p = self.plan()
        for a in [*p.actions, *p.cleanup]:
            self.apply(a)
        if p.status is not None:
            self.sts["status"] = p.status
        return p

    def apply(self, a: Any) -> None:
        if isinstance(a, Create):
            obj = copy.deepcopy(a.obj)
            self.uid += 1
            obj["metadata"]["uid"] = f"uid-{self.uid}"
            obj["metadata"]["creationTimestamp"] = f"2024-01-01T00:00:{self.uid:02d}Z"
            kind = obj["kind"]
            if kind == "Pod":
                obj["status"] = {"phase": "Pending"}
                self.pods[name_of(obj)] = obj
            elif kind == "PersistentVolumeClaim":
                self.claims[name_of(obj)] = obj
            else:
                self.revisions[name_of(obj)] = obj
        elif isinstance(a, Delete):
            if a.kind.kind == "Pod":
                self.pods.pop(a.name, None)
            else:
                self.revisions.pop(a.name, None)
        elif isinstance(a, Patch):
            if a.kind.kind == "PersistentVolumeClaim":
                self.claims[a.name]["metadata"].update(a.patch["metadata"])
            elif a.kind.kind == "ControllerRevision":
                self.revisions[a.name].update(a.patch)

    def make_ready(self, *names: str) -> None:
        for n in names:
            p = self.pods[n]
            p["status"] = ready_pod(n)["status"]

    def update_template(self, image: str) -> None:
        self.sts["spec"]["template"]["spec"]["containers"][0]["image"] = image
        self.sts["metadata"]["generation"] += 1


def creates(plan: StatefulSetPlan, kind: str) -> list[str]:
    return [name_of(a.obj) for a in plan.actions if isinstance(a, Create) and a.obj["kind"] == kind]


def deletes(plan: StatefulSetPlan) -> list[str]:
    return [a.name for a in plan.actions if isinstance(a, Delete)]


def test_ordered_ready_creates_one_pod_at_a_time_with_identity_and_claims() -> None:
    w = World(sts())
    p = w.step()
    revs = creates(p, "ControllerRevision")
    assert len(revs) == 1 and revs[0].startswith("web-")
    assert creates(p, "PersistentVolumeClaim") == ["data-web-0"]
    assert creates(p, "Pod") == ["web-0"]
    pod0 = w.pods["web-0"]
    assert pod0["metadata"]["labels"] == {
        "app": "web",
        "statefulset.kubernetes.io/pod-name": "web-0",
        "apps.kubernetes.io/pod-index": "0",
        "controller-revision-hash": revs[0],
    }
    assert pod0["metadata"]["generateName"] == "web-"
    assert pod0["spec"]["hostname"] == "web-0" and pod0["spec"]["subdomain"] == "web"
    assert pod0["spec"]["volumes"] == [{"name": "data", "persistentVolumeClaim": {"claimName": "data-web-0"}}]
    ref = pod0["metadata"]["ownerReferences"][0]
    assert ref["kind"] == "StatefulSet" and ref["controller"] and ref["blockOwnerDeletion"]
    assert w.claims["data-web-0"]["metadata"]["labels"] == {"app": "web"}
    assert "ownerReferences" not in w.claims["data-web-0"]["metadata"], "Retain/Retain: claims are not owned"
    rev = w.revisions[revs[0]]
    assert rev["revision"] == 1 and rev["metadata"]["labels"]["controller.kubernetes.io/hash"] == revs[0][4:]
    # web-0 is not ready yet: OrderedReady waits.
    assert creates(w.step(), "Pod") == []
    w.make_ready("web-0")
    assert creates(w.step(), "Pod") == ["web-1"]
    w.step()
    st = w.sts["status"]
    assert (
        st["replicas"] == 2
        and st["readyReplicas"] == 1
        and st["currentRevision"] == st["updateRevision"] == revs[0]
    )
    assert st["observedGeneration"] == 1 and st["collisionCount"] == 0


def test_parallel_creates_all_pods_at_once() -> None:
    w = World(sts(podManagementPolicy="Parallel"))
    assert sorted(creates(w.step(), "Pod")) == ["web-0", "web-1", "web-2"]


def test_a_huge_set_gets_at_most_a_burst_of_pods_per_sync_and_a_prompt_next_sync() -> None:
    w = World(sts(replicas=100_000, podManagementPolicy="Parallel"))
    plan = w.step()
    assert len(creates(plan, "Pod")) == BURST and len(creates(plan, "PersistentVolumeClaim")) == BURST
    assert plan.requeue_after == 0.0
    assert creates(w.step(), "Pod")[0] == f"web-{BURST}"


def test_scale_in_deletes_highest_ordinal_first_and_keeps_claims() -> None:
    w = World(sts())
    for _ in range(6):
        w.step()
        w.make_ready(*w.pods)
    assert sorted(w.pods) == ["web-0", "web-1", "web-2"]
    w.sts["spec"]["replicas"] = 1
    assert deletes(w.step()) == ["web-2"]
    assert deletes(w.step()) == ["web-1"]
    assert sorted(w.claims) == ["data-web-0", "data-web-1", "data-web-2"]


def test_retention_policy_owner_references() -> None:
    """whenDeleted=Delete: claims owned by the set; whenScaled=Delete: a
    condemned pod's claim gets the pod as owner (not controller) so the
    garbage collector removes it with the pod."""
    w = World(sts(persistentVolumeClaimRetentionPolicy={"whenDeleted": "Delete", "whenScaled": "Delete"}))
    for _ in range(6):
        w.step()
        w.make_ready(*w.pods)
    refs = w.claims["data-web-2"]["metadata"]["ownerReferences"]
    assert refs == [{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "web", "uid": "sts-uid"}]
    w.sts["spec"]["replicas"] = 2
    pod_uid = w.pods["web-2"]["metadata"]["uid"]
    p = w.step()
    assert deletes(p) == ["web-2"]
    refs = w.claims["data-web-2"]["metadata"]["ownerReferences"]
    assert refs == [{"apiVersion": "v1", "kind": "Pod", "name": "web-2", "uid": pod_uid}]
    assert "ownerReferences" in w.claims["data-web-1"]["metadata"]


def test_rolling_update_goes_from_the_highest_ordinal_and_waits_for_ready() -> None:
    w = World(sts())
    for _ in range(6):
        w.step()
        w.make_ready(*w.pods)
    old = w.sts["status"]["currentRevision"]
    w.update_template("nginx:2")
    p = w.step()
    new = [r for r in creates(p, "ControllerRevision")]
    assert len(new) == 1 and new[0] != old
    assert deletes(p) == ["web-2"]
    assert w.sts["status"]["updateRevision"] == new[0] and w.sts["status"]["currentRevision"] == old
    p = w.step()
    assert creates(p, "Pod") == ["web-2"]
    assert w.pods["web-2"]["metadata"]["labels"]["controller-revision-hash"] == new[0]
    assert w.pods["web-2"]["spec"]["containers"][0]["image"] == "nginx:2"
    assert deletes(w.step()) == [], "waits until web-2 is ready"
    w.make_ready("web-2")
    assert deletes(w.step()) == ["web-1"]
    for _ in range(6):
        w.step()
        w.make_ready(*w.pods)
    st = w.sts["status"]
    assert st["currentRevision"] == st["updateRevision"] == new[0]
    assert st["updatedReplicas"] == st["currentReplicas"] == 3
    assert w.revisions[new[0]]["revision"] == 2


def test_partition_keeps_lower_ordinals_on_the_current_revision() -> None:
    w = World(sts(updateStrategy={"type": "RollingUpdate", "rollingUpdate": {"partition": 2}}))
    for _ in range(6):
        w.step()
        w.make_ready(*w.pods)
    w.update_template("nginx:2")
    for _ in range(6):
        w.step()
        w.make_ready(*w.pods)
    images = {n: p["spec"]["containers"][0]["image"] for n, p in w.pods.items()}
    assert images == {"web-0": "nginx:1", "web-1": "nginx:1", "web-2": "nginx:2"}
    st = w.sts["status"]
    assert (
        st["updatedReplicas"] == 1
        and st["currentReplicas"] == 2
        and st["currentRevision"] != st["updateRevision"]
    )


def test_on_delete_strategy_updates_only_deleted_pods() -> None:
    w = World(sts(updateStrategy={"type": "OnDelete"}))
    for _ in range(6):
        w.step()
        w.make_ready(*w.pods)
    w.update_template("nginx:2")
    assert deletes(w.step()) == []
    del w.pods["web-1"]
    assert creates(w.step(), "Pod") == ["web-1"]
    assert w.pods["web-1"]["spec"]["containers"][0]["image"] == "nginx:2"


def test_failed_pod_is_deleted_for_recreation() -> None:
    w = World(sts(replicas=1))
    w.step()
    w.pods["web-0"]["status"] = {"phase": "Failed"}
    assert deletes(w.step()) == ["web-0"]


def test_rollback_reuses_and_renumbers_the_equal_revision() -> None:
    """history.FindEqualRevisions: going back to an earlier template reuses its
    revision with the next revision number instead of creating a new one."""
    w = World(sts(replicas=1))
    w.step()
    first = w.sts["status"]["updateRevision"]
    w.update_template("nginx:2")
    w.step()
    w.update_template("nginx:1")
    p = w.step()
    assert creates(p, "ControllerRevision") == []
    assert w.sts["status"]["updateRevision"] == first
    assert w.revisions[first]["revision"] == 3


def test_history_is_truncated_to_the_limit() -> None:
    w = World(sts(replicas=1, revisionHistoryLimit=1))
    for i in range(2, 6):
        w.step()
        w.make_ready(*w.pods)
        w.update_template(f"nginx:{i}")
    for _ in range(4):
        w.step()
        w.make_ready(*w.pods)
    live = {w.sts["status"]["currentRevision"], w.sts["status"]["updateRevision"]}
    assert len(w.revisions) <= len(live) + 1


def test_deleted_claim_blocks_pod_creation() -> None:
    w = World(sts(replicas=1))
    w.claims["data-web-0"] = {
        "metadata": {"name": "data-web-0", "namespace": "default", "deletionTimestamp": "x", "uid": "c"},
        "spec": {},
    }
    p = w.step()
    assert creates(p, "Pod") == []


def test_a_reverted_template_leaves_the_pod_tried_with_the_bad_one_until_deleted() -> None:
    """docs: StatefulSet "Forced rollback": with OrderedReady a pod that never
    became ready on the bad template stays after the revert (the controller
    waits for it to be Ready before anything else), while the status already
    names the reverted revision as both current and update; deleting the pod
    brings it back on the reverted template. Checked against the real
    controller in tests/integration/simulator_differential."""
    w = World(sts())
    for _ in range(6):
        w.step()
        w.make_ready(*w.pods)
    good = w.sts["status"]["currentRevision"]
    w.update_template("nginx:broken")
    for _ in range(4):
        w.step()
        w.make_ready(*(n for n in w.pods if n != "web-2"))
    assert w.pods["web-2"]["spec"]["containers"][0]["image"] == "nginx:broken"
    w.pods["web-2"]["status"] = {"phase": "Running"}  # runs, never ready
    w.update_template("nginx:1")
    for _ in range(4):
        assert deletes(w.step()) == [], "nothing replaces web-2 by itself"
    st = w.sts["status"]
    assert st["currentRevision"] == st["updateRevision"] == good
    assert (st["replicas"], st["readyReplicas"], st["currentReplicas"], st["updatedReplicas"]) == (3, 2, 2, 2)
    assert w.pods["web-2"]["spec"]["containers"][0]["image"] == "nginx:broken"
    del w.pods["web-2"]  # the person's part of the forced rollback
    assert creates(w.step(), "Pod") == ["web-2"]
    assert w.pods["web-2"]["spec"]["containers"][0]["image"] == "nginx:1"
    w.make_ready("web-2")
    w.step()
    st = w.sts["status"]
    assert (st["readyReplicas"], st["currentReplicas"], st["updatedReplicas"]) == (3, 3, 3)
