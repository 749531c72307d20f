"""The CN pod decision (controllers/cnset/scaling.py): scale-out, scale-in
with draining and reuse, and rolls that keep capacity and stop at a broken pod."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from mo_operator.api.base import parse
from mo_operator.api.cnset import CNSetSpec
from mo_operator.controllers.cnset.scaling import CNPod, PodChanges, Strategy, decide_pods, strategy_of


def pod(i: int, *, current: bool = True, ready: bool = True, draining: bool = False, **kw: object) -> CNPod:
    return CNPod(f"mo-cn-{i}", i, current, ready, draining, **kw)  # type: ignore[arg-type]


def test_scale_out_from_nothing_creates_every_pod_at_once() -> None:
    assert decide_pods([], 3, Strategy()) == PodChanges(create=(0, 1, 2))


@settings(max_examples=200, deadline=None)
@given(
    have=st.integers(0, 30),
    replicas=st.integers(0, 1000),
    limit=st.integers(1, 64),
    old=st.booleans(),
)
def test_a_round_creates_at_most_its_limit_and_rounds_reach_replicas(
    have: int, replicas: int, limit: int, old: bool
) -> None:
    """However many replicas, one round builds at most ``max_create`` pods (the lowest
    free indices, as the round without a limit would); rounds get to every pod (a
    roll, which adds a pod only once the last is ready, is checked round by round)."""
    pods = [pod(i, current=not old) for i in range(have)]
    strategy = Strategy()
    for _ in range(replicas // limit + 10 if not old else 20):
        capped = decide_pods(pods, replicas, strategy, max_create=limit)
        assert len(capped.create) <= limit
        assert capped.create == decide_pods(pods, replicas, strategy).create[: len(capped.create)]
        pods = _step(pods, capped, broken=False)
    if not old:
        assert len(pods) == replicas and all(p.ready for p in pods)
        assert decide_pods(pods, replicas, strategy, max_create=limit) == PodChanges()


def test_new_pods_take_the_lowest_free_indices_and_deleting_pods_hold_theirs() -> None:
    pods = [pod(1), pod(3, deleting=True)]
    assert decide_pods(pods, 4, Strategy()).create == (0, 2, 4)


def test_scale_in_retires_not_ready_then_fewest_sessions_then_highest_index() -> None:
    pods = [pod(0, sessions=5), pod(1, sessions=1), pod(2, sessions=1), pod(3, ready=False, sessions=9)]
    assert decide_pods(pods, 2, Strategy()).retire == ("mo-cn-3", "mo-cn-2")
    assert decide_pods(pods, 1, Strategy()).retire == ("mo-cn-3", "mo-cn-2", "mo-cn-1")


def test_pods_to_delete_go_first_and_are_replaced() -> None:
    pods = [pod(0), pod(1), pod(2)]
    d = decide_pods(pods, 3, Strategy(pods_to_delete=frozenset({"mo-cn-0"})))
    assert d.retire == ("mo-cn-0",) and d.create == (3,)


def test_scaling_up_mid_drain_puts_the_draining_pod_back_to_work() -> None:
    pods = [pod(0), pod(1, draining=True, ready=False, sessions=3)]
    d = decide_pods(pods, 2, Strategy())
    assert d.undrain == ("mo-cn-1",) and d.create == () and d.retire == ()


def test_draining_pods_of_an_old_template_are_not_reused() -> None:
    pods = [pod(0), pod(1, current=False, draining=True, ready=False)]
    d = decide_pods(pods, 2, Strategy())
    assert d.undrain == () and d.create == (2,)


def test_a_roll_surges_one_new_pod_then_retires_one_old_pod() -> None:
    old = [pod(i, current=False) for i in range(3)]
    assert decide_pods(old, 3, Strategy()) == PodChanges(create=(3,))
    # the new pod is not ready yet: nothing retires, nothing more is created
    step = decide_pods([*old, pod(3, ready=False)], 3, Strategy())
    assert step.create == () and step.retire == () and step.waiting is not None
    # once it is ready, one old pod goes (availability stays at 3)
    assert decide_pods([*old, pod(3)], 3, Strategy()).retire == ("mo-cn-2",)


def test_a_new_pod_that_never_becomes_ready_halts_the_roll() -> None:
    pods = [pod(0, current=False), pod(1, current=False), pod(2, ready=False)]
    d = decide_pods(pods, 2, Strategy())
    assert d.create == () and d.retire == () and d.waiting == "waiting for new pod mo-cn-2 to become ready"


def test_a_fixed_spec_replaces_the_broken_pod_first() -> None:
    pods = [pod(0, current=False), pod(1, current=False), pod(2, current=False, ready=False)]
    d = decide_pods(pods, 2, Strategy())
    assert d.retire == ("mo-cn-2",)


def test_max_unavailable_lets_a_roll_retire_before_it_creates() -> None:
    old = [pod(i, current=False) for i in range(2)]
    d = decide_pods(old, 2, Strategy(max_surge=0, max_unavailable=1))
    assert d.retire == ("mo-cn-1",) and d.create == ()


def test_paused_updates_keep_outdated_pods() -> None:
    old = [pod(i, current=False) for i in range(2)]
    assert decide_pods(old, 2, Strategy(paused=True)) == PodChanges()
    assert decide_pods(old, 1, Strategy(paused=True)).retire == ("mo-cn-1",)


def cn_spec(fields: dict[str, object]) -> CNSetSpec:
    return parse(CNSetSpec, {"replicas": 1, **fields})


def test_strategy_reads_counts_and_percentages() -> None:
    s = strategy_of(cn_spec({"updateStrategy": {"maxSurge": "50%", "maxUnavailable": "25%"}}), 3)
    assert (s.max_surge, s.max_unavailable) == (2, 0)
    assert strategy_of(cn_spec({"updateStrategy": {"maxSurge": 0, "maxUnavailable": 0}}), 3).max_surge == 1


# --- convergence ---------------------------------------------------------------------


def _step(pods: list[CNPod], d: PodChanges, broken: bool) -> list[CNPod]:
    """One round of the world: retired pods go, draining ones come back, new ones start;
    pods created in an earlier round become ready unless the template is broken."""
    out = []
    for p in pods:
        if p.name in d.retire:
            continue
        if p.name in d.undrain:
            p = replace(p, draining=False, ready=True)
        elif p.current and not p.ready and not broken:
            p = replace(p, ready=True)
        out.append(p)
    return out + [pod(i, ready=False) for i in d.create]


@settings(max_examples=300, deadline=None)
@given(
    old=st.integers(0, 6),
    replicas=st.integers(0, 6),
    surge=st.integers(0, 2),
    unavailable=st.integers(0, 2),
)
def test_rolls_converge_and_keep_availability(old: int, replicas: int, surge: int, unavailable: int) -> None:
    strategy = strategy_of(
        cn_spec({"updateStrategy": {"maxSurge": surge, "maxUnavailable": unavailable}}), replicas
    )
    pods = [pod(i, current=False) for i in range(old)]
    floor = min(old, replicas) - strategy.max_unavailable
    for _ in range(40):
        d = decide_pods(pods, replicas, strategy)
        pods = _step(pods, d, broken=False)
        assert sum(p.ready for p in pods) >= floor or replicas < old
        assert len(pods) <= max(old, replicas + strategy.max_surge)
    assert sorted(p.index for p in pods if p.current and p.ready) == sorted(p.index for p in pods)
    assert len(pods) == replicas
    assert decide_pods(pods, replicas, strategy) == PodChanges()


@settings(max_examples=100, deadline=None)
@given(old=st.integers(1, 5))
def test_a_broken_template_never_takes_down_more_than_the_surge(old: int) -> None:
    pods = [pod(i, current=False) for i in range(old)]
    for _ in range(20):
        pods = _step(pods, decide_pods(pods, old, Strategy()), broken=True)
    assert sum(1 for p in pods if not p.current and p.ready) == old
    assert sum(1 for p in pods if p.current) == 1
