"""The LogSet's failover in the reconcile (controllers/logset/repair.py): a store
HAKeeper reports down whose pod has not been ready for ``storeFailureTimeout``
is lost; a lost minority of the shard's replicas is replaced (or marked for a
human with ``failedPodStrategy: Orphan``), a lost majority is only reported."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from mo_operator.api.base import parse
from mo_operator.api.logset import LogSetSpec
from mo_operator.controllers.framework.draft import StatusDraft
from mo_operator.controllers.framework.env import Env
from mo_operator.controllers.framework.writes import Writes
from mo_operator.controllers.logset import FAILOVER, repair
from mo_operator.controllers.specs.pods import format_time
from mo_operator.kube.client.client import ListPage
from mo_operator.kube.controller.actor import Context
from mo_operator.matrixone import identity, labels
from mo_operator.matrixone.admin import HAKeeperPhase, HAKeeperState, LogShard, LogStore, NodeState

from .controller_fakes import NOW, FakeCaches, condition, context, events, make_env, run, writes

Obj = dict[str, Any]
TIMEOUT = 600.0  # the default storeFailureTimeout


LOG_REQUIRED = {"volume": {"size": "10Gi"}, "sharedStorage": {"fileSystem": {"path": "/data"}}}
"""What a LogSet's spec requires besides what these tests vary."""


async def run_failover(
    env: Env,
    ctx: Context,
    spec: LogSetSpec,
    pods: list[Obj],
    state: HAKeeperState | None,
    plan: Writes,
    live: tuple[int, ...] | None = None,
) -> None:
    """The failover as the LogSet's reconcile runs it: its facts read (``repair.gather``),
    judged purely (``repair.judge``), the judgement acted on into ``plan`` and ``ctx``."""
    stores = await repair.gather(env, ctx.namespace, ctx.name, spec, pods, state, live)
    draft = StatusDraft(ctx.status, generation=2, namespace=ctx.namespace)
    events: list[Any] = []
    rules = repair.policy(spec, ctx.namespace, enabled=env.settings.failover)
    intents = repair.judge(
        draft, ctx.name, stores, rules, env.clock(), quorum=state is not None, events=events
    )
    acted = draft.decision(intents, events=events).act(ctx, env.client)
    for intent in acted.intents if acted is not None else ():
        plan.intend(intent)


def typed(obj: Obj) -> LogSetSpec:
    """The LogSet's spec as admitted."""
    return parse(LogSetSpec, {**LOG_REQUIRED, **obj["spec"]})


def logset(replicas: int = 3, **spec: Any) -> Obj:
    return {
        "apiVersion": "core.matrixorigin.io/v1alpha1",
        "kind": "LogSet",
        "metadata": {"name": "mo", "namespace": "ns", "uid": "uid-mo", "generation": 2},
        "spec": {"replicas": replicas, **spec},
    }


def pod(i: int, *, down_for: float | None = None, **meta: Any) -> Obj:
    """Log pod ``i``: ready, or not ready for ``down_for`` seconds."""
    ready = down_for is None
    since = NOW - (down_for or 0) if not ready else NOW - 9000
    return {
        "kind": "Pod",
        "metadata": {
            "name": f"mo-log-{i}",
            "namespace": "ns",
            "uid": f"uid-log-{i}",
            "creationTimestamp": format_time(NOW - 10000),
            "labels": dict(meta.pop("labels", {})),
            **meta,
        },
        "status": {
            "conditions": [
                {
                    "type": "Ready",
                    "status": "True" if ready else "False",
                    "lastTransitionTime": format_time(since),
                }
            ]
        },
    }


def hakeeper(*down: int, replicas: int = 3, uuid: Any = identity.log_store_uuid) -> HAKeeperState:
    stores = tuple(
        LogStore(uuid(i), f"mo-log-{i}:32001", 100, NodeState.TIMEOUT if i in down else NodeState.NORMAL)
        for i in range(replicas)
    )
    return HAKeeperState(HAKeeperPhase.RUNNING, 100, log_stores=stores)


async def failover(
    obj: Obj,
    pods: list[Obj],
    state: HAKeeperState | None,
    *,
    enabled: bool = True,
    live: tuple[int, ...] | None = None,
) -> tuple[list[tuple[str, str, str, Any]], Context]:
    env = make_env(FakeCaches())
    env.settings = dataclasses.replace(env.settings, failover=enabled)
    ctx = context(obj)
    plan = writes(env)
    await run_failover(env, ctx, typed(obj), pods, state, plan, live)
    return (await run(plan) if plan else []), ctx


def failover_condition(ctx: Context) -> tuple[str, str, str]:
    found = condition(ctx, FAILOVER)
    assert found is not None
    return found["status"], found["reason"], found["message"]


async def test_nothing_lost_nothing_done() -> None:
    calls, ctx = await failover(logset(), [pod(0), pod(1), pod(2)], hakeeper())
    assert calls == [] and events(ctx) == []
    assert failover_condition(ctx)[:2] == ("True", "NoLostStores")


async def test_a_lost_minority_is_replaced() -> None:
    pods = [pod(0), pod(1, down_for=TIMEOUT + 5), pod(2)]
    calls, ctx = await failover(logset(), pods, hakeeper(1))
    assert calls == [("delete", "Pod", "mo-log-1", calls[0][3])]
    assert calls[0][3]["uid"] == "uid-log-1"  # only the pod judged lost
    assert calls[0][3]["grace_period_seconds"] == 0  # a pod on a dead node never ends on its own
    status, reason, message = failover_condition(ctx)
    assert (status, reason) == ("False", "RepairingStores") and "mo-log-1" in message
    assert events(ctx) == [("Warning", "StoreLost", "log stores mo-log-1 down for 600s: replacing")]


async def test_a_lost_majority_is_only_reported() -> None:
    pods = [pod(0, down_for=TIMEOUT + 1), pod(1, down_for=TIMEOUT + 5), pod(2)]
    calls, ctx = await failover(logset(), pods, hakeeper(0, 1))
    assert calls == []
    status, reason, message = failover_condition(ctx)
    assert (status, reason) == ("False", "MajorityLost")
    assert "mo-log-0, mo-log-1" in message and "not replacing them automatically" in message
    assert [(t, r) for t, r, _ in events(ctx)] == [("Warning", "MajorityLost")]


async def test_a_single_replica_shard_can_lose_nothing_safely() -> None:
    calls, ctx = await failover(logset(replicas=1), [pod(0, down_for=TIMEOUT + 1)], hakeeper(0, replicas=1))
    assert calls == [] and failover_condition(ctx)[1] == "MajorityLost"


async def test_the_limit_comes_from_the_shard_replicas_not_the_pods() -> None:
    # five log stores but a three-replica shard: losing two is a majority of the shard
    obj = logset(replicas=5, initialConfig={"logShardReplicas": 3})
    pods = [pod(0), pod(1), pod(2), pod(3, down_for=TIMEOUT + 1), pod(4, down_for=TIMEOUT + 1)]
    calls, ctx = await failover(obj, pods, hakeeper(3, 4, replicas=5))
    assert calls == [] and failover_condition(ctx)[1] == "MajorityLost"
    wider = logset(replicas=5, initialConfig={"logShardReplicas": 5})
    calls, _ = await failover(wider, pods, hakeeper(3, 4, replicas=5))
    assert sorted(name for _, _, name, _ in calls) == ["mo-log-3", "mo-log-4"]


async def test_a_store_down_for_less_than_the_timeout_is_waited_for() -> None:
    pods = [pod(0), pod(1, down_for=100), pod(2, down_for=TIMEOUT - 10)]
    calls, ctx = await failover(logset(), pods, hakeeper(1, 2))
    assert calls == []
    status, reason, message = failover_condition(ctx)[:3]
    assert (status, reason) == ("False", "StoresDown") and "mo-log-1, mo-log-2" in message
    assert ctx.requeue_after == pytest.approx(10.0)


async def test_the_timeout_is_the_specs() -> None:
    pods = [pod(0), pod(1, down_for=130), pod(2)]
    calls, _ = await failover(logset(storeFailureTimeout="2m0s"), pods, hakeeper(1))
    assert [name for _, _, name, _ in calls] == ["mo-log-1"]
    calls, ctx = await failover(logset(storeFailureTimeout="5m"), pods, hakeeper(1))
    assert calls == [] and ctx.requeue_after == pytest.approx(170.0)


async def test_only_stores_hakeeper_reports_down_and_whose_pods_are_not_ready() -> None:
    # pod not ready, but its store heartbeats: not lost (e.g. a failing probe)
    calls, _ = await failover(logset(), [pod(0), pod(1, down_for=TIMEOUT * 2), pod(2)], hakeeper())
    assert calls == []
    # store down in HAKeeper, but the pod is ready (it is restarting its store): not lost
    calls, _ = await failover(logset(), [pod(0), pod(1), pod(2)], hakeeper(1))
    assert calls == []


async def test_orphan_marks_the_lost_pod_for_a_human_instead_of_deleting_it() -> None:
    pods = [pod(0), pod(1, down_for=TIMEOUT + 5), pod(2)]
    calls, ctx = await failover(logset(failedPodStrategy="Orphan"), pods, hakeeper(1))
    assert [(verb, kind, name) for verb, kind, name, _ in calls] == [("patch", "Pod", "mo-log-1")]
    assert calls[0][3] == {
        "metadata": {"labels": {labels.ACTION_REQUIRED: "True", labels.LOGSET_OWNER: "mo"}}
    }
    status, reason, message = failover_condition(ctx)
    assert (status, reason) == ("False", "ActionRequired") and "failedPodStrategy is Orphan" in message
    assert "kubectl -n ns delete pod mo-log-1 --grace-period=0 --force" in message
    assert events(ctx) == [("Warning", "StoreLost", message)]
    # once marked, it is left to the human, and the condition keeps saying what to do
    marked = pod(1, down_for=TIMEOUT + 5, labels={labels.ACTION_REQUIRED: "True"})
    calls, ctx = await failover(logset(failedPodStrategy="Orphan"), [pod(0), marked, pod(2)], hakeeper(1))
    assert calls == [] and failover_condition(ctx)[:2] == ("False", "ActionRequired")
    assert "kubectl -n ns delete pod mo-log-1" in failover_condition(ctx)[2]


async def test_with_failover_off_a_lost_store_is_reported_and_nothing_deleted() -> None:
    pods = [pod(0), pod(1, down_for=TIMEOUT + 5), pod(2)]
    calls, ctx = await failover(logset(), pods, hakeeper(1), enabled=False)
    assert calls == []
    status, reason, message = failover_condition(ctx)
    assert (status, reason) == ("False", "ActionRequired") and "--no-failover" in message
    assert "kubectl -n ns delete pod mo-log-1" in message
    assert [(t, r) for t, r, _ in events(ctx)] == [("Warning", "StoreLost")]


async def test_without_a_quorum_nothing_is_judged_and_it_says_so() -> None:
    pods = [pod(0), pod(1, down_for=TIMEOUT + 5), pod(2, down_for=TIMEOUT + 5)]
    calls, ctx = await failover(logset(), pods, None)
    assert calls == []
    status, reason, message = failover_condition(ctx)
    assert (status, reason) == ("False", "NoQuorum") and "mo-log-1, mo-log-2 not ready" in message


async def test_log_stores_keep_their_ordinal_identity_under_dns_based_identity() -> None:
    """dnsBasedIdentity never renames log stores (as upstream): their ordinal UUIDs are
    the HAKeeper's bootstrap members, so failover maps pods to stores by ordinal."""
    obj = logset(dnsBasedIdentity=True)
    pods = [pod(0), pod(1, down_for=TIMEOUT + 5), pod(2)]
    calls, _ = await failover(obj, pods, hakeeper(1))
    assert [name for _, _, name, _ in calls] == ["mo-log-1"]
    # its store still heartbeats: the pod is not lost, whatever its readiness
    calls, _ = await failover(obj, pods, hakeeper())
    assert calls == []


def claim(name: str, *, volume: str = "", selected_node: str = "") -> Obj:
    meta: Obj = {"name": name, "namespace": "ns", "uid": f"uid-{name}"}
    if selected_node:
        meta["annotations"] = {"volume.kubernetes.io/selected-node": selected_node}
    return {"kind": "PersistentVolumeClaim", "metadata": meta, "spec": {"volumeName": volume}}


def local_volume(name: str, node: str) -> Obj:
    term = {"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In", "values": [node]}]}
    return {
        "kind": "PersistentVolume",
        "metadata": {"name": name},
        "spec": {"nodeAffinity": {"required": {"nodeSelectorTerms": [term]}}},
    }


async def repair_with_volumes(
    pods: list[Obj],
    claims: list[Obj],
    cluster: list[Obj],
    state: HAKeeperState | None = None,
    *,
    pages: list[tuple[str, str | None]] | None = None,
    page_size: int = 100,
) -> tuple[list[Any], Context]:
    """Failover where the lost pods mount claims, with these PVs and Nodes in the cluster
    (node lists answer every node, ``page_size`` a page, and are recorded in ``pages``)."""
    env = make_env(FakeCaches(*claims))
    by_name = {(o["kind"], o["metadata"]["name"]): o for o in cluster}
    nodes = [o for o in cluster if o["kind"] == "Node"]

    async def get_or_none(res: Any, name: str, namespace: str | None = None) -> Obj | None:
        return by_name.get((res.kind, name))

    async def list_page(
        res: Any,
        namespace: str | None = None,
        *,
        label_selector: str = "",
        continue_: str | None = None,
        **_: Any,
    ) -> ListPage:
        assert res.kind == "Node"
        if pages is not None:
            pages.append((label_selector, continue_))
        start = int(continue_ or 0)
        more = start + page_size < len(nodes)
        return ListPage(nodes[start : start + page_size], "1", str(start + page_size) if more else None)

    setattr(env.client, "get_or_none", get_or_none)  # noqa: B010 (the recording client reads nothing)
    setattr(env.client, "list_page", list_page)  # noqa: B010
    ctx = context(logset())
    plan = writes(env)
    await run_failover(env, ctx, typed(logset()), pods, state or hakeeper(1), plan)
    return (await run(plan) if plan else []), ctx


def zonal_volume(name: str, zone: str) -> Obj:
    term = {"matchExpressions": [{"key": "topology.kubernetes.io/zone", "operator": "In", "values": [zone]}]}
    return {
        "kind": "PersistentVolume",
        "metadata": {"name": name},
        "spec": {"nodeAffinity": {"required": {"nodeSelectorTerms": [term]}}},
    }


def node(name: str, zone: str, *, ready: bool = True, cordoned: bool = False) -> Obj:
    return {
        "kind": "Node",
        "metadata": {"name": name, "labels": {"topology.kubernetes.io/zone": zone}},
        "spec": {"unschedulable": True} if cordoned else {},
        "status": {"conditions": [{"type": "Ready", "status": "True" if ready else "Unknown"}]},
    }


def zone_lost() -> list[Obj]:
    """mo-log-1 lost, mounting its claim."""
    return [pod(0), mounting(pod(1, down_for=TIMEOUT + 5), "mo-data-mo-log-1"), pod(2)]


async def test_a_lost_store_whose_zone_has_no_usable_node_gets_a_fresh_volume() -> None:
    claims = [claim("mo-data-mo-log-1", volume="pv-1")]
    cluster = [
        zonal_volume("pv-1", "z1"),
        node("n1", "z1", ready=False),
        node("n2", "z1", cordoned=True),
        node("n3", "z2"),
    ]
    calls, ctx = await repair_with_volumes(zone_lost(), claims, cluster)
    assert [(verb, kind, name) for verb, kind, name, _ in calls] == [
        ("delete", "PersistentVolumeClaim", "mo-data-mo-log-1"),
        ("delete", "Pod", "mo-log-1"),
    ]
    assert failover_condition(ctx) == (
        "False",
        "RepairingStores",
        "log stores mo-log-1 down for 600s: replacing; mo-log-1 gets a new volume (mo-data-mo-log-1 "
        "pinned to zone z1, which has no schedulable Ready node)",
    )
    assert events(ctx) == [("Warning", "StoreLost", failover_condition(ctx)[2])]


async def test_a_zonal_volume_is_kept_while_its_zone_has_a_usable_node() -> None:
    claims = [claim("mo-data-mo-log-1", volume="pv-1")]
    pages: list[tuple[str, str | None]] = []
    # the usable node is on the third page: every page is read until one is found
    cluster = [
        zonal_volume("pv-1", "z1"),
        *(node(f"n{i}", "z1", ready=False) for i in range(4)),
        node("up", "z1"),
    ]
    calls, _ = await repair_with_volumes(zone_lost(), claims, cluster, pages=pages, page_size=2)
    assert [(verb, kind) for verb, kind, _, _ in calls] == [("delete", "Pod")]
    assert pages == [
        ("topology.kubernetes.io/zone in (z1)", None),
        ("topology.kubernetes.io/zone in (z1)", "2"),
        ("topology.kubernetes.io/zone in (z1)", "4"),
    ]


async def test_the_nodes_of_a_zone_are_read_once_for_every_lost_store_there() -> None:
    pods = [mounting(pod(i, down_for=TIMEOUT + 5), f"mo-data-mo-log-{i}") for i in range(3)]
    claims = [claim(f"mo-data-mo-log-{i}", volume=f"pv-{i}") for i in range(3)]
    pages: list[tuple[str, str | None]] = []
    cluster = [*(zonal_volume(f"pv-{i}", "z1") for i in range(3)), node("n1", "z1", ready=False)]
    await repair_with_volumes(pods, claims, cluster, hakeeper(0, 1, 2), pages=pages)
    assert pages == [("topology.kubernetes.io/zone in (z1)", None)]


async def test_a_fresh_volume_waits_until_hakeeper_no_longer_lists_the_stores_replicas() -> None:
    claims = [claim("mo-data-mo-log-1", volume="pv-1")]
    cluster = [zonal_volume("pv-1", "z1"), node("n1", "z1", ready=False)]
    uuid = identity.log_store_uuid
    listing = dataclasses.replace(
        hakeeper(1), log_shards=(LogShard(0, {131072: uuid(0), 131073: uuid(1), 131074: uuid(2)}),)
    )
    calls, ctx = await repair_with_volumes(zone_lost(), claims, cluster, listing)
    assert calls == []
    status, reason, message = failover_condition(ctx)
    assert (status, reason) == ("False", "WaitingForHAKeeper")
    assert "once HAKeeper no longer lists its replicas (shard 0 replica 131073)" in message
    removed = dataclasses.replace(hakeeper(1), log_shards=(LogShard(0, {131072: uuid(0), 131074: uuid(2)}),))
    calls, _ = await repair_with_volumes(zone_lost(), claims, cluster, removed)
    assert [(verb, kind) for verb, kind, _, _ in calls] == [
        ("delete", "PersistentVolumeClaim"),
        ("delete", "Pod"),
    ]


def mounting(p: Obj, *claims: str) -> Obj:
    p["spec"] = {"volumes": [{"name": c, "persistentVolumeClaim": {"claimName": c}} for c in claims]}
    return p


async def test_a_lost_store_whose_volume_is_pinned_to_a_gone_node_gets_a_fresh_volume() -> None:
    pods = [pod(0), mounting(pod(1, down_for=TIMEOUT + 5), "mo-data-mo-log-1"), pod(2)]
    claims = [claim("mo-data-mo-log-1", volume="pv-1")]
    calls, ctx = await repair_with_volumes(pods, claims, [local_volume("pv-1", "node-a")])
    assert [(verb, kind, name) for verb, kind, name, _ in calls] == [
        ("delete", "PersistentVolumeClaim", "mo-data-mo-log-1"),  # first, so the new pod gets a new one
        ("delete", "Pod", "mo-log-1"),
    ]
    assert calls[0][3]["uid"] == "uid-mo-data-mo-log-1"
    message = failover_condition(ctx)[2]
    assert "mo-log-1 gets a new volume" in message and "node-a, which is gone" in message


async def test_a_volume_whose_node_still_exists_is_kept() -> None:
    pods = [pod(0), mounting(pod(1, down_for=TIMEOUT + 5), "mo-data-mo-log-1"), pod(2)]
    claims = [claim("mo-data-mo-log-1", volume="pv-1")]
    node = {"kind": "Node", "metadata": {"name": "node-a"}}
    calls, _ = await repair_with_volumes(pods, claims, [local_volume("pv-1", "node-a"), node])
    assert [(verb, kind) for verb, kind, _, _ in calls] == [("delete", "Pod")]
    # a network volume (no node affinity) is kept too
    calls, _ = await repair_with_volumes(
        pods, claims, [{"kind": "PersistentVolume", "metadata": {"name": "pv-1"}, "spec": {}}]
    )
    assert [(verb, kind) for verb, kind, _, _ in calls] == [("delete", "Pod")]


async def test_an_unbound_claim_waiting_for_a_gone_node_is_replaced() -> None:
    pods = [pod(0), mounting(pod(1, down_for=TIMEOUT + 5), "mo-data-mo-log-1"), pod(2)]
    claims = [claim("mo-data-mo-log-1", selected_node="node-b")]
    calls, _ = await repair_with_volumes(pods, claims, [])
    assert [(verb, kind) for verb, kind, _, _ in calls] == [
        ("delete", "PersistentVolumeClaim"),
        ("delete", "Pod"),
    ]


async def test_a_node_that_cannot_be_read_is_not_taken_for_gone() -> None:
    from mo_operator.kube.meta.errors import ApiError

    pods = [pod(0), mounting(pod(1, down_for=TIMEOUT + 5), "mo-data-mo-log-1"), pod(2)]
    env = make_env(FakeCaches(claim("mo-data-mo-log-1", selected_node="node-b")))

    async def refused(res: Any, name: str, namespace: str | None = None) -> Obj | None:
        raise ApiError(403, "Forbidden", f"{res.plural} {name} is forbidden")

    setattr(env.client, "get_or_none", refused)  # noqa: B010
    ctx, plan = context(logset()), writes(env)
    await run_failover(env, ctx, typed(logset()), pods, hakeeper(1), plan)
    assert [(verb, kind) for verb, kind, _, _ in await run(plan)] == [("delete", "Pod")]


def test_only_a_volume_every_term_of_which_names_hosts_is_pinned() -> None:
    from mo_operator.controllers.logset.stranded import pinned_nodes

    assert pinned_nodes(local_volume("pv", "node-a")) == ("node-a",)
    zone = {"matchExpressions": [{"key": "topology.kubernetes.io/zone", "operator": "In", "values": ["z1"]}]}
    either = local_volume("pv", "node-a")
    either["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"].append(zone)
    assert pinned_nodes(either) == (), "a volume usable anywhere in a zone can follow its pod"
    assert pinned_nodes({"spec": {}}) == ()


async def test_a_store_whose_pod_is_yet_to_be_made_again_is_down_not_up() -> None:
    # the lost pod is deleted and the StatefulSet has not made it again: HAKeeper
    # still shows the store down, so the condition must not say every store is up
    calls, ctx = await failover(logset(), [pod(0), pod(2)], hakeeper(1))
    assert calls == []
    status, reason, message = failover_condition(ctx)
    assert (status, reason) == ("False", "StoresDown") and "mo-log-1 (no pod yet)" in message
    # however long it takes, there is no pod to replace
    calls, ctx = await failover(logset(storeFailureTimeout="0s"), [pod(0), pod(2)], hakeeper(1))
    assert calls == [] and failover_condition(ctx)[1] == "StoresDown"


async def test_a_pod_missing_while_hakeeper_counts_its_store_up_is_not_reported() -> None:
    calls, ctx = await failover(logset(), [pod(0), pod(2)], hakeeper())
    assert calls == [] and failover_condition(ctx)[:2] == ("True", "NoLostStores")


async def test_a_store_the_logset_keeps_below_a_reserved_ordinal_fails_over_like_any_other() -> None:
    # store 1 retired by the Go operator's failover: the stores are 0, 2, 3, and 0 is the LogSet's own
    live = (0, 2, 3)
    stores = tuple(
        LogStore(
            identity.log_store_uuid(i),
            f"mo-log-{i}:32001",
            100,
            NodeState.TIMEOUT if i == 0 else NodeState.NORMAL,
        )
        for i in live
    )
    state = HAKeeperState(HAKeeperPhase.RUNNING, 100, log_stores=stores)
    pods = [pod(0, down_for=TIMEOUT + 5), pod(2), pod(3)]
    calls, ctx = await failover(logset(), pods, state, live=live)
    assert [(c[0], c[2]) for c in calls] == [("delete", "mo-log-0")]
    calls, ctx = await failover(logset(), [pod(2), pod(3)], state, live=live)
    assert calls == []
    _, reason, message = failover_condition(ctx)
    assert reason == "StoresDown" and "mo-log-0 (no pod yet)" in message and "mo-log-1" not in message
