"""The CN store finalizer (controllers/cnset/store_finalizer.py): a CN's store
leaves HAKeeper after its process stopped, and a pod is never held forever."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, cast

import pytest

from mo_operator.controllers.cnset.pods import HAKEEPER_ANNOTATION, LOGSET_ANNOTATION
from mo_operator.controllers.cnset.store_finalizer import CNStoreFinalizer, StoreView, decide, judge
from mo_operator.controllers.specs.pods import format_time
from mo_operator.kube.controller.controller import Request
from mo_operator.kube.meta.errors import ApiError
from mo_operator.matrixone import labels
from mo_operator.matrixone.admin import AdminError, ClientFault, StoreNotFound

from .controller_fakes import NOW, FakeCaches, Recorder, RecordingClient, make_env

Obj = dict[str, Any]
UUID = "cn-uuid-1"


class FakeAdmin:
    def __init__(self, error: Exception | None = None) -> None:
        self.error = error
        self.deleted: list[str] = []

    def admin(self, address: str) -> FakeAdmin:
        assert address == "mo-log-discovery.ns.svc:32001"
        return self

    async def delete_cn_store(self, uuid: str) -> None:
        if self.error is not None:
            raise self.error
        self.deleted.append(uuid)


def pod(*, running: bool, deleted_ago: float = 5.0) -> Obj:
    state: Obj = {"running": {}} if running else {"terminated": {"exitCode": 0}}
    return {
        "kind": "Pod",
        "metadata": {
            "name": "mo-tp-cn-0",
            "namespace": "ns",
            "resourceVersion": "4",
            "deletionTimestamp": format_time(NOW - deleted_ago),
            "finalizers": [labels.CN_DRAINING_FINALIZER, "other/finalizer"],
            "labels": {labels.CN_UUID: UUID},
            "annotations": {HAKEEPER_ANNOTATION: "mo-log-discovery.ns.svc:32001", LOGSET_ANNOTATION: "ns/mo"},
        },
        "spec": {"terminationGracePeriodSeconds": 30},
        "status": {"phase": "Running", "containerStatuses": [{"name": "main", "state": state}]},
    }


LOGSET = {"kind": "LogSet", "metadata": {"name": "mo", "namespace": "ns"}}


async def finalize(
    p: Obj, admin: FakeAdmin, *objs: Obj, nodes: tuple[str, ...] = (), refuse: Exception | None = None
) -> tuple[Any, list[Any], Recorder]:
    env = make_env(FakeCaches(p, *objs))
    client = cast(RecordingClient, env.client)
    client.server = {("Node", n): {"kind": "Node", "metadata": {"name": n}} for n in nodes}
    client.refuse = refuse
    env = replace(env, admin=cast(Any, admin))
    recorder = Recorder()
    result = await CNStoreFinalizer(env, cast(Any, recorder), give_up_seconds=60)(Request("ns", "mo-tp-cn-0"))
    return result, cast(RecordingClient, env.client).calls, recorder


async def test_the_store_goes_after_the_process_stopped_then_the_finalizer() -> None:
    admin = FakeAdmin()
    result, calls, _ = await finalize(pod(running=False), admin, LOGSET)
    assert result is None and admin.deleted == [UUID]
    assert calls == [
        (
            "patch",
            "Pod",
            "mo-tp-cn-0",
            {"metadata": {"finalizers": ["other/finalizer"], "resourceVersion": "4"}},
        )
    ]


async def test_a_running_cn_keeps_its_store_until_it_stops() -> None:
    """It would heartbeat and register the store again right after its deletion."""
    admin = FakeAdmin()
    result, calls, _ = await finalize(pod(running=True), admin, LOGSET)
    assert admin.deleted == [] and calls == [] and result is not None and result.requeue_after


async def test_a_cn_whose_node_never_reports_counts_as_stopped_after_a_bound() -> None:
    admin = FakeAdmin()
    _, calls, _ = await finalize(pod(running=True, deleted_ago=61), admin, LOGSET)
    assert admin.deleted == [UUID] and calls


def on_node(p: Obj, node: str) -> Obj:
    return {**p, "spec": {**p["spec"], "nodeName": node}}


async def test_a_cn_whose_node_is_gone_has_stopped_with_it() -> None:
    """A force-deleted pod of a lost machine: no kubelet will ever report its container stopped."""
    admin = FakeAdmin()
    _, calls, _ = await finalize(on_node(pod(running=True, deleted_ago=0), "node-1"), admin, LOGSET)
    assert admin.deleted == [UUID] and calls


async def test_a_cn_on_a_node_that_exists_or_cannot_be_read_is_waited_for() -> None:
    for kw in ({"nodes": ("node-1",)}, {"refuse": ApiError(403, "Forbidden")}):
        admin = FakeAdmin()
        result, calls, _ = await finalize(on_node(pod(running=True), "node-1"), admin, LOGSET, **kw)  # type: ignore[arg-type]
        assert admin.deleted == [] and calls == [] and result is not None, kw


async def test_a_cn_still_in_its_grace_period_is_not_looked_up() -> None:
    admin = FakeAdmin()
    _, calls, _ = await finalize(
        on_node(pod(running=True, deleted_ago=-20), "node-1"), admin, LOGSET, refuse=AssertionError("read")
    )
    assert admin.deleted == [] and calls == []


async def test_no_store_to_delete_when_the_cluster_is_going() -> None:
    admin = FakeAdmin(error=AdminError("unreachable"))
    going = {**LOGSET, "metadata": {**LOGSET["metadata"], "deletionTimestamp": format_time(NOW)}}
    for logsets in ((), (going,)):
        _, calls, _ = await finalize(pod(running=False), admin, *logsets)
        assert calls, "the finalizer is removed without asking HAKeeper"


async def test_an_unknown_store_is_done_and_a_silent_hakeeper_is_waited_for_then_given_up() -> None:
    _, calls, _ = await finalize(pod(running=False), FakeAdmin(error=StoreNotFound("gone")), LOGSET)
    assert calls
    result, calls, _ = await finalize(pod(running=False), FakeAdmin(error=AdminError("timeout")), LOGSET)
    assert calls == [] and result is not None
    _, calls, recorder = await finalize(
        pod(running=False, deleted_ago=61), FakeAdmin(error=AdminError("timeout")), LOGSET
    )
    assert calls and recorder.events[0][1] == "StoreNotDeleted"


async def test_the_operators_own_client_at_fault_holds_no_pod() -> None:
    """Waiting would not help when the operator cannot read HAKeeper's answer."""
    fault = ClientFault("checksum mismatch")
    _, calls, recorder = await finalize(pod(running=False), FakeAdmin(error=fault), LOGSET)
    assert calls, "the finalizer is removed at once"
    assert recorder.events[0][1] == "StoreNotDeleted" and "checksum mismatch" in recorder.events[0][2]


async def test_the_go_operators_cnstore_finalizer_goes_with_ours() -> None:
    """A CN pod the Go operator ran also carries its cnstore controller's finalizer, which
    no controller is left to remove: it goes with ``cn-draining``, after the store."""
    p = pod(running=False)
    p["metadata"]["finalizers"] = ["matrixorigin.io/cnstore", labels.CN_DRAINING_FINALIZER]
    admin = FakeAdmin()
    result, calls, _ = await finalize(p, admin, LOGSET)
    assert result is None and admin.deleted == [UUID]
    assert calls == [("patch", "Pod", "mo-tp-cn-0", {"metadata": {"finalizers": [], "resourceVersion": "4"}})]


# --- the decisions, as data -------------------------------------------------------------

STORE_CASES = {
    "a running CN is waited for": (pod(running=True), True, False, None),
    "a stopped CN's store goes, then the pod": (pod(running=False), True, True, ("addr", UUID)),
    "a cluster going has no store to delete": (pod(running=False), False, True, None),
}


@pytest.mark.parametrize(
    ("p", "logset_alive", "released", "store"), STORE_CASES.values(), ids=STORE_CASES.keys()
)
def test_the_store_finalizer_decides_from_the_pod_and_its_logset(
    p: Obj, logset_alive: bool, released: bool, store: tuple[str, str] | None
) -> None:
    stopped = p["status"]["containerStatuses"][0]["state"].get("running") is None
    decision = decide(StoreView(p, NOW, stopped, logset_alive, 60.0))
    assert (decision.release is not None) == released
    assert decision.store == (None if store is None else ("mo-log-discovery.ns.svc:32001", UUID))
    if decision.release is not None:
        assert decision.release.body == {
            "metadata": {"finalizers": ["other/finalizer"], "resourceVersion": "4"}
        }


FAILURES = {
    "a silent HAKeeper within patience is waited for": (AdminError("timeout"), 5.0, None),
    "a silent HAKeeper past patience lets the pod go": (
        AdminError("timeout"),
        61.0,
        "did not answer for 60s",
    ),
    "the operator's own client at fault lets the pod go at once": (
        ClientFault("checksum"),
        5.0,
        "cannot use HAKeeper's answer",
    ),
}


@pytest.mark.parametrize(("error", "deleted_ago", "said"), FAILURES.values(), ids=FAILURES.keys())
def test_a_failed_store_deletion_waits_or_lets_go_with_a_warning(
    error: AdminError, deleted_ago: float, said: str | None
) -> None:
    view = StoreView(pod(running=False, deleted_ago=deleted_ago), NOW, True, True, 60.0)
    warning = judge(view, error)
    if said is None:
        assert warning is None
    else:
        assert warning is not None and warning.reason == "StoreNotDeleted" and said in warning.message
