"""TN and CN registration, CN work states, and sessions moving away from draining CNs."""

from __future__ import annotations

import pytest

from mo_operator.matrixone.admin import NodeState, StoreNotFound, WorkState
from mo_operator.matrixone.component import Component

from .factories import (
    NS,
    OLD_IMAGE,
    World,
    cluster,
    component_config_map,
    log_config_maps,
    log_pod,
    logset_services,
    set_pod,
)

KEY = (NS, "mo")


def _registered(world: World) -> set[str]:
    state = world.model.hakeeper_state(KEY, world.now)
    return {s.uuid for s in state.tn_stores} | {s.uuid for s in state.cn_stores}


def test_tn_and_cn_register_only_once_the_hakeeper_is_up() -> None:
    world = World()
    cluster(world)
    world.remove("mo-log-2")
    world.step()
    assert not world.model.available(KEY)
    assert world.model.registration(world.instances["mo-dn-0"]) is None
    world.add(log_pod(2))
    world.step()
    assert _registered(world) == {world.uuid("mo-dn-0"), world.uuid("mo-tp-cn-0"), world.uuid("mo-tp-cn-1")}
    assert world.model.registration(world.instances["mo-dn-0"]) is not None


def test_stores_register_through_the_store_list_of_older_versions() -> None:
    world = World()
    cluster(world, cn_spec={"image": OLD_IMAGE})
    world.step()
    assert world.instances["mo-tp-cn-0"].hakeeper == (KEY,)
    assert world.uuid("mo-tp-cn-0") in _registered(world)


def test_config_pointing_nowhere_never_registers() -> None:
    world = World()
    cluster(world, cns=0)
    world.configmaps.append(component_config_map(Component.CN, "lost", logset="elsewhere"))
    world.add(set_pod(Component.CN, "lost", 0))
    world.step()
    world.step()
    assert world.model.available(KEY)
    assert world.uuid("lost-cn-0") not in _registered(world)


def test_not_running_pods_do_not_register_and_registered_ones_time_out() -> None:
    world = World()
    cluster(world, cns=1)
    world.add(set_pod(Component.CN, "mo-tp", 1, running=False))
    world.step()
    assert world.uuid("mo-tp-cn-1") not in _registered(world)
    world.remove("mo-dn-0")
    world.step(world.settings.store_timeout + 1)
    tn = world.model.hakeeper_state(KEY, world.now).tn_stores[0]
    assert tn.state is NodeState.TIMEOUT


def test_cn_registers_in_its_init_work_state_and_keeps_hakeepers_across_restarts() -> None:
    """A CN with ``init-work-state = "Draining"`` (store drain enabled) waits for the
    operator to set it Working; HAKeeper keeps the state when the CN restarts."""
    world = World()
    cluster(world, cns=1, cn_spec={"image": "x:2.0.0", "scalingConfig": {"storeDrainEnabled": True}})
    world.step()
    uuid = world.uuid("mo-tp-cn-0")
    assert world.model.hakeepers[KEY].cn(uuid).work_state is WorkState.DRAINING
    world.model.set_work_state(KEY, uuid, WorkState.WORKING, {"role": ("tp",)}, world.now)
    world.edit("mo-tp-cn-0")["status"]["containerStatuses"][0]["restartCount"] = 1
    world.step()
    record = world.model.hakeepers[KEY].cn(uuid)
    assert record.work_state is WorkState.WORKING and record.labels == {"role": ("tp",)}
    assert world.model.registration(world.instances["mo-tp-cn-0"]) is record
    world.model.delete_cn(KEY, uuid)
    world.step()
    assert world.model.hakeepers[KEY].cn(uuid).work_state is WorkState.DRAINING, "a new store starts over"


def test_work_state_and_labels_of_unknown_cn_raise_store_not_found() -> None:
    world = World()
    cluster(world, cns=0)
    world.step()
    with pytest.raises(StoreNotFound, match="does not exist"):
        world.model.set_work_state(KEY, "nope", WorkState.DRAINING, None, world.now)
    with pytest.raises(StoreNotFound):
        world.model.delete_cn(KEY, "nope")
    with pytest.raises(StoreNotFound):
        world.model.set_sessions("nope", 1, world.now)


# --- sessions -------------------------------------------------------------------------


def _sessions(world: World) -> dict[str, int]:
    return {
        name: world.model.sessions(world.uuid(name))
        for name in world.instances
        if name.startswith("mo-tp-cn-")
    }


def test_new_sessions_go_only_to_working_cns_evenly() -> None:
    world = World()
    cluster(world, cns=3)
    world.step()
    world.model.set_work_state(KEY, world.uuid("mo-tp-cn-2"), WorkState.DRAINING, None, world.now)
    assert world.model.open_sessions(KEY, 7) == 7
    spread = _sessions(world)
    assert spread["mo-tp-cn-2"] == 0
    assert sorted((spread["mo-tp-cn-0"], spread["mo-tp-cn-1"])) == [3, 4]
    world.model.set_work_state(KEY, world.uuid("mo-tp-cn-0"), WorkState.DRAINING, None, world.now)
    world.model.set_work_state(KEY, world.uuid("mo-tp-cn-1"), WorkState.DRAINING, None, world.now)
    assert world.model.open_sessions(KEY, 5) == 0, "no Working CN takes them"


def test_draining_moves_sessions_to_working_cns_over_drain_seconds() -> None:
    world = World()
    cluster(world, cns=2)
    world.step()
    a, b = world.uuid("mo-tp-cn-0"), world.uuid("mo-tp-cn-1")
    world.model.set_sessions(a, 10, world.now)
    world.model.set_work_state(KEY, a, WorkState.DRAINING, None, world.now)
    seen = []
    for _ in range(int(world.settings.drain_seconds / 2) + 1):
        world.step(2)
        seen.append((world.model.sessions(a), world.model.sessions(b)))
    assert seen == [(8, 2), (6, 4), (4, 6), (2, 8), (0, 10), (0, 10)]
    assert world.model.cn_load(KEY, a).idle


def test_drain_with_no_working_cn_keeps_the_sessions() -> None:
    world = World()
    cluster(world, cns=1)
    world.step()
    a = world.uuid("mo-tp-cn-0")
    world.model.set_sessions(a, 4, world.now)
    world.model.set_work_state(KEY, a, WorkState.DRAINING, None, world.now)
    world.step(world.settings.drain_seconds * 2)
    assert world.model.sessions(a) == 4


def test_back_to_working_stops_the_drain_and_takes_sessions_again() -> None:
    world = World()
    cluster(world, cns=2)
    world.step()
    a = world.uuid("mo-tp-cn-0")
    world.model.set_sessions(a, 10, world.now)
    world.model.set_work_state(KEY, a, WorkState.DRAINING, None, world.now)
    world.step(5)
    assert world.model.sessions(a) == 5
    world.model.set_work_state(KEY, a, WorkState.WORKING, None, world.now)
    world.step(5)
    assert world.model.sessions(a) == 5
    world.model.open_sessions(KEY, 2)
    assert _sessions(world) == {"mo-tp-cn-0": 6, "mo-tp-cn-1": 6}, "it takes its share of new sessions"


def test_setting_sessions_while_draining_restarts_the_drain() -> None:
    world = World()
    cluster(world, cns=2)
    world.step()
    a = world.uuid("mo-tp-cn-0")
    world.model.set_work_state(KEY, a, WorkState.DRAINING, None, world.now)
    world.step(8)
    world.model.set_sessions(a, 10, world.now)
    world.step(5)
    assert world.model.sessions(a) == 5


def test_sessions_die_with_the_cn_process() -> None:
    world = World()
    cluster(world, cns=2)
    world.step()
    a = world.uuid("mo-tp-cn-0")
    world.model.set_sessions(a, 3, world.now)
    world.edit("mo-tp-cn-0")["status"]["containerStatuses"][0]["restartCount"] = 1
    world.step()
    assert world.model.sessions(a) == 0
    world.model.set_sessions(a, 3, world.now)
    world.remove("mo-tp-cn-0")
    world.step()
    assert world.model.sessions(a) == 0


def test_a_cn_repointed_to_another_logset_moves_hakeepers() -> None:
    """A config change that names another LogSet: the CN registers there; the old
    HAKeeper sees it stop heartbeating, and its sessions did not come along."""
    world = World()
    cluster(world, cns=1)
    world.configmaps += log_config_maps(logset="b")
    world.services += logset_services("b")
    world.configmaps.append(component_config_map(Component.CN, "mo-tp", logset="b", cm_name="to-b"))
    world.configmaps.append(component_config_map(Component.TN, "b", logset="b"))
    world.add(*(log_pod(i, logset="b") for i in range(3)), set_pod(Component.TN, "b", 0))
    world.step()
    uuid = world.uuid("mo-tp-cn-0")
    world.model.set_sessions(uuid, 3, world.now)
    world.edit("mo-tp-cn-0")["spec"]["volumes"][0]["configMap"]["name"] = "to-b"
    world.step(world.settings.store_timeout + 1)
    old = world.model.hakeeper_state(KEY, world.now).cn(uuid)
    new = world.model.hakeeper_state((NS, "b"), world.now).cn(uuid)
    assert old is not None and old.state is NodeState.TIMEOUT
    assert new is not None and new.state is NodeState.NORMAL
    assert world.model.registration(world.instances["mo-tp-cn-0"]) is world.model.hakeepers[(NS, "b")].cn(
        uuid
    )
    assert world.model.cn_load((NS, "b"), uuid).sessions == 0
    assert world.model.cn_load(KEY, uuid).sessions == 0
