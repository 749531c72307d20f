"""The shared test kit's pure parts: what counts as Ready, how a manifest is
made runnable on a real cluster, and how ``eventually`` rides out an API
server that is away."""

from __future__ import annotations

import itertools
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest

from mo_devkit.localcluster.simulator.config import SIMULATED_LABEL
from mo_devkit.testing import (
    SIMULATED_STORAGE_CLASS,
    OperatorRunner,
    Shape,
    Unmet,
    World,
    cluster_manifest,
    eventually,
    is_ready,
    is_settled,
    runnable,
)
from mo_devkit.testing.cluster_process import ClusterProcess
from mo_devkit.testing.observation import primary_resource
from mo_operator.controllers.operator import Operator
from mo_operator.kube.client.client import ApiClient
from mo_operator.kube.meta.errors import ApiConnectionError
from mo_operator.matrixone.admin import AdminError
from mo_operator.matrixone.rpc.provider import RpcAdminProvider
from mo_operator.settings import OperatorConfig
from mo_operator.settings import Settings as OperatorSettings

Obj = dict[str, Any]


def obj(generation: int, observed: int, **conditions: str) -> Obj:
    return {
        "metadata": {"name": "mo", "generation": generation},
        "status": {
            "observedGeneration": observed,
            "conditions": [{"type": t, "status": s} for t, s in conditions.items()],
        },
    }


def test_ready_counts_only_for_the_latest_generation() -> None:
    assert is_ready(obj(2, 2, Ready="True"))
    assert not is_ready(obj(3, 2, Ready="True")), "a Ready of the previous spec is not Ready"
    assert not is_ready(obj(2, 2, Ready="False"))
    assert not is_ready(None)


def test_settled_also_needs_every_pod_on_the_current_spec() -> None:
    assert is_settled(obj(1, 1, Ready="True", UpToDate="True"))
    assert not is_settled(obj(1, 1, Ready="True", UpToDate="False"))
    assert not is_settled(obj(2, 1, Ready="True", UpToDate="True"))


def test_on_the_embedded_cluster_a_manifest_only_gets_its_namespace() -> None:
    manifest = cluster_manifest("mo")
    made = runnable(manifest, "ns", real=False)
    assert made["metadata"]["namespace"] == "ns"
    assert made["spec"] == manifest["spec"]
    assert "namespace" not in manifest["metadata"], "the original is left alone"


def test_on_a_real_cluster_every_set_goes_to_the_simulated_nodes_and_volumes() -> None:
    made = runnable(cluster_manifest("mo", proxy={"replicas": 1}), "ns", real=True)
    spec = made["spec"]
    for s in (spec["logService"], spec["tn"], spec["proxy"], *spec["cnGroups"]):
        assert s["nodeSelector"] == {SIMULATED_LABEL: "true"}
        assert [t["key"] for t in s["overlay"]["tolerations"]] == [SIMULATED_LABEL]
    assert spec["logService"]["volume"]["storageClassName"] == SIMULATED_STORAGE_CLASS


def test_a_set_alone_is_placed_too_and_its_own_storage_class_kept() -> None:
    cnset = {
        "kind": "CNSet",
        "metadata": {"name": "c"},
        "spec": {"cacheVolume": {"size": "1Gi", "storageClassName": "mine"}},
    }
    made = runnable(cnset, "ns", real=True)
    assert made["spec"]["nodeSelector"] == {SIMULATED_LABEL: "true"}
    assert made["spec"]["cacheVolume"]["storageClassName"] == "mine"


async def test_eventually_rides_out_an_unreachable_server_and_returns_the_answer() -> None:
    answers: list[Any] = [ApiConnectionError("refused"), None, "done"]

    def check() -> Any:
        answer = answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    assert await eventually(check, timeout=5, interval=0) == "done"


async def test_eventually_fails_with_the_last_answer_and_stops_on_a_real_error() -> None:
    with pytest.raises(AssertionError, match=r"not true after 0\.05s: nothing yet \(last: False\)"):
        await eventually(lambda: False, timeout=0.05, interval=0.01, message="nothing yet")

    def broken() -> None:
        raise KeyError("a bug")

    with pytest.raises(KeyError):
        await eventually(broken, timeout=1)


async def test_an_unmet_check_is_not_true_and_its_timeout_says_what_it_saw() -> None:
    assert not Unmet("pod p labelled Draining")
    with pytest.raises(AssertionError, match=r"p is Idle \(last: pod p labelled Draining\)$"):
        await eventually(
            lambda: Unmet("pod p labelled Draining"), timeout=0.05, interval=0.01, message="p is Idle"
        )


def test_a_spawned_operator_runs_with_the_worlds_cluster_and_the_runners_timings() -> None:
    book = Path("/tmp/mo-addresses.json")
    world = SimpleNamespace(kubeconfig=Path("/tmp/kc"), cluster=SimpleNamespace(address_book=book))
    settings = OperatorSettings(poll_seconds=7.0, busy_poll_seconds=0.5, rollout_stall_seconds=9.0)
    args = OperatorRunner(cast(World, world), settings=settings)._run_args("me")
    flags = dict(itertools.pairwise(args))
    assert args[1:3] == ["-m", "mo_devkit.testing.operator_process"], (
        "the product's run, with the kit's dialer"
    )
    assert (flags["--kubeconfig"], flags["--mo-address-book"]) == ("/tmp/kc", str(book))
    assert (flags["--poll-seconds"], flags["--busy-poll-seconds"], flags["--rollout-stall-seconds"]) == (
        "7.0",
        "0.5",
        "9.0",
    )
    assert flags["--identity"] == "me" and "--no-webhooks" in args


def test_a_cluster_manifest_takes_its_replicas_from_a_shape() -> None:
    spec = cluster_manifest("mo", Shape(log=1, tn=1, cn=1, proxy=1))["spec"]
    replicas = [spec[k]["replicas"] for k in ("logService", "tn", "proxy")] + [
        spec["cnGroups"][0]["replicas"]
    ]
    assert replicas == [1, 1, 1, 1]
    assert "proxy" not in cluster_manifest("mo")["spec"], "the default shape has no proxy"
    assert Shape().pods == 6


def test_every_controller_of_the_operator_names_the_kind_it_reconciles() -> None:
    operator = Operator(cast(ApiClient, SimpleNamespace()), RpcAdminProvider(), OperatorConfig())
    kinds = {c.name: primary_resource(c).kind for c in operator.controllers}
    assert kinds["matrixonecluster"] == "MatrixOneCluster" and kinds["cnstore"] == "Pod", kinds


async def test_where_no_matrixone_runs_no_name_resolves(tmp_path: Path) -> None:
    """A cluster process without a simulated MatrixOne writes no address book: every
    call fails as a HAKeeper whose name does not exist would."""
    cluster = ClusterProcess(tmp_path / "kubeconfig", None)
    provider = RpcAdminProvider(dialer=cluster.dialer, timeout=1.0)
    try:
        with pytest.raises(AdminError, match=r"hakeeper_state.*Name or service not known"):
            await provider.admin("mo-log-discovery.ns.svc:32001").hakeeper_state()
    finally:
        await provider.close()
