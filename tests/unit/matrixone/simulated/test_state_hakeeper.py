"""The HAKeeper: bootstrap only with every initial member up, quorum, lost stores shown down.

MatrixOne's HAKeeper bootstrap (matrixone pkg/logservice/store_bootstrap.go,
``BootstrapConfig.InitHAKeeperMembers``) and store timeouts (pkg/hakeeper checkers:
a store with no heartbeat for the timeout is in ``TimeoutState``).
"""

from __future__ import annotations

from typing import Any

from mo_operator.matrixone import identity, layout
from mo_operator.matrixone.admin import HAKeeperPhase, NodeState, WorkState
from mo_operator.matrixone.component import Component

from .factories import (
    NS,
    World,
    cluster,
    component_config_map,
    log_config_maps,
    log_pod,
    logset_services,
    set_pod,
)

KEY = (NS, "mo")


def _logs(world: World, ordinals: range, **kw: object) -> None:
    world.add(*(log_pod(i, **kw) for i in ordinals))  # type: ignore[arg-type]


def _world(replicas: int = 3, members: int = 3) -> World:
    world = World()
    world.configmaps += log_config_maps(replicas=replicas, members=members)
    world.services += logset_services()
    return world


def test_bootstraps_only_once_every_initial_member_runs() -> None:
    world = _world()
    _logs(world, range(2))
    world.step()
    hakeeper = world.model.hakeepers[KEY]
    assert hakeeper.phase is HAKeeperPhase.BOOTSTRAPPING and not world.model.available(KEY)
    world.add(log_pod(2, running=False))
    world.step()
    assert not world.model.available(KEY)
    world.add(log_pod(2))
    world.step()
    assert world.model.hakeepers[KEY].phase is HAKeeperPhase.RUNNING and world.model.available(KEY)
    assert hakeeper.members == tuple(identity.log_store_uuid(i) for i in range(3))
    assert hakeeper.replicas == 3


def test_extra_log_stores_do_not_stand_in_for_members() -> None:
    """Only the UUIDs in init-hakeeper-members start the HAKeeper."""
    world = _world(replicas=4, members=3)
    _logs(world, range(1, 4))
    world.step()
    assert not world.model.available(KEY)
    world.add(log_pod(0))
    world.step()
    assert world.model.available(KEY)


def test_no_bootstrap_without_bootstrap_cluster_true() -> None:
    world = _world()
    world.configmaps[1]["data"][layout.BOOTSTRAP_FILE] = world.configmaps[1]["data"][
        layout.BOOTSTRAP_FILE
    ].replace("bootstrap-cluster = true", "bootstrap-cluster = false")
    _logs(world, range(3))
    world.step()
    assert world.model.hakeepers[KEY].phase is HAKeeperPhase.CREATED


def test_no_bootstrap_without_the_bootstrap_config_map_mounted() -> None:
    world = _world()
    for i in range(3):
        p = log_pod(i)
        p["spec"]["volumes"] = [v for v in p["spec"]["volumes"] if v["name"] != layout.BOOTSTRAP_VOLUME]
        world.add(p)
    world.step()
    assert not world.model.available(KEY)


def test_invalid_log_config_never_bootstraps() -> None:
    world = _world()
    world.configmaps[0]["data"][layout.LOG_CONFIG_FILE] = "service-type = ["
    _logs(world, range(3))
    world.step()
    assert not world.model.available(KEY)
    assert all(i.problem is not None for i in world.instances.values())


def test_quorum_keeps_the_hakeeper_answering() -> None:
    """Raft needs a majority of the HAKeeper replicas."""
    world = _world()
    _logs(world, range(3))
    world.step()
    world.remove("mo-log-2")
    world.step()
    assert world.model.available(KEY)
    world.edit("mo-log-1")["status"]["conditions"][0]["status"] = "False"
    world.step()
    assert not world.model.available(KEY)
    world.add(log_pod(2))
    world.step()
    assert world.model.available(KEY), "a majority back: it answers again, without a new bootstrap"
    assert world.model.hakeepers[KEY].phase is HAKeeperPhase.RUNNING


def test_lost_log_store_shows_down_after_the_timeout() -> None:
    world = _world()
    _logs(world, range(3))
    world.step()
    lost = identity.log_store_uuid(1)
    world.remove("mo-log-1")
    world.step(1)
    lost_at = world.now - 1

    def state_of(uuid: str) -> NodeState:
        found = world.model.hakeeper_state(KEY, world.now).log_stores
        return next(s.state for s in found if s.uuid == uuid)

    world.now = lost_at + world.settings.store_timeout
    assert state_of(lost) is NodeState.NORMAL
    world.step(0.5)
    assert state_of(lost) is NodeState.TIMEOUT
    assert state_of(identity.log_store_uuid(0)) is NodeState.NORMAL
    world.add(log_pod(1))
    world.step()
    assert state_of(lost) is NodeState.NORMAL


def test_unready_log_pod_is_a_lost_store() -> None:
    world = _world()
    _logs(world, range(3))
    world.step()
    world.edit("mo-log-0")["status"]["conditions"][0]["status"] = "False"
    world.step(world.settings.store_timeout + 1)
    states = {s.uuid: s.state for s in world.model.hakeeper_state(KEY, world.now).log_stores}
    assert states[identity.log_store_uuid(0)] is NodeState.TIMEOUT
    assert states[identity.log_store_uuid(1)] is NodeState.NORMAL


def test_ticks_count_from_bootstrap() -> None:
    world = _world()
    _logs(world, range(3))
    world.step()
    world.step(3)
    state = world.model.hakeeper_state(KEY, world.now)
    assert state.tick == 3 / world.settings.tick_seconds
    assert {s.tick for s in state.log_stores} == {state.tick}


def test_a_logset_with_no_pods_and_no_data_is_forgotten_with_its_stores() -> None:
    world = World()
    cluster(world)
    world.step()
    assert world.model.hakeeper_state(KEY, world.now).cn_stores
    for i in range(3):
        world.remove(f"mo-log-{i}")
    world.step()
    assert KEY not in world.model.hakeepers
    _logs(world, range(3))
    world.step()
    assert world.model.hakeeper_state(KEY, world.now).cn_stores, "CNs register again with the new HAKeeper"


def test_two_logsets_have_separate_hakeepers() -> None:
    world = _world()
    world.configmaps += log_config_maps(logset="b")
    world.services += logset_services("b")
    world.configmaps.append(component_config_map(Component.CN, "b-tp", logset="b"))
    world.configmaps.append(component_config_map(Component.TN, "b", logset="b"))
    _logs(world, range(3))
    world.add(set_pod(Component.CN, "b-tp", 0), set_pod(Component.TN, "b", 0))
    world.step()
    assert world.model.available(KEY) and not world.model.available((NS, "b"))
    assert not world.model.hakeeper_state(KEY, world.now).cn_stores
    _logs(world, range(3), logset="b")
    world.step()
    assert len(world.model.hakeeper_state((NS, "b"), world.now).cn_stores) == 1


def test_a_cn_waits_for_a_tn_and_a_process_that_waits_too_long_gives_up() -> None:
    """``mo-service`` starts a CN only once HAKeeper lists a TN holding shards
    (``waitAnyShardReady``), and exits when its wait times out."""
    world = _world()
    world.configmaps.append(component_config_map(Component.CN, "mo-tp"))
    world.configmaps.append(component_config_map(Component.TN, "mo"))
    _logs(world, range(3))
    world.add(set_pod(Component.CN, "mo-tp", 0))
    world.step()
    cn = world.instances["mo-tp-cn-0"]
    assert world.model.available(KEY) and world.model.registration(cn) is None
    assert not world.model.gave_up(cn)
    world.step(world.settings.hakeeper_wait_seconds)
    assert world.model.gave_up(world.instances["mo-tp-cn-0"]), "waited as long as MatrixOne does"
    world.add(set_pod(Component.TN, "mo", 0), set_pod(Component.CN, "mo-tp", 0, restarts=1))
    world.step()
    cn = world.instances["mo-tp-cn-0"]
    assert world.model.registration(cn) is not None and not world.model.gave_up(cn)


def _with_data(world: World, pod: dict[str, Any]) -> dict[str, Any]:
    """The pod mounts its ``mo-data`` claim, which exists, as a StatefulSet pod does."""
    claim = f"{layout.DATA_VOLUME}-{pod['metadata']['name']}"
    pod["spec"]["volumes"].append({"name": layout.DATA_VOLUME, "persistentVolumeClaim": {"claimName": claim}})
    world.volume_claims.append({"metadata": {"name": claim, "namespace": NS}})
    return pod


def test_hakeeper_state_survives_its_pods_on_their_volume_claims() -> None:
    """A single-replica LogSet rolling its pod: HAKeeper does not answer while the pod
    is away, and comes back with its stores and their work states."""
    world = _world(replicas=1, members=1)
    world.configmaps.append(component_config_map(Component.CN, "mo-tp"))
    world.configmaps.append(component_config_map(Component.TN, "mo"))
    world.add(
        _with_data(world, log_pod(0)), set_pod(Component.CN, "mo-tp", 0), set_pod(Component.TN, "mo", 0)
    )
    world.step()
    cn = world.uuid("mo-tp-cn-0")
    world.model.set_work_state(KEY, cn, WorkState.DRAINING, None, world.now)
    world.remove("mo-log-0")
    world.step()
    assert KEY in world.model.hakeepers and not world.model.available(KEY)
    world.add(_with_data(world, log_pod(0)))
    world.step()
    assert world.model.available(KEY)
    assert world.model.hakeepers[KEY].cn(cn).work_state is WorkState.DRAINING
    world.remove("mo-log-0")
    world.volume_claims.clear()
    world.step()
    assert KEY not in world.model.hakeepers, "its data is gone: a new LogSet would start afresh"


def test_an_expired_store_leaves_the_membership_and_a_returning_one_joins_anew() -> None:
    """HAKeeper's checker: replicas on an expired store are removed; a store that serves
    and holds none is added, back up to the shard's replica count."""
    world = _world()
    _logs(world, range(3))
    world.step()
    hakeeper = world.model.hakeepers[KEY]
    uuids = tuple(identity.log_store_uuid(i) for i in range(3))
    world.remove("mo-log-1")
    world.step(world.settings.store_timeout / 2)
    assert hakeeper.members == uuids, "not expired yet"
    world.step(world.settings.store_timeout)
    assert hakeeper.members == (uuids[0], uuids[2]) and world.model.available(KEY)
    world.add(log_pod(1))  # back (with a fresh volume, say): a new member
    world.step()
    assert sorted(hakeeper.members) == sorted(uuids) and len(hakeeper.live_members) == 3


def test_a_spare_store_takes_the_place_of_an_expired_member() -> None:
    world = _world(replicas=4, members=3)
    _logs(world, range(4))
    world.step()
    hakeeper = world.model.hakeepers[KEY]
    world.remove("mo-log-0")
    world.step(world.settings.store_timeout + 1)
    assert sorted(hakeeper.members) == sorted(identity.log_store_uuid(i) for i in (1, 2, 3))


def test_without_a_quorum_the_membership_never_changes() -> None:
    world = _world()
    _logs(world, range(3))
    world.step()
    hakeeper = world.model.hakeepers[KEY]
    world.remove("mo-log-1")
    world.remove("mo-log-2")
    world.step(world.settings.store_timeout * 3)
    assert len(hakeeper.members) == 3 and not world.model.available(KEY)


def _claim_anew(world: World, pod: str) -> None:
    """The pod's ``mo-data`` claim deleted and made again: same name, a new (empty) disk."""
    name = f"{layout.DATA_VOLUME}-{pod}"
    world.volume_claims[:] = [c for c in world.volume_claims if c["metadata"]["name"] != name]
    world.volume_claims.append({"metadata": {"name": name, "namespace": NS, "uid": f"{name}-new"}})


def _with_disk(world: World, pod: dict[str, Any]) -> dict[str, Any]:
    """``_with_data``, its claim with a UID (the disk it names)."""
    pod = _with_data(world, pod)
    world.volume_claims[-1]["metadata"]["uid"] = f"{world.volume_claims[-1]['metadata']['name']}-old"
    return pod


def test_a_member_back_on_an_empty_disk_is_a_fault_it_never_recovers_from() -> None:
    """HAKeeper would start its listed replica on an empty log (matrixone #25029)."""
    world = _world()
    world.settings.removal_delay = 60.0
    world.add(*(_with_disk(world, log_pod(i)) for i in range(3)))
    world.step()
    hakeeper = world.model.hakeepers[KEY]
    world.remove("mo-log-1")
    world.step(world.settings.store_timeout + 1)
    assert identity.log_store_uuid(1) in hakeeper.members, "shown down, not removed yet"
    _claim_anew(world, "mo-log-1")
    world.add(_with_data(world, log_pod(1)))
    world.volume_claims.pop()  # _with_data's claim: the one made anew stays
    world.step()
    assert hakeeper.faults == [
        f"log store {identity.log_store_uuid(1)} (mo-log-1) came back on an empty disk while HAKeeper "
        "lists it as replica 131073 of the HAKeeper shard"
    ]
    assert identity.log_store_uuid(1) not in hakeeper.live_logs


def test_a_store_removed_before_it_comes_back_empty_joins_under_a_new_replica_id() -> None:
    world = _world()
    world.settings.removal_delay = 1.0
    world.add(*(_with_disk(world, log_pod(i)) for i in range(3)))
    world.step()
    hakeeper = world.model.hakeepers[KEY]
    uuid = identity.log_store_uuid(1)
    world.remove("mo-log-1")
    world.step(world.settings.store_timeout + 2)
    assert uuid not in hakeeper.members
    assert world.model.hakeeper_state(KEY, world.now).replicas_on(uuid) == ()
    _claim_anew(world, "mo-log-1")
    world.add(_with_data(world, log_pod(1)))
    world.volume_claims.pop()
    world.step()
    assert hakeeper.faults == [] and uuid in hakeeper.live_members
    assert world.model.hakeeper_state(KEY, world.now).replicas_on(uuid) == ((0, 131075),), (
        "never 131073 again"
    )
