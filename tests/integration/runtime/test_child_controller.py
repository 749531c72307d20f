"""The test controller (``child_controller.py``) run by a Manager against the
embedded server: a level-based reconcile that reads only its cache and
writes by server-side apply writes nothing when everything is already as
desired, and puts back an owned object someone else changed or deleted
(controller-runtime's ``Owns``: a change to an owned object enqueues its
controller owner; https://kubernetes.io/docs/reference/using-api/server-side-apply/)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import pytest

from mo_devkit.localcluster.controlplane import ControlPlane
from mo_operator.kube.client.client import ApiClient
from mo_operator.kube.manager.manager import Manager

from .child_controller import CHILD_LABEL, ChildController, all_children_as_desired, parent
from .conftest import ClientFactory, make_informers
from .ledger import CONFIGMAPS, eventually

NS = "default"
MANAGER = "child-controller"


@dataclass
class Running:
    cc: ChildController
    client: ApiClient
    user: ApiClient


@pytest.fixture
async def running(control_plane: ControlPlane, clients: ClientFactory) -> AsyncIterator[Running]:
    client = clients(MANAGER)
    cc = ChildController(make_informers(client), client, NS)
    manager = Manager(cc.informers, [cc.controller], shutdown_timeout=5)
    task = asyncio.create_task(manager.run())
    try:
        yield Running(cc, client, clients("someone-else"))
    finally:
        manager.request_stop()
        await asyncio.wait_for(task, 10)


async def settled(cc: ChildController) -> None:
    """Wait until the controller has had nothing to do for a moment."""
    last = -1
    while last != cc.controller.reconciles or len(cc.controller.queue):
        last = cc.controller.reconciles
        await asyncio.sleep(0.3)


async def test_resync_of_objects_in_desired_state_writes_nothing(
    control_plane: ControlPlane, running: Running
) -> None:
    cc, user = running.cc, running.user
    for i in range(20):
        await user.create(CONFIGMAPS, parent(f"p{i}", a=str(i), b="x"))
    await eventually(lambda: all_children_as_desired(control_plane), 10, "children")
    await settled(cc)
    t0 = time.time()
    reconciles, client_writes, applies = (
        cc.controller.reconciles,
        sum(running.client.writes.values()),
        cc.applies,
    )

    assert cc.resync() == 20
    await eventually(lambda: cc.controller.reconciles >= reconciles + 20, 10, "the resync")
    await settled(cc)
    assert control_plane.server.faults.writes(field_manager=MANAGER, since=t0) == []
    assert sum(running.client.writes.values()) == client_writes
    assert cc.applies == applies

    # The control: a real change costs exactly one write, to the one child it concerns.
    t1 = time.time()
    await user.patch(CONFIGMAPS, "p3", {"data": {"b": "changed"}}, NS)
    await eventually(lambda: all_children_as_desired(control_plane), 10, "p3-child updated")
    await settled(cc)
    writes = control_plane.server.faults.writes(field_manager=MANAGER, since=t1)
    assert [(w.verb, w.name, w.code) for w in writes] == [("patch", "p3-child", 200)]


async def test_owned_object_changed_or_deleted_by_someone_else_is_put_back(
    control_plane: ControlPlane, running: Running
) -> None:
    user = running.user

    def child() -> dict[str, Any]:
        """The child as the server holds it (empty when there is none)."""
        return control_plane.server.store.get("configmaps", NS, "p-child") or {}

    await user.create(CONFIGMAPS, parent("p", k="v", gone="soon"))
    await eventually(lambda: all_children_as_desired(control_plane), 10, "the child")

    await user.patch(CONFIGMAPS, "p-child", {"data": {"copy.k": "tampered", "theirs": "1"}}, NS)
    await eventually(lambda: child().get("data", {}).get("copy.k") == "v", 10, "data put back")
    assert child()["data"]["theirs"] == "1"  # not ours to remove

    await user.patch(CONFIGMAPS, "p-child", {"metadata": {"labels": {CHILD_LABEL: None}}}, NS)
    await eventually(lambda: CHILD_LABEL in child()["metadata"].get("labels", {}), 10, "label put back")

    uid = child()["metadata"]["uid"]
    await user.delete(CONFIGMAPS, "p-child", NS)
    await eventually(lambda: child().get("metadata", {}).get("uid") not in (None, uid), 10, "re-created")
    assert all_children_as_desired(control_plane)

    # What we stop wanting, server-side apply removes: the parent drops a key.
    await user.patch(CONFIGMAPS, "p", {"data": {"gone": None, "new": "n"}}, NS)
    await eventually(lambda: all_children_as_desired(control_plane), 10, "child follows the parent")
    assert "copy.gone" not in child()["data"]

    await user.delete(CONFIGMAPS, "p", NS)
    await eventually(lambda: child() == {}, 10, "the child garbage-collected with its owner")
