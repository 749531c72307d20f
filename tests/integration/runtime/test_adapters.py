"""``kube/manager/adapters.py`` against the embedded server: what each API answer
means to leader election, the event recorder and the Actor framework."""

from __future__ import annotations

from typing import Any

import pytest

from mo_devkit.localcluster.controlplane import ControlPlane
from mo_operator.kube.leaderelection.leader import LeaderElectionConfig, LeaderElector, LeaseConflict
from mo_operator.kube.manager.adapters import EVENTS, ClientEventSink, ClientLeaseStore, ClientWriter
from mo_operator.kube.meta.errors import ApiError, is_conflict
from mo_operator.kube.recorder.events import EventNotFound, EventRecorder, EventRejected

from .conftest import ClientFactory
from .widgets import WIDGETS, install_widget_crd, widget

NS = "default"


def lease(name: str, holder: str) -> dict[str, Any]:
    return {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": name, "namespace": NS},
        "spec": {"holderIdentity": holder, "leaseDurationSeconds": 15},
    }


async def test_lease_store_reports_lost_races_as_conflicts(clients: ClientFactory) -> None:
    """Two candidates cannot both create the lease (AlreadyExists) nor both
    replace the version they read (Conflict): client-go's resourcelock
    relies on exactly this optimistic concurrency."""
    store = ClientLeaseStore(clients("candidate"))
    assert await store.get(NS, "l") is None
    created = await store.create(NS, lease("l", "a"))
    with pytest.raises(LeaseConflict):
        await store.create(NS, lease("l", "b"))
    first = await store.replace(NS, {**created, "spec": {**created["spec"], "holderIdentity": "a2"}})
    assert first["spec"]["holderIdentity"] == "a2"
    with pytest.raises(LeaseConflict):  # still carries the resourceVersion read before
        await store.replace(NS, {**created, "spec": {**created["spec"], "holderIdentity": "b"}})
    assert (await store.get(NS, "l"))["spec"]["holderIdentity"] == "a2"  # type: ignore[index]


async def test_elector_acquires_renews_and_releases_through_the_store(clients: ClientFactory) -> None:
    store = ClientLeaseStore(clients("elector"))
    config = LeaderElectionConfig("e", NS, "me", lease_duration=2, renew_deadline=1.5, retry_period=0.3)
    elector = LeaderElector(store, config)
    assert await elector.try_acquire_or_renew()
    assert await elector.try_acquire_or_renew()  # renewing our own lease
    rival = LeaderElector(store, LeaderElectionConfig("e", NS, "rival", 2, 1.5, 0.3))
    assert not await rival.try_acquire_or_renew()
    await elector.release()
    assert await rival.try_acquire_or_renew()  # at once: released, not expired
    held = await store.get(NS, "e")
    assert held is not None and held["spec"]["holderIdentity"] == "rival"
    assert held["spec"]["leaseTransitions"] == 1


async def test_event_sink_maps_answers_for_the_recorder(
    control_plane: ControlPlane, clients: ClientFactory
) -> None:
    sink = ClientEventSink(clients("events"))
    event = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": "e1", "namespace": NS},
        "involvedObject": {"kind": "ConfigMap", "name": "x", "namespace": NS},
        "reason": "Tested",
        "message": "m",
        "type": "Normal",
        "count": 1,
    }
    await sink.create(NS, event)
    with pytest.raises(EventRejected):  # AlreadyExists: retrying cannot help
        await sink.create(NS, event)
    with pytest.raises(EventRejected):  # the namespace does not exist
        await sink.create("missing", {**event, "metadata": {"name": "e2", "namespace": "missing"}})
    with pytest.raises(EventNotFound):
        await sink.patch(NS, "expired", {"count": 2})
    control_plane.server.faults.fail_next(10, 429, retry_after=0, user_agent="events")
    with pytest.raises(ApiError) as throttled:  # transient: the recorder retries it
        await sink.patch(NS, "e1", {"count": 2})
    assert throttled.value.status == 429
    assert not isinstance(throttled.value, EventNotFound | EventRejected)


async def test_recorder_dedupes_into_one_event_through_the_sink(
    control_plane: ControlPlane, clients: ClientFactory
) -> None:
    """Repeats of an event become one Event whose count grows (client-go
    ``tools/record/events_cache.go``), written by create then patch."""
    client = clients("recorder")
    recorder = EventRecorder(ClientEventSink(client), "test-controller")
    about = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x", "namespace": NS, "uid": "u1"}}
    for _ in range(3):
        recorder.event(about, "Warning", "Broken", "it broke")
        await recorder.flush()
    await recorder.close()
    events = (await client.list(EVENTS, NS)).items
    assert [(e["reason"], e["count"], e["involvedObject"]["name"]) for e in events] == [("Broken", 3, "x")]
    assert client.writes == {"create": 1, "patch": 2}


async def test_writer_patches_metadata_and_applies_status_through_the_subresource(
    control_plane: ControlPlane, clients: ClientFactory
) -> None:
    client = clients("widget-writer")
    await install_widget_crd(client)
    w = await client.create(WIDGETS, widget("w", value=1))
    writer = ClientWriter(client, WIDGETS)

    patched = await writer.merge_patch(
        NS, "w", {"metadata": {"finalizers": ["x/y"], "resourceVersion": w["metadata"]["resourceVersion"]}}
    )
    assert patched["metadata"]["finalizers"] == ["x/y"]
    with pytest.raises(ApiError) as stale:  # the same precondition again: someone wrote meanwhile
        await writer.merge_patch(
            NS, "w", {"metadata": {"finalizers": [], "resourceVersion": w["metadata"]["resourceVersion"]}}
        )
    assert is_conflict(stale.value)

    done = await writer.patch_status(NS, "w", {"observedGeneration": 1, "echo": 1, "phase": "Ready"})
    assert done["status"] == {"observedGeneration": 1, "echo": 1, "phase": "Ready"}
    assert done["spec"] == {"value": 1}
    done = await writer.patch_status(NS, "w", {"observedGeneration": 1, "echo": 1})
    assert "phase" not in done["status"]  # applied before, left out now: removed
    status_writes = [
        r
        for r in control_plane.server.faults.writes(field_manager="widget-writer")
        if r.subresource == "status"
    ]
    assert [(r.verb, r.code) for r in status_writes] == [("patch", 200), ("patch", 200)]
    owners = {(m["manager"], m.get("subresource", "")) for m in done["metadata"]["managedFields"]}
    assert ("widget-writer", "status") in owners
