"""The incremental simulated MatrixOne under the API faults scenario's event order
(``tests/e2e/test_11_api_faults.py``): relists that replace every object with an
equal copy, a restarted server that lost the last status write, ConfigMaps and
Services whose caches catch up after the pods', StatefulSet pods re-created under
the same name, a node that goes silent and comes back, scaling and an upgrade.

At every step the ``InstanceTracker`` must answer what a fresh computation answers;
and an input it cannot see (an object changed in place) must still reach the
kubelet within ``full_refresh_interval``, through the full recompute backstop.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

from mo_devkit.localcluster.simulator.core.kinds import NODE, POD, PVC
from mo_devkit.simulated.install import SimulatedMatrixOne
from mo_devkit.simulated.instances import observe_instances
from mo_devkit.simulated.tracker import InstanceTracker
from mo_devkit.simulated.view import key_of
from mo_operator.matrixone import names
from mo_operator.matrixone.component import Component

from .factories import NS, OLD_IMAGE, World, cluster, logset_services, node, set_pod

Step = Callable[[World], None]

CN0, CN1, CN2 = (names.pod_name(Component.CN, "mo-tp", i) for i in range(3))
LOG0 = names.pod_name(Component.LOG, "mo", 0)
TN0 = names.pod_name(Component.TN, "mo", 0)


def relist(world: World) -> None:
    """A dropped or expired watch, or a restarted server: every object comes back as an equal copy."""
    world.pods = {k: copy.deepcopy(p) for k, p in world.pods.items()}
    world.configmaps = copy.deepcopy(world.configmaps)
    world.services = copy.deepcopy(world.services)
    world.nodes = copy.deepcopy(world.nodes)


def lost_status_write(world: World) -> None:
    """The server restarted before it kept a pod's last status: the pod is back as not ready."""
    world.edit(CN0)["status"]["conditions"][0]["status"] = "False"


def status_write_again(world: World) -> None:
    world.edit(CN0)["status"]["conditions"][0]["status"] = "True"


def config_maps_behind(world: World) -> None:
    """The ConfigMap cache relists later than the pod cache: the pods' configs are missing."""
    world.saved = world.configmaps  # type: ignore[attr-defined]
    world.configmaps = []


def config_maps_caught_up(world: World) -> None:
    world.configmaps = world.saved  # type: ignore[attr-defined]


def services_behind(world: World) -> None:
    world.services = []


def services_caught_up(world: World) -> None:
    world.services = logset_services()


def log_pod_recreated(world: World) -> None:
    """A StatefulSet pod deleted and made again under its name (a new uid) while watches were down."""
    world.remove(LOG0)
    world.add(_log_pod_again())


def _log_pod_again() -> dict[str, Any]:
    from .factories import log_pod

    return log_pod(0)


def node_silent(world: World) -> None:
    world.nodes = [node(ready=False)]


def node_back(world: World) -> None:
    world.nodes = [node()]


def scale_out(world: World) -> None:
    world.add(set_pod(Component.CN, "mo-tp", 2))


def scale_in(world: World) -> None:
    world.remove(CN2)
    world.remove(CN1)


def scale_back(world: World) -> None:
    world.add(set_pod(Component.CN, "mo-tp", 1))


def upgrade(world: World) -> None:
    for name in (TN0, CN0, CN1):
        world.remove(name)
    world.add(set_pod(Component.TN, "mo", 0, image=OLD_IMAGE))
    world.add(*(set_pod(Component.CN, "mo-tp", i, image=OLD_IMAGE) for i in range(2)))


FAULTS_SCENARIO: list[Step] = [
    config_maps_behind,
    config_maps_caught_up,
    relist,
    services_behind,
    relist,
    services_caught_up,
    scale_out,
    relist,
    lost_status_write,
    relist,
    status_write_again,
    node_silent,
    log_pod_recreated,
    node_back,
    scale_in,
    relist,
    scale_back,
    upgrade,
    relist,
]


def test_the_tracker_answers_as_a_fresh_computation_at_every_step() -> None:
    world, tracker = World(), InstanceTracker()
    cluster(world, logs=3, cns=2)
    assert tracker.observe(world.snapshot()) == observe_instances(world.snapshot())
    for step in FAULTS_SCENARIO:
        step(world)
        snapshot = world.snapshot()
        assert tracker.observe(snapshot, world.bad_images) == observe_instances(snapshot, world.bad_images), (
            step.__name__
        )


class _Cache:
    def __init__(self, objects: Callable[[], list[dict[str, Any]]]) -> None:
        self._objects = objects

    def objects(self) -> list[dict[str, Any]]:
        return self._objects()

    def get(self, namespace: str, name: str) -> dict[str, Any] | None:
        return next((o for o in self._objects() if key_of(o) == (namespace, name)), None)


class _Simulator:
    """What a refresh uses of the workload simulator, over a ``World``; it records
    which pods the kubelet was asked to look at again."""

    def __init__(self, world: World) -> None:
        self.world = world
        self.now = 0.0
        self.ctx = SimpleNamespace(clock=lambda: self.now)
        self.config = SimpleNamespace(relist_period=60.0, plays_kubelets=True)
        self.api = None
        self.looked_at: set[tuple[str, str]] = set()
        self.resyncs = 0
        self.kubelet = SimpleNamespace(enqueue=self.looked_at.add)
        self._caches = {
            POD: _Cache(lambda: list(world.pods.values())),
            NODE: _Cache(lambda: world.nodes),
            PVC: _Cache(lambda: world.volume_claims),
        }

    def cache(self, kind: object) -> _Cache:
        return self._caches[kind]  # type: ignore[index]

    def resync_pods(self) -> None:
        self.resyncs += 1


def _simulated(world: World, full_refresh_interval: float) -> tuple[SimulatedMatrixOne, _Simulator]:
    simulator = _Simulator(world)
    simulated = SimulatedMatrixOne(simulator, full_refresh_interval=full_refresh_interval)  # type: ignore[arg-type]
    simulated._configmaps = _Cache(lambda: world.configmaps)  # type: ignore[assignment]
    simulated._services = _Cache(lambda: world.services)  # type: ignore[assignment]
    return simulated, simulator


def test_only_pods_whose_verdict_changed_are_looked_at_again() -> None:
    world = World()
    cluster(world, logs=3, cns=2)
    simulated, simulator = _simulated(world, full_refresh_interval=1000.0)
    simulated.refresh()  # the first refresh is a full one
    assert simulator.resyncs == 1
    simulator.now += 1
    upgrade(world)
    simulated.refresh()
    assert simulator.resyncs == 1
    assert simulator.looked_at == {(NS, TN0), (NS, CN0), (NS, CN1)}


def test_an_input_the_tracker_cannot_see_reaches_the_kubelet_through_the_backstop() -> None:
    """A pod changed in place (the same object, so the tracker takes it as unchanged):
    the incremental refresh misses it, the next full one does not, and the kubelet
    is asked to look at every pod. Without the backstop the pod keeps its old
    verdict for good: what the faults scenario showed as a pod left not ready."""
    world = World()
    cluster(world, logs=3, cns=2)
    simulated, simulator = _simulated(world, full_refresh_interval=2.0)
    simulated.refresh()
    uid = world.pods[CN0]["metadata"]["uid"]
    before = simulated.behaviour._verdicts[uid]
    world.pods[CN0]["status"]["containerStatuses"][0]["state"] = {"waiting": {}}  # in place
    simulator.now += 0.5
    simulated.refresh()
    assert simulated.behaviour._verdicts[uid] == before, "unseen by the incremental refresh"
    resyncs = simulator.resyncs
    simulator.now += 2.0
    simulated.refresh()
    assert simulated.behaviour._verdicts[uid] != before, "the full recompute sees it"
    assert simulator.resyncs == resyncs + 1, "and the kubelet looks at every pod again"
