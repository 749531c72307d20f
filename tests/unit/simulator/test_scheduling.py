"""kube-scheduler's filters and FitError message (pkg/scheduler/framework/
plugins: noderesources, tainttoleration, nodeaffinity, interpodaffinity,
volumebinding; framework/types.go FitError.Error)."""

from __future__ import annotations

from mo_devkit.localcluster.simulator.decisions.scheduling import ClusterState, schedule, unscheduled

from .factories import node, pod


def unbound(name: str = "p", **kw: object) -> dict:
    return pod(name, node=None, **kw)  # type: ignore[arg-type]


def with_requests(p: dict, cpu: str = "0", memory: str = "0") -> dict:
    p["spec"]["containers"][0]["resources"] = {"requests": {"cpu": cpu, "memory": memory}}
    return p


def test_picks_a_node_with_room_and_prefers_the_emptier_one() -> None:
    n0, n1 = node("n0", cpu="2"), node("n1", cpu="2")
    busy = with_requests(pod("busy", node="n0"), cpu="1500m")
    placement = schedule(with_requests(unbound(), cpu="400m"), ClusterState([n0, n1], {"n0": [busy]}))
    assert placement.node == "n1"


def test_insufficient_resources_message_matches_the_real_scheduler() -> None:
    """FitError: "0/N nodes are available: <count> <reason>, ... preemption: ..\""""
    nodes = [node("n0", cpu="1"), node("n1", cpu="1", labels={"disk": "hdd"})]
    p = with_requests(unbound(), cpu="2")
    placement = schedule(p, ClusterState(nodes, {}))
    assert placement.node is None
    assert placement.message == (
        "0/2 nodes are available: 2 Insufficient cpu. "
        "preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod.."
    )


def test_node_selector_affinity_and_taints() -> None:
    nodes = [
        node(
            "n0", labels={"disk": "ssd"}, taints=[{"key": "dedicated", "value": "db", "effect": "NoSchedule"}]
        ),
        node("n1", labels={"disk": "hdd"}),
        node("n2", labels={"disk": "ssd"}),
    ]
    p = unbound(nodeSelector={"disk": "ssd"})
    assert schedule(p, ClusterState(nodes, {})).node == "n2"

    p = unbound(
        affinity={
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": "disk", "operator": "NotIn", "values": ["ssd"]}]}
                    ]
                }
            }
        }
    )
    assert schedule(p, ClusterState(nodes, {})).node == "n1"

    p = unbound(nodeSelector={"disk": "nvme"})
    msg = schedule(p, ClusterState(nodes, {})).message
    assert msg.startswith(
        "0/3 nodes are available: 1 node(s) had untolerated taint {dedicated: db}, 2 node(s) didn't match Pod's node affinity/selector."
    )
    assert "3 Preemption is not helpful for scheduling.." in msg

    tolerant = unbound(nodeSelector={"disk": "ssd"}, tolerations=[{"key": "dedicated", "operator": "Exists"}])
    assert schedule(tolerant, ClusterState(nodes[:1], {})).node == "n0"


def test_pod_anti_affinity_by_hostname_spreads_replicas() -> None:
    """requiredDuringScheduling anti-affinity on kubernetes.io/hostname keeps
    matching pods on different nodes; with no node left the pod waits."""
    anti = {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": "kubernetes.io/hostname"}
            ]
        }
    }
    nodes = [node("n0"), node("n1")]
    placed = pod("db-0", node="n0", labels={"app": "db"}, affinity=anti)
    p = unbound("db-1", labels={"app": "db"}, affinity=anti)
    assert schedule(p, ClusterState(nodes, {"n0": [placed]})).node == "n1"
    other = pod("db-2", node="n1", labels={"app": "db"})
    res = schedule(p, ClusterState(nodes, {"n0": [placed], "n1": [other]}))
    assert res.node is None
    assert "node(s) didn't match pod anti-affinity rules" in res.message


def test_existing_pods_anti_affinity_is_symmetric() -> None:
    anti = {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "kubernetes.io/hostname"}
            ]
        }
    }
    placed = pod("loner", node="n0", affinity=anti)
    res = schedule(unbound("w", labels={"app": "web"}), ClusterState([node("n0")], {"n0": [placed]}))
    assert res.node is None and "didn't satisfy existing pods anti-affinity rules" in res.message


def test_pod_affinity_follows_matching_pods_and_allows_the_first() -> None:
    aff = {
        "podAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": "cache"}}, "topologyKey": "kubernetes.io/hostname"}
            ]
        }
    }
    nodes = [node("n0"), node("n1")]
    cache = pod("cache-0", node="n1", labels={"app": "cache"})
    assert schedule(unbound(affinity=aff), ClusterState(nodes, {"n1": [cache]})).node == "n1"
    first = unbound(labels={"app": "cache"}, affinity=aff)
    assert schedule(first, ClusterState(nodes, {})).node is not None
    res = schedule(unbound(affinity=aff), ClusterState(nodes, {}))
    assert res.node is None and "didn't match pod affinity rules" in res.message


def test_too_many_pods() -> None:
    n = node("n0", pods=1)
    res = schedule(unbound(), ClusterState([n], {"n0": [pod("x", node="n0")]}))
    assert res.node is None and "1 Too many pods" in res.message


def test_missing_claim_and_unbound_immediate_claim() -> None:
    """VolumeBinding PreFilter: a claim that does not exist, or an Immediate claim not yet bound."""
    p = unbound(volumes=[{"name": "data", "persistentVolumeClaim": {"claimName": "data-0"}}])
    res = schedule(p, ClusterState([node("n0")], {}))
    assert res.message.startswith('0/1 nodes are available: persistentvolumeclaim "data-0" not found.')
    claim = {"metadata": {"name": "data-0", "namespace": "default"}, "spec": {"storageClassName": "standard"}}
    sc = {"metadata": {"name": "standard"}, "volumeBindingMode": "Immediate"}
    res = schedule(
        p, ClusterState([node("n0")], {}, claims={"data-0": claim}, storage_classes={"standard": sc})
    )
    assert res.node is None and "pod has unbound immediate PersistentVolumeClaims" in res.message


def test_wait_for_first_consumer_selects_node_then_follows_volume_affinity() -> None:
    p = unbound(volumes=[{"name": "data", "persistentVolumeClaim": {"claimName": "data-0"}}])
    sc = {"metadata": {"name": "local"}, "volumeBindingMode": "WaitForFirstConsumer"}
    claim = {"metadata": {"name": "data-0", "namespace": "default"}, "spec": {"storageClassName": "local"}}
    res = schedule(
        p, ClusterState([node("n0"), node("n1")], {}, claims={"data-0": claim}, storage_classes={"local": sc})
    )
    assert res.node is not None and res.select_claims == ("data-0",) and res.wait
    bound = {
        "metadata": {"name": "data-0", "namespace": "default"},
        "spec": {"storageClassName": "local", "volumeName": "pv1"},
        "status": {"phase": "Bound"},
    }
    pv = {
        "metadata": {"name": "pv1"},
        "spec": {
            "nodeAffinity": {
                "required": {
                    "nodeSelectorTerms": [
                        {
                            "matchExpressions": [
                                {"key": "kubernetes.io/hostname", "operator": "In", "values": ["n1"]}
                            ]
                        }
                    ]
                }
            }
        },
    }
    res = schedule(
        p,
        ClusterState(
            [node("n0"), node("n1")],
            {},
            claims={"data-0": bound},
            volumes={"pv1": pv},
            storage_classes={"local": sc},
        ),
    )
    assert res.node == "n1" and not res.wait
    naming = {**bound, "status": {"phase": "Pending"}}
    res = schedule(
        p,
        ClusterState(
            [node("n0"), node("n1")],
            {},
            claims={"data-0": naming},
            volumes={"pv1": pv},
            storage_classes={"local": sc},
        ),
    )
    assert res.node == "n1" and res.wait, "the claim names its volume but is not Bound yet: PreBind waits"
    res = schedule(
        p,
        ClusterState(
            [node("n0")], {}, claims={"data-0": bound}, volumes={"pv1": pv}, storage_classes={"local": sc}
        ),
    )
    assert res.node is None and "1 node(s) had volume node affinity conflict" in res.message


def test_no_nodes_and_which_pods_are_ours() -> None:
    assert schedule(unbound(), ClusterState([], {})).message == "no nodes available to schedule pods"
    assert unscheduled(unbound())
    assert not unscheduled(pod("bound"))
    assert not unscheduled(unbound(schedulerName="other"))
