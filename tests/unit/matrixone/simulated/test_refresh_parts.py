"""Pieces of the simulated MatrixOne's refresh that keep it cheap: the kubelet is told
which pods' verdicts changed (not to look at every pod again), and the snapshot is
made from copies kept up to date by the caches' events."""

from __future__ import annotations

from typing import Any

from mo_operator.localcluster.simulator.behaviour import PodVerdict
from mo_operator.matrixone.component import Component
from mo_operator.matrixone.simulated.behaviour import MatrixOneBehaviour
from mo_operator.matrixone.simulated.install import _Mirror
from mo_operator.matrixone.simulated.view import mo_component

from .factories import set_pod


def test_update_names_the_pods_whose_verdict_changed_appeared_or_went() -> None:
    behaviour = MatrixOneBehaviour(lambda: None)
    ready, waiting = PodVerdict(ready=True), PodVerdict(ready=False)
    assert behaviour.update({"a": ready, "b": waiting}) == {"a", "b"}
    assert behaviour.update({"a": PodVerdict(ready=True), "b": waiting}) == set()
    assert behaviour.update({"a": waiting, "b": waiting, "c": ready}) == {"a", "c"}
    assert behaviour.update({"c": ready}) == {"a", "b"}


class FakeCache:
    """What ``_Mirror.follow`` uses of an ObjectCache: objects() and add_handler()."""

    def __init__(self, *objs: dict[str, Any]) -> None:
        self.objs = list(objs)
        self.handlers: list[Any] = []

    def objects(self) -> list[dict[str, Any]]:
        return list(self.objs)

    def add_handler(self, handler: Any) -> None:
        self.handlers.append(handler)

    def emit(self, etype: str, old: dict[str, Any] | None, new: dict[str, Any] | None) -> None:
        for h in self.handlers:
            h(etype, old, new)


def _names(mirror: _Mirror) -> list[str]:
    return [name for _, name in mirror.objects]


def test_a_mirror_holds_what_the_cache_holds_in_its_order() -> None:
    tn, cn0, cn1 = (
        set_pod(Component.TN, "mo", 0),
        set_pod(Component.CN, "tp", 0),
        set_pod(Component.CN, "tp", 1),
    )
    plain = {"metadata": {"name": "nginx", "namespace": "ns", "labels": {}}}
    cache = FakeCache(tn, plain, cn0)
    mirror = _Mirror(lambda pod: mo_component(pod) is not None)
    mirror.follow(cache)  # type: ignore[arg-type]
    assert _names(mirror) == ["mo-dn-0", "tp-cn-0"], "filtered, in the cache's order"
    keys = mirror.keys()
    assert mirror.keys() is keys, "unchanged: the same set"
    changed = {**tn, "status": {"phase": "Failed"}}
    cache.emit("MODIFIED", tn, changed)
    assert _names(mirror) == ["mo-dn-0", "tp-cn-0"], "a modified object keeps its place"
    assert mirror.objects[("ns", "mo-dn-0")] is changed
    cache.emit("ADDED", None, cn1)
    cache.emit("DELETED", cn0, None)
    assert _names(mirror) == ["mo-dn-0", "tp-cn-1"]
    assert mirror.keys() == {("ns", "mo-dn-0"), ("ns", "tp-cn-1")}
    unlabelled = {**cn1, "metadata": {**cn1["metadata"], "labels": {}}}
    cache.emit("MODIFIED", cn1, unlabelled)
    assert _names(mirror) == ["mo-dn-0"], "an object that no longer qualifies leaves"
