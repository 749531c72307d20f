"""PV binding and provisioning (pkg/controller/volume/persistentvolume; docs:
concepts/storage/persistent-volumes, dynamic-provisioning), the endpoints
controller (pkg/controller/endpoint), and node lifecycle / pod GC
(pkg/controller/nodelifecycle, tainteviction, podgc)."""

from __future__ import annotations

from mo_devkit.localcluster.simulator.core.actions import Create, Delete, Patch
from mo_devkit.localcluster.simulator.decisions.endpoints import plan_endpoints
from mo_devkit.localcluster.simulator.decisions.nodes import (
    allocate_pod_ip,
    collect_orphans,
    evict_from_unreachable,
    mark_unreachable,
    node_status,
)
from mo_devkit.localcluster.simulator.decisions.volumes import (
    TOPOLOGY_KEY_PARAMETER,
    plan_claim,
    plan_volume,
    provision,
    reclaim,
    storage_class,
)

from .factories import node, pod, ready_pod

T0 = 1_700_000_000.0
PROV = "localcluster.dev/simulated"


def claim(name: str = "data", *, cls: str | None = "standard", **extra: object) -> dict:
    spec: dict = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "2Gi"}}}
    if cls is not None:
        spec["storageClassName"] = cls
    c = {
        "metadata": {"name": name, "namespace": "ns", "uid": f"uid-{name}", "resourceVersion": "5"},
        "spec": spec,
        "status": {},
    }
    c["metadata"].update(extra)  # type: ignore[arg-type]
    return c


CLASSES = {"standard": storage_class("standard", PROV, default=True, binding_mode="Immediate")}


def test_default_class_is_assigned_retroactively() -> None:
    [a] = plan_claim(claim(cls=None), [], CLASSES, in_use=False)
    assert isinstance(a, Patch) and a.patch == {"spec": {"storageClassName": "standard"}}


def test_claim_handed_to_provisioner_then_provisioned_and_bound() -> None:
    c = claim()
    acts = plan_claim(c, [], CLASSES, in_use=False)
    ann = next(a for a in acts if isinstance(a, Patch) and "metadata" in a.patch).patch["metadata"][
        "annotations"
    ]
    assert ann["volume.kubernetes.io/storage-provisioner"] == PROV
    c["metadata"]["annotations"] = ann
    [made] = provision(c, [], CLASSES, PROV, {})
    assert isinstance(made, Create)
    pv = made.obj
    assert pv["metadata"]["name"] == "pvc-uid-data"
    assert pv["metadata"]["annotations"]["pv.kubernetes.io/provisioned-by"] == PROV
    assert pv["spec"]["capacity"] == {"storage": "2Gi"}
    assert (
        pv["spec"]["claimRef"]["uid"] == "uid-data"
        and pv["spec"]["persistentVolumeReclaimPolicy"] == "Delete"
    )
    # ctrl.bind's order: the volume reports Bound, the claim names it, the claim reports Bound.
    volume_bound, names, claim_bound = plan_claim(c, [pv], CLASSES, in_use=False)
    assert isinstance(volume_bound, Patch) and volume_bound.kind.kind == "PersistentVolume"
    assert volume_bound.subresource == "status" and volume_bound.patch == {"status": {"phase": "Bound"}}
    assert isinstance(names, Patch) and names.patch["spec"] == {"volumeName": "pvc-uid-data"}
    assert names.patch["metadata"]["annotations"]["pv.kubernetes.io/bind-completed"] == "yes"
    assert isinstance(claim_bound, Patch) and claim_bound.subresource == "status"
    assert claim_bound.patch["status"] == {
        "phase": "Bound",
        "accessModes": ["ReadWriteOnce"],
        "capacity": {"storage": "2Gi"},
    }


def test_wait_for_first_consumer_waits_for_selected_node() -> None:
    classes = {"local": storage_class("local", PROV, default=False, binding_mode="WaitForFirstConsumer")}
    c = claim(cls="local")
    acts = plan_claim(c, [], classes, in_use=False)
    assert all("metadata" not in a.patch for a in acts if isinstance(a, Patch))
    c["metadata"]["annotations"] = {
        "volume.kubernetes.io/storage-provisioner": PROV,
        "volume.kubernetes.io/selected-node": "n1",
    }
    [made] = provision(c, [], classes, PROV, {"n1": node("n1")})
    assert isinstance(made, Create)
    terms = made.obj["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"]
    assert terms[0]["matchExpressions"][0]["values"] == ["n1"]


def test_a_zonal_class_pins_its_volumes_to_the_selected_nodes_zone() -> None:
    """As a CSI driver reporting a zone as its accessible topology does."""
    zonal = storage_class("zonal", PROV, default=False, binding_mode="WaitForFirstConsumer")
    zonal["parameters"] = {TOPOLOGY_KEY_PARAMETER: "topology.kubernetes.io/zone"}
    c = claim(cls="zonal")
    c["metadata"]["annotations"] = {
        "volume.kubernetes.io/storage-provisioner": PROV,
        "volume.kubernetes.io/selected-node": "n1",
    }
    zoned = node("n1", labels={"topology.kubernetes.io/zone": "z1"})
    [made] = provision(c, [], {"zonal": zonal}, PROV, {"n1": zoned})
    assert isinstance(made, Create)
    [term] = made.obj["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"]
    assert term == {
        "matchExpressions": [{"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["z1"]}]
    }
    assert provision(c, [], {"zonal": zonal}, PROV, {"n1": node("n1")}) == [], "a node in no zone gets none"


def test_released_volume_is_deleted_under_policy_delete() -> None:
    pv = {
        "metadata": {
            "name": "pv1",
            "uid": "pv-uid",
            "annotations": {"pv.kubernetes.io/provisioned-by": PROV},
        },
        "spec": {
            "claimRef": {"namespace": "ns", "name": "data", "uid": "gone"},
            "persistentVolumeReclaimPolicy": "Delete",
        },
        "status": {"phase": "Bound"},
    }
    [phase] = plan_volume(pv, {})
    assert isinstance(phase, Patch) and phase.patch == {"status": {"phase": "Released"}}
    assert reclaim(pv, PROV) == [], "the provisioner waits for the PV controller's Released"
    pv["status"]["phase"] = "Released"
    [gone] = reclaim(pv, PROV)
    assert isinstance(gone, Delete) and gone.name == "pv1"
    pv["spec"]["persistentVolumeReclaimPolicy"] = "Retain"
    assert reclaim(pv, PROV) == []


def test_pvc_protection_finalizer_released_when_unused() -> None:
    c = claim(deletionTimestamp="x", finalizers=["kubernetes.io/pvc-protection"])
    assert plan_claim(c, [], CLASSES, in_use=True) == []
    [a] = plan_claim(c, [], CLASSES, in_use=False)
    assert (
        isinstance(a, Patch)
        and a.patch_type == "json"
        and a.patch[1] == {"op": "remove", "path": "/metadata/finalizers/0"}
    )


def service(**spec: object) -> dict:
    return {
        "metadata": {"name": "web", "namespace": "default", "labels": {"team": "a"}},
        "spec": {
            "selector": {"app": "web"},
            "ports": [{"name": "http", "port": 80, "targetPort": "http", "protocol": "TCP"}],
            **spec,
        },
    }


def web_pod(name: str, ready: bool, ip: str) -> dict:
    p = ready_pod(name, labels={"app": "web"}) if ready else pod(name, labels={"app": "web"})
    p["status"]["podIP"] = ip
    p["spec"]["containers"][0]["ports"] = [{"name": "http", "containerPort": 8080}]
    return p


def test_endpoints_ready_and_not_ready_addresses_with_named_ports() -> None:
    pods = [
        web_pod("a", True, "10.0.0.2"),
        web_pod("b", False, "10.0.0.3"),
        pod("other", labels={"app": "x"}),
    ]
    [a] = plan_endpoints(service(), None, pods)
    assert isinstance(a, Create)
    assert a.obj["metadata"] == {"name": "web", "namespace": "default", "labels": {"team": "a"}}
    [subset] = a.obj["subsets"]
    assert [x["ip"] for x in subset["addresses"]] == ["10.0.0.2"]
    assert [x["ip"] for x in subset["notReadyAddresses"]] == ["10.0.0.3"]
    assert subset["ports"] == [{"name": "http", "port": 8080, "protocol": "TCP"}]
    assert subset["addresses"][0]["targetRef"] == {
        "kind": "Pod",
        "namespace": "default",
        "name": "a",
        "uid": "uid-a",
    }


def test_publish_not_ready_addresses_and_headless_hostnames() -> None:
    p = web_pod("b", False, "10.0.0.3")
    p["spec"].update(hostname="b", subdomain="web")
    [a] = plan_endpoints(service(publishNotReadyAddresses=True, clusterIP="None"), None, [p])
    assert isinstance(a, Create)
    assert a.obj["metadata"]["labels"]["service.kubernetes.io/headless"] == ""
    [subset] = a.obj["subsets"]
    assert subset["addresses"][0]["hostname"] == "b" and "notReadyAddresses" not in subset


def test_endpoints_unchanged_no_write_and_service_gone_deletes() -> None:
    pods = [web_pod("a", True, "10.0.0.2")]
    [a] = plan_endpoints(service(), None, pods)
    assert isinstance(a, Create)
    eps = dict(a.obj, metadata=dict(a.obj["metadata"], uid="e"))
    assert plan_endpoints(service(), eps, pods) == []
    [d] = plan_endpoints(None, eps, pods)
    assert isinstance(d, Delete)
    assert plan_endpoints(service(selector=None), None, pods) == []


def test_node_status_and_ip_allocation() -> None:
    st = node_status("n0", 0, "4", "8Gi", 110, T0, None)
    ready = next(c for c in st["conditions"] if c["type"] == "Ready")
    assert ready["status"] == "True" and ready["reason"] == "KubeletReady"
    assert st["allocatable"]["cpu"] == "4" and st["addresses"][0] == {
        "type": "InternalIP",
        "address": "172.18.0.2",
    }
    assert allocate_pod_ip(1, {"10.244.1.2"}) == "10.244.1.3"


def test_unreachable_node_taints_marks_pods_not_ready_and_evicts() -> None:
    n = node("n0")
    acts = mark_unreachable(n, T0)
    status_patch = acts[0].patch["status"]["conditions"]  # type: ignore[union-attr]
    assert status_patch[0]["status"] == "Unknown" and status_patch[0]["reason"] == "NodeStatusUnknown"
    taints = acts[1].patch["spec"]["taints"]  # type: ignore[union-attr]
    assert {(t["key"], t["effect"]) for t in taints} == {
        ("node.kubernetes.io/unreachable", "NoSchedule"),
        ("node.kubernetes.io/unreachable", "NoExecute"),
    }
    n["spec"]["taints"] = taints
    tolerant = ready_pod(
        "tolerant",
        tolerations=[
            {
                "key": "node.kubernetes.io/unreachable",
                "operator": "Exists",
                "effect": "NoExecute",
                "tolerationSeconds": 300,
            }
        ],
    )
    forever = ready_pod("forever", tolerations=[{"operator": "Exists"}])
    plain = ready_pod("plain")
    actions, wake = evict_from_unreachable(n, [tolerant, forever, plain], T0, 0.01)
    deleted = [a.name for a in actions if isinstance(a, Delete)]
    assert deleted == ["plain"]
    assert wake is not None and abs(wake - 3.0) < 1e-6
    not_ready = [
        a.name
        for a in actions
        if isinstance(a, Patch)
        and any(c.get("type") == "Ready" and c["status"] == "False" for c in a.patch["status"]["conditions"])
    ]
    assert sorted(set(not_ready)) == ["forever", "plain", "tolerant"]
    disruption = [
        c
        for a in actions
        if isinstance(a, Patch) and a.name == "plain"
        for c in a.patch["status"]["conditions"]
        if c["type"] == "DisruptionTarget"
    ]
    assert disruption and disruption[0]["reason"] == "DeletionByTaintManager"


def test_pod_gc_removes_pods_of_deleted_nodes() -> None:
    acts = collect_orphans([ready_pod("orphan", node="gone"), ready_pod("fine", node="n0")], {"n0"}, T0)
    assert [a.name for a in acts if isinstance(a, Delete)] == ["orphan"]
    [patch] = [a for a in acts if isinstance(a, Patch)]
    assert patch.patch["status"]["phase"] == "Failed"
    assert [d.grace_period for d in acts if isinstance(d, Delete)] == [0]
