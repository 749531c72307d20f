"""``InstanceTracker``: over successive snapshots it answers exactly what
``observe_instances`` answers, computing again only the instances whose inputs
changed (the pod, its ConfigMaps, its node's readiness, the bad images, the pods and
Services of the namespaces its HAKeeper addresses lead to)."""

from __future__ import annotations

import copy

from mo_devkit.simulated.instances import observe_instances
from mo_devkit.simulated.tracker import InstanceTracker
from mo_operator.matrixone import names
from mo_operator.matrixone.component import Component

from .factories import NS, World, cluster, component_config_map, config_map, node, set_pod

OTHER = "other-ns"


def _check(world: World, tracker: InstanceTracker) -> int:
    """Observe the world through the tracker; its answer is the fresh one. How many it computed."""
    before = tracker.computed
    snapshot = world.snapshot()
    tracked = tracker.observe(snapshot, world.bad_images)
    assert tracked == observe_instances(snapshot, world.bad_images)
    return tracker.computed - before


def _world() -> World:
    world = World()
    cluster(world, logs=3, cns=2)  # 3 log, 1 TN, 2 CN pods in NS
    return world


def test_nothing_changed_nothing_computed() -> None:
    world, tracker = _world(), InstanceTracker()
    assert _check(world, tracker) == 6
    assert _check(world, tracker) == 0
    world.pods = {k: copy.deepcopy(p) for k, p in world.pods.items()}  # a relist: equal, not identical
    assert _check(world, tracker) == 0


def test_a_changed_pod_is_computed_again_with_what_resolves_through_its_namespace() -> None:
    world, tracker = _world(), InstanceTracker()
    _check(world, tracker)
    cn = names.pod_name(Component.CN, "mo-tp", 0)
    world.edit(cn)["status"]["podIP"] = "10.9.9.9"
    computed = _check(world, tracker)
    # the CN itself, and the TN and CNs whose HAKeeper lookup reads the namespace's pods;
    # the log stores look nothing up, and nothing of theirs changed
    assert computed == 3


def test_a_log_store_going_away_reaches_the_stores_that_look_for_it() -> None:
    world, tracker = _world(), InstanceTracker()
    _check(world, tracker)
    for i in range(3):
        world.remove(names.pod_name(Component.LOG, "mo", i))
    assert _check(world, tracker) == 3  # TN and CNs: the discovery Service now selects no log pod
    unresolved = [i for i in tracker.observe(world.snapshot()) if i.component is Component.TN]
    assert "selects no log pods" in str(unresolved[0].hakeeper)


def test_lookups_in_another_namespace_are_followed() -> None:
    """A CN in another namespace pointing at this cluster's discovery address: a change to
    the log pods here changes what it resolves to."""
    world, tracker = _world(), InstanceTracker()
    here = component_config_map(Component.CN, "far")
    world.configmaps.append(config_map(here["metadata"]["name"], here["data"], namespace=OTHER))
    world.add(set_pod(Component.CN, "far", 0, namespace=OTHER))
    _check(world, tracker)
    far = [i for i in tracker.observe(world.snapshot()) if i.namespace == OTHER]
    assert far[0].hakeeper == ((NS, "mo"),), "it resolves across namespaces"
    for i in range(3):
        world.remove(names.pod_name(Component.LOG, "mo", i))
    assert _check(world, tracker) == 4  # TN, 2 CNs here, and the one there
    far = [i for i in tracker.observe(world.snapshot()) if i.namespace == OTHER]
    assert "selects no log pods" in str(far[0].hakeeper)


def test_a_change_in_an_unrelated_namespace_computes_nothing_here() -> None:
    world, tracker = _world(), InstanceTracker()
    here = component_config_map(Component.CN, "far")
    world.configmaps.append(config_map(here["metadata"]["name"], here["data"], namespace=OTHER))
    world.add(set_pod(Component.CN, "far", 0, namespace=OTHER))
    _check(world, tracker)
    world.edit(names.pod_name(Component.CN, "far", 0))["status"]["podIP"] = "10.9.9.9"
    assert _check(world, tracker) == 1


def test_config_maps_node_readiness_and_bad_images_are_inputs() -> None:
    world, tracker = _world(), InstanceTracker()
    _check(world, tracker)
    cm_name = names.config_map_base_name(Component.TN, "mo")
    for cm in world.configmaps:
        if cm["metadata"]["name"] == cm_name:
            world.configmaps.remove(cm)
            world.configmaps.append(config_map(cm_name, {"tn.toml": "not = [valid toml"}))
            break
    assert _check(world, tracker) == 1
    tn = next(i for i in tracker.observe(world.snapshot()) if i.component is Component.TN)
    assert tn.problem is not None and tn.problem.reason == "InvalidConfig"

    world.nodes = [node(ready=False)]
    assert _check(world, tracker) == 6
    assert not any(i.running for i in tracker.observe(world.snapshot()))
    world.nodes = [node()]  # a new object, Ready again
    assert _check(world, tracker) == 6

    world.bad_images.append("*:2.0.0")
    assert _check(world, tracker) == 6
    assert all(i.problem is not None for i in tracker.observe(world.snapshot(), world.bad_images))


def test_a_deleted_pod_is_forgotten() -> None:
    world, tracker = _world(), InstanceTracker()
    _check(world, tracker)
    name = names.pod_name(Component.CN, "mo-tp", 1)
    world.remove(name)
    _check(world, tracker)
    assert name not in {i.pod for i in tracker.observe(world.snapshot())}
    world.add(set_pod(Component.CN, "mo-tp", 1))  # back under the same name: a new pod
    assert _check(world, tracker) >= 1


def test_full_computes_every_instance_afresh() -> None:
    world, tracker = _world(), InstanceTracker()
    _check(world, tracker)
    tracker.full()
    assert _check(world, tracker) == 6
    assert _check(world, tracker) == 0
