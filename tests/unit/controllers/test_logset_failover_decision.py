"""The pure failover decision (controllers/logset/failover.py): properties that must
hold whatever the stores look like, and the cases that name what a person must do."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mo_operator.controllers.logset.failover import Claim, Policy, Store, decide

NOW = 10_000.0
TIMEOUT = 60.0


@st.composite
def stores(draw: st.DrawFn) -> list[Store]:
    count = draw(st.integers(min_value=1, max_value=7))
    out = []
    for i in range(count):
        ready = draw(st.booleans())
        since = None if ready else NOW - draw(st.floats(min_value=0, max_value=3 * TIMEOUT))
        stranded = (Claim(f"mo-data-mo-log-{i}", f"uid-c{i}", "gone-node"),) if draw(st.booleans()) else ()
        listed = ((0, 131072 + i),) if draw(st.booleans()) else ()
        out.append(
            Store(
                f"mo-log-{i}",
                f"uid-{i}",
                since,
                store_down=draw(st.booleans()),
                orphaned=draw(st.booleans()) and draw(st.booleans()),
                stranded=stranded,
                listed=listed,
            )
        )
    return out


policies = st.builds(
    Policy,
    timeout=st.just(TIMEOUT),
    shard_replicas=st.integers(min_value=1, max_value=7),
    strategy=st.sampled_from(["Delete", "Orphan"]),
    enabled=st.booleans(),
    namespace=st.just("ns"),
)


def lost(s: Store) -> bool:
    return s.down_since is not None and s.store_down and not s.orphaned and NOW - s.down_since >= TIMEOUT


@settings(max_examples=300, deadline=None)
@given(stores(), policies, st.booleans())
def test_only_lost_stores_are_touched_and_never_beyond_a_minority(
    found: list[Store], policy: Policy, quorum: bool
) -> None:
    d = decide(found, NOW, policy, quorum=quorum)
    by_pod = {s.pod: s for s in found}
    touched = [r.pod for r in d.replace] + list(d.orphan)
    assert all(lost(by_pod[p]) for p in touched), "only lost stores"
    assert len(touched) <= policy.limit, "never more than the shard can lose"
    if d.replace or d.orphan:
        assert quorum and policy.enabled, "nothing without a quorum or with failover off"
    if d.replace:
        assert policy.strategy == "Delete"
        held = {s.pod for s in found if s.stranded and s.listed}
        assert sorted(r.pod for r in d.replace) == sorted(
            s.pod for s in found if lost(s) and s.pod not in held
        )
    for r in d.replace:
        assert r.uid == by_pod[r.pod].uid and r.claims == by_pod[r.pod].stranded, "exactly the judged objects"
    assert d.status == (d.reason == "NoLostStores")


@settings(max_examples=300, deadline=None)
@given(stores(), policies)
def test_a_store_down_but_not_yet_lost_is_looked_at_again_when_it_would_be(
    found: list[Store], policy: Policy
) -> None:
    d = decide(found, NOW, policy, quorum=True)
    waiting = [
        TIMEOUT - (NOW - s.down_since)
        for s in found
        if s.down_since is not None and s.store_down and not s.orphaned and not lost(s)
    ]
    if waiting:
        assert d.recheck_after is not None and d.recheck_after == min(waiting)
        assert 0 < d.recheck_after <= TIMEOUT


@settings(max_examples=200, deadline=None)
@given(stores(), policies)
def test_a_reported_loss_names_every_store_a_person_must_replace(found: list[Store], policy: Policy) -> None:
    d = decide(found, NOW, policy, quorum=True)
    if d.reason == "ActionRequired":
        for s in found:
            if lost(s) or (s.orphaned and s.down_since is not None):
                assert f"kubectl -n ns delete pod {s.pod}" in d.message
                for c in s.stranded:
                    assert c.name in d.message


def store(i: int, *, down_for: float | None = None, **kw: object) -> Store:
    since = None if down_for is None else NOW - down_for
    return Store(f"mo-log-{i}", f"uid-{i}", since, store_down=down_for is not None, **kw)  # type: ignore[arg-type]


def test_an_orphaned_store_tells_how_to_replace_it_volume_included() -> None:
    stranded = (Claim("mo-data-mo-log-1", "u", "node-a"),)
    found = [store(0), store(1, down_for=TIMEOUT + 1, stranded=stranded), store(2)]
    d = decide(found, NOW, Policy(TIMEOUT, 3, "Orphan", namespace="ns"), quorum=True)
    assert d.orphan == ("mo-log-1",) and d.replace == () and d.warning == "StoreLost"
    assert (
        "kubectl -n ns delete pvc mo-data-mo-log-1 --wait=false && "
        "kubectl -n ns delete pod mo-log-1 --grace-period=0 --force"
    ) in d.message


def test_a_lost_store_plus_one_awaiting_a_human_are_a_majority_of_three() -> None:
    found = [store(0), store(1, down_for=TIMEOUT + 1), store(2, down_for=TIMEOUT + 1, orphaned=True)]
    d = decide(found, NOW, Policy(TIMEOUT, 3), quorum=True)
    assert d.reason == "MajorityLost" and d.replace == ()


def test_a_store_the_roll_restarts_is_not_reported_down_until_it_would_be_lost() -> None:
    """Planned work is quiet: the Failover condition stays True (no Event), and a
    restart that outlasts the timeout is a loss like any other."""
    rolling = [store(0), store(1, down_for=5, planned=True), store(2)]
    d = decide(rolling, NOW, Policy(TIMEOUT, 3), quorum=True)
    assert (d.status, d.reason, d.warning) == (True, "StoresRestarting", None), d
    assert (
        d.message == "log stores mo-log-1 restarting for a rollout or a drain; replaced only if down for 60s"
    )
    assert d.recheck_after == TIMEOUT - 5
    crashed = [store(0, down_for=5), store(1, down_for=5, planned=True), store(2)]
    assert decide(crashed, NOW, Policy(TIMEOUT, 3), quorum=True).reason == "StoresDown"
    stuck = [store(0), store(1, down_for=TIMEOUT + 1, planned=True), store(2)]
    assert decide(stuck, NOW, Policy(TIMEOUT, 3), quorum=True).reason == "RepairingStores"


def test_hakeeper_silent_while_a_majority_is_ready_is_a_pause_not_a_lost_quorum() -> None:
    found = [store(0), store(1, down_for=5), store(2)]
    d = decide(found, NOW, Policy(TIMEOUT, 3), quorum=False)
    assert (d.status, d.reason, d.warning, d.replace) == (False, "HAKeeperNotAnswering", None, ())
    assert d.message == (
        "HAKeeper does not answer while 2/3 log stores are ready (mo-log-1 not ready): "
        "no log store is replaced until it answers"
    )
    minority = [store(0), store(1, down_for=5), store(2, down_for=5)]
    d = decide(minority, NOW, Policy(TIMEOUT, 3), quorum=False)
    assert d.reason == "NoQuorum" and "bring back a majority" in d.message


def test_a_store_the_roll_has_deleted_and_not_yet_made_again_is_restarting_not_down() -> None:
    up = [Store(f"mo-log-{i}", f"uid-{i}", None, store_down=False) for i in (0, 1)]
    gone = Store("mo-log-2", "", NOW, store_down=True, planned=True, has_pod=False)
    decision = decide([*up, gone], NOW, Policy(timeout=TIMEOUT, shard_replicas=3), quorum=True)
    assert (decision.status, decision.reason, decision.warning) == (True, "StoresRestarting", None)
    assert "mo-log-2 (no pod yet)" in decision.message and decision.replace == ()
    unplanned = Store("mo-log-2", "", NOW - 2 * TIMEOUT, store_down=True, has_pod=False)
    decision = decide([*up, unplanned], NOW, Policy(timeout=TIMEOUT, shard_replicas=3), quorum=True)
    assert (decision.status, decision.reason, decision.replace) == (False, "StoresDown", ())


@settings(max_examples=300, deadline=None)
@given(stores(), policies)
def test_no_volume_is_deleted_under_a_uuid_hakeeper_lists_as_a_member(
    found: list[Store], policy: Policy
) -> None:
    """A fresh (empty) volume under a UUID HAKeeper still lists would be told to start a
    replica whose Raft peers remember entries it no longer holds."""
    d = decide(found, NOW, policy, quorum=True)
    by_pod = {s.pod: s for s in found}
    for replace in d.replace:
        assert not (replace.claims and by_pod[replace.pod].listed), (replace, d.message)


ZONE_CLAIM = (Claim("mo-data-mo-log-1", "u", zone="zone eu-1a"),)
HOST_CLAIM = (Claim("mo-data-mo-log-1", "u", node="node-a"),)
LISTED = ((0, 131073), (1, 262146))


@pytest.mark.parametrize(
    ("stranded", "listed", "reason", "replaced", "said"),
    [
        (
            ZONE_CLAIM,
            (),
            "RepairingStores",
            [("mo-log-1", ("mo-data-mo-log-1",))],
            "log stores mo-log-1 down for 60s: replacing; mo-log-1 gets a new volume (mo-data-mo-log-1 "
            "pinned to zone eu-1a, which has no schedulable Ready node)",
        ),
        (
            HOST_CLAIM,
            (),
            "RepairingStores",
            [("mo-log-1", ("mo-data-mo-log-1",))],
            "log stores mo-log-1 down for 60s: replacing; mo-log-1 gets a new volume (mo-data-mo-log-1 "
            "pinned to node node-a, which is gone)",
        ),
        (
            ZONE_CLAIM,
            LISTED,
            "WaitingForHAKeeper",
            [],
            "log stores mo-log-1 down for 60s: waiting for HAKeeper; mo-log-1 gets a new volume "
            "(mo-data-mo-log-1 pinned to zone eu-1a, which has no schedulable Ready node) once HAKeeper "
            "no longer lists its replicas (shard 0 replica 131073, shard 1 replica 262146): an empty disk "
            "must not rejoin under them",
        ),
        # its own volume comes back with it: the UUID keeps its data, HAKeeper may list it
        ((), LISTED, "RepairingStores", [("mo-log-1", ())], "log stores mo-log-1 down for 60s: replacing"),
    ],
    ids=["zone-gone", "host-gone", "zone-gone-still-listed", "volume-kept-still-listed"],
)
def test_a_lost_store_gets_a_new_volume_only_once_hakeeper_no_longer_lists_it(
    stranded: tuple[Claim, ...],
    listed: tuple[tuple[int, int], ...],
    reason: str,
    replaced: list[tuple[str, tuple[str, ...]]],
    said: str,
) -> None:
    found = [store(0), store(1, down_for=TIMEOUT + 1, stranded=stranded, listed=listed), store(2)]
    d = decide(found, NOW, Policy(TIMEOUT, 3), quorum=True)
    assert (d.status, d.reason, d.warning) == (False, reason, "StoreLost")
    assert [(r.pod, tuple(c.name for c in r.claims)) for r in d.replace] == replaced
    assert d.message == said


def test_a_store_held_for_hakeeper_does_not_hold_back_the_others() -> None:
    held = store(1, down_for=TIMEOUT + 1, stranded=ZONE_CLAIM, listed=LISTED)
    other = store(3, down_for=TIMEOUT + 1, stranded=(Claim("mo-data-mo-log-3", "u3", zone="zone eu-1a"),))
    d = decide([store(0), held, store(2), other, store(4)], NOW, Policy(TIMEOUT, 5), quorum=True)
    assert d.reason == "RepairingStores"
    assert [(r.pod, len(r.claims)) for r in d.replace] == [("mo-log-3", 1)]
    assert "mo-log-3 gets a new volume" in d.message and "mo-log-1 gets a new volume" in d.message
    assert "once HAKeeper no longer lists its replicas (shard 0 replica 131073" in d.message


def test_a_person_is_told_to_wait_for_hakeeper_before_deleting_a_listed_stores_claims() -> None:
    found = [store(0), store(1, down_for=TIMEOUT + 1, stranded=ZONE_CLAIM, listed=LISTED), store(2)]
    d = decide(found, NOW, Policy(TIMEOUT, 3, "Orphan", namespace="ns"), quorum=True)
    assert d.reason == "ActionRequired" and d.replace == ()
    assert d.message == (
        "log stores mo-log-1 lost and not replaced: failedPodStrategy is Orphan. Delete the claims of mo-log-1 "
        "only once HAKeeper no longer lists its replicas (shard 0 replica 131073, shard 1 replica 262146). "
        "To replace them: kubectl -n ns delete pvc mo-data-mo-log-1 --wait=false && "
        "kubectl -n ns delete pod mo-log-1 --grace-period=0 --force"
    )
