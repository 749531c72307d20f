"""The takeover's next step, which the command and the running operator both take."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from mo_operator.controllers.adoption.steps import (
    HELD,
    SetState,
    StepKind,
    go_operator_config_maps,
    next_step,
    set_step,
)
from mo_operator.controllers.cnset import pods as cnpods
from mo_operator.controllers.specs.configmaps import CONFIG_HASH_LABEL
from mo_operator.matrixone import labels
from mo_operator.matrixone.component import Component

Obj = dict[str, Any]
KRUISE = {"apiVersion": "apps.kruise.io/v1beta1", "kind": "StatefulSet", "name": "w", "controller": True}
OURS = {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "w", "controller": True}
NAMES = {Component.LOG: "mo", Component.TN: "mo", Component.CN: "mo-tp", Component.PROXY: "mo"}


def _set(component: Component, replicas: int = 3, **spec: Any) -> Obj:
    conditions = [
        {"type": "Ready", "status": "True"},
        {"type": "UpToDate", "status": "True"},
    ]
    return {
        "metadata": {"name": NAMES[component], "namespace": "ns", "generation": 1},
        "spec": {"replicas": replicas, **spec},
        "status": {"conditions": conditions},
    }


def _pod(
    name: str, owner: Obj | None, *, ready: bool = True, deleting: bool = False, **annotations: str
) -> Obj:
    meta: Obj = {"name": name, "ownerReferences": [owner] if owner else [], "annotations": annotations}
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return {
        "metadata": meta,
        "spec": {"volumes": [{"name": "config", "configMap": {"name": f"{name}-cm"}}]},
        "status": {"conditions": [{"type": "Ready", "status": "True" if ready else "False"}]},
    }


def _workload(replicas: int = 3, deleting: bool = False, **spec: Any) -> Obj:
    meta: Obj = {"name": "mo-log", "uid": "w-uid"}
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return {"metadata": meta, "spec": {"replicas": replicas, **spec}, "status": {}}


def _sts(replicas: int = 3, rolled: bool = True) -> Obj:
    status = {
        "observedGeneration": 2,
        "currentRevision": "a" if rolled else "b",
        "updateRevision": "a",
        "updatedReplicas": replicas,
        "readyReplicas": replicas,
    }
    return {"metadata": {"name": "mo-log", "generation": 2}, "spec": {"replicas": replicas}, "status": status}


def _log(owner: Obj | None, workload: Obj | None = None, **kw: Any) -> SetState:
    pods = [_pod(f"mo-log-{i}", owner) for i in range(3)]
    return SetState(Component.LOG, _set(Component.LOG), workload, pods, kw.pop("ours", _sts()), **kw)


def test_a_held_healthy_set_is_released_with_orphan_propagation() -> None:
    step = set_step(_log(KRUISE, _workload()))
    assert step is not None and step.kind is StepKind.RELEASE and step.writes
    assert "propagationPolicy=Orphan" in step.message
    assert step.target is not None and step.target["metadata"]["uid"] == "w-uid"


def test_a_held_unsafe_set_is_refused_with_the_preflight_reason() -> None:
    step = set_step(_log(KRUISE, _workload(reserveOrdinals=[1])))
    assert step is not None and step.kind is StepKind.REFUSED and not step.writes
    assert "reserveOrdinals [1]" in step.message


def test_a_log_set_with_reserved_ordinals_is_released_with_them_to_record() -> None:
    pods = [_pod(f"mo-log-{i}", KRUISE) for i in (1, 2, 3)]
    state = SetState(Component.LOG, _set(Component.LOG), _workload(reserveOrdinals=[0]), pods, None)
    step = set_step(state)
    assert step is not None and step.kind is StepKind.RELEASE and step.held
    assert step.annotations == {labels.LOGSET_RESERVED_ORDINALS: "[0]"}
    assert "recording reserved ordinals [0] on the LogSet mo" in step.message
    plain = set_step(_log(KRUISE, _workload()))
    assert plain is not None and plain.annotations == {}


def test_a_deleting_workload_or_pods_kruise_still_controls_wait_for_the_garbage_collector() -> None:
    for state in (_log(KRUISE, _workload(deleting=True)), _log(KRUISE, None)):
        step = set_step(state)
        assert step is not None and step.kind is StepKind.RELEASING and not step.held


def test_released_pods_wait_for_our_workloads_roll() -> None:
    step = set_step(_log(None))
    assert step is not None and step.kind is StepKind.ROLLING
    assert "mo-log-0, mo-log-1, mo-log-2" in step.message
    step = set_step(_log(OURS, ours=_sts(rolled=False)))
    assert step is not None and step.kind is StepKind.ROLLING and "StatefulSet" in step.message


def test_once_rolled_the_go_operators_config_maps_go_then_the_set_is_done() -> None:
    config_maps = [{"metadata": {"name": "mo-log-config", "uid": "cm"}}]
    step = set_step(_log(OURS, config_maps=config_maps))
    assert step is not None and step.kind is StepKind.COLLECT_CONFIG_MAP and step.writes
    assert set_step(_log(OURS, config_maps=config_maps, mounted=frozenset({"mo-log-config"}))) is None
    assert set_step(_log(OURS)) is None


def test_released_cn_pods_learn_their_hakeeper_before_anything_else() -> None:
    cnset = _set(Component.CN, replicas=1, deps={"logSet": {"name": "mo"}})
    pods = [_pod("mo-tp-cn-abcde", None)]
    step = set_step(SetState(Component.CN, cnset, None, pods))
    assert step is not None and step.kind is StepKind.RECORD_HAKEEPER
    assert step.annotations[cnpods.LOGSET_ANNOTATION] == "ns/mo"
    recorded = [_pod("mo-tp-cn-abcde", None, **step.annotations)]
    after = set_step(SetState(Component.CN, cnset, None, recorded))
    assert after is not None and after.kind is StepKind.ROLLING


def test_a_pools_released_pods_are_made_its_own_as_they_are_never_rolled() -> None:
    pool_set = _set(Component.CN, replicas=2, deps={"logSet": {"name": "mo"}}, podManagementPolicy="Pooling")
    pool_set["metadata"]["uid"] = "set-uid"
    recorded = {
        cnpods.HAKEEPER_ANNOTATION: "mo-log-discovery.ns.svc:32001",
        cnpods.LOGSET_ANNOTATION: "ns/mo",
    }
    bound, idle = _pod("mo-tp-cn-aaaaa", None, **recorded), _pod("mo-tp-cn-bbbbb", None, **recorded)
    for pod in (bound, idle):
        pod["metadata"]["resourceVersion"] = "7"
    step = set_step(SetState(Component.CN, pool_set, None, [bound, idle]))
    assert step is not None and step.kind is StepKind.ADOPT_POD and step.writes and step.target is bound
    assert step.owner is not None and step.owner["uid"] == "set-uid" and step.owner["controller"]
    assert step.owner["kind"] == "CNSet"
    owned = {**bound, "metadata": {**bound["metadata"], "ownerReferences": [step.owner]}}
    step = set_step(SetState(Component.CN, pool_set, None, [owned, idle]))
    assert step is not None and step.kind is StepKind.ADOPT_POD and step.target is idle
    both = [owned, {**idle, "metadata": {**idle["metadata"], "ownerReferences": [step.owner]}}]
    config_maps = [{"metadata": {"name": "mo-tp-cn-config", "uid": "cm"}}]
    mounted = frozenset({"mo-tp-cn-config"})
    assert (
        set_step(SetState(Component.CN, pool_set, None, both, config_maps=config_maps, mounted=mounted))
        is None
    ), "nothing rolls: the pods keep the Go operator's config while they live"
    step = set_step(SetState(Component.CN, pool_set, None, both, config_maps=config_maps))
    assert step is not None and step.kind is StepKind.COLLECT_CONFIG_MAP


def _deployment(available: bool) -> Obj:
    status = {"observedGeneration": 1, "updatedReplicas": 1, "availableReplicas": 1 if available else 0}
    return {"metadata": {"name": "mo-proxy", "generation": 1}, "spec": {"replicas": 1}, "status": status}


def test_old_proxy_pods_go_one_at_a_time_once_our_deployment_is_available() -> None:
    proxy = _set(Component.PROXY, replicas=1)
    rs = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "r", "controller": True}
    ours = _pod("mo-proxy-new", rs)
    old = [_pod("mo-proxy-aaaaa", None), _pod("mo-proxy-bbbbb", None)]
    waiting = set_step(SetState(Component.PROXY, proxy, None, [ours, *old], _deployment(False)))
    assert waiting is not None and waiting.kind is StepKind.ROLLING
    step = set_step(SetState(Component.PROXY, proxy, None, [ours, *old], _deployment(True)))
    assert step is not None and step.kind is StepKind.RETIRE_POD and step.target is old[0]
    going = [_pod("mo-proxy-aaaaa", None, deleting=True), old[1]]
    step = set_step(SetState(Component.PROXY, proxy, None, [ours, *going], _deployment(True)))
    assert step is not None and step.kind is StepKind.ROLLING and "mo-proxy-aaaaa" in step.message
    assert set_step(SetState(Component.PROXY, proxy, None, [ours], _deployment(True))) is None


def test_a_set_under_way_goes_before_any_held_set_is_released() -> None:
    log = _log(OURS, ours=_sts(rolled=False))
    tn = SetState(
        Component.TN,
        _set(Component.TN, replicas=3),
        _workload(),
        [_pod(f"mo-dn-{i}", KRUISE) for i in range(3)],
    )
    step = next_step([tn, log])
    assert step is not None and step.component is Component.LOG and step.kind is StepKind.ROLLING
    step = next_step([tn, _log(OURS)])
    assert step is not None and step.component is Component.TN and step.kind is StepKind.RELEASE
    assert next_step([_log(OURS)]) is None


def test_old_config_map_names_of_both_schemes_are_recognised() -> None:
    cms = [
        {"metadata": {"name": "mo-log-config"}},
        {"metadata": {"name": "mo-log-config-1a2b3c4"}},
        {"metadata": {"name": "mo-log-config-505f307bb3", "labels": {CONFIG_HASH_LABEL: "x"}}},
        {"metadata": {"name": "mo-log-gossip"}},
    ]
    found = go_operator_config_maps(Component.LOG, "mo", cms, frozenset())
    assert [c["metadata"]["name"] for c in found] == ["mo-log-config", "mo-log-config-1a2b3c4"]


# A set's state, as any point of a takeover may leave it.
PHASES = ("held", "unsafe", "releasing", "rolling", "config", "done")


def _state(component: Component, phase: str) -> SetState:
    obj = _set(component)
    kruise_pods = [_pod(f"p{i}", KRUISE) for i in range(3)]
    our_pods = [_pod(f"p{i}", OURS) for i in range(3)]
    ours = _deployment(True) if component is Component.PROXY else _sts()
    if component is Component.PROXY:
        obj = _set(component, replicas=1)
        our_pods = [_pod("p0", OURS)]
    cms = [{"metadata": {"name": f"{obj['metadata']['name']}-{_suffix(component)}-config", "uid": "u"}}]
    if phase == "held":
        return SetState(component, obj, _workload(len(kruise_pods)), kruise_pods, ours)
    if phase == "unsafe":
        return SetState(component, obj, _workload(len(kruise_pods), reserveOrdinals=[3]), kruise_pods, ours)
    if phase == "releasing":
        return SetState(component, obj, None, kruise_pods, ours)
    if phase == "rolling":
        return SetState(component, obj, None, [_pod("p9", None), *our_pods], _sts(rolled=False))
    if phase == "config":
        return SetState(component, obj, None, our_pods, ours, cms)
    return SetState(component, obj, None, our_pods, ours)


def _suffix(component: Component) -> str:
    return {Component.LOG: "log", Component.TN: "dn", Component.CN: "cn", Component.PROXY: "proxy"}[component]


@settings(max_examples=300, deadline=None)
@given(phases=st.lists(st.sampled_from(PHASES), min_size=4, max_size=4), order=st.permutations(range(4)))
def test_no_set_is_released_while_another_is_under_way_and_only_the_first_held_goes(
    phases: list[str], order: list[int]
) -> None:
    components = (Component.LOG, Component.TN, Component.CN, Component.PROXY)
    states = [_state(c, p) for c, p in zip(components, phases, strict=True)]
    step = next_step([states[i] for i in order])  # the order the caller lists them in does not matter
    own = [set_step(s) for s in states]
    if all(s is None for s in own):
        assert step is None
        return
    assert step is not None
    under_way = [s for s in own if s is not None and s.kind not in HELD]
    if under_way:
        assert step == under_way[0], "a set under way goes first, and no set is released meanwhile"
    else:
        first_held = next(s for s in own if s is not None)
        assert step == first_held, "the first held set in dependency order is the one released (or refused)"
        assert step.kind in HELD


def test_a_pod_still_going_keeps_its_config_map_and_the_set_under_way() -> None:
    pods = [
        _pod("mo-log-0", OURS),
        _pod("mo-log-1", OURS),
        _pod("mo-log-2", OURS),
        _pod("old", OURS, deleting=True),
    ]
    cms = [{"metadata": {"name": "mo-log-config", "uid": "cm"}}]
    state = SetState(
        Component.LOG, _set(Component.LOG), None, pods, _sts(), cms, frozenset({"mo-log-config"})
    )
    step = set_step(state)
    assert step is not None and step.kind is StepKind.ROLLING and "old" in step.message
