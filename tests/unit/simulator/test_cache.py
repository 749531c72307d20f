"""The simulator's watched caches (client-go's informer store, with the
write-through the simulator adds)."""

from __future__ import annotations

from mo_devkit.localcluster.simulator.core.cache import ObjectCache
from mo_devkit.localcluster.simulator.core.kinds import POD

from .factories import pod
from .fake_api import FakeKubeApi


def test_a_late_deletion_response_does_not_drop_the_successor() -> None:
    """The kubelet deletes a terminated StatefulSet pod; before the response
    comes back the watch has brought the pod the controller recreated under
    the same name. Forgetting by name dropped the new pod, which nobody then
    ran until the next relist (a minute on a real API server)."""
    cache = ObjectCache(FakeKubeApi(), POD)
    successor = pod("web-2", uid="new")
    successor["metadata"]["resourceVersion"] = "12"
    cache.apply(successor)
    cache.forget("default", "web-2", uid="old")
    assert cache.get("default", "web-2") is successor
    cache.forget("default", "web-2", uid="new")
    assert cache.get("default", "web-2") is None
