"""How a TN, CN or proxy set finds its log service, or says what it waits for
(controllers/steps/deps.py)."""

from __future__ import annotations

from typing import Any, cast

import pytest

from mo_operator.api.base import parse
from mo_operator.api.common import PodSet
from mo_operator.controllers.framework.env import Caches
from mo_operator.controllers.mappers import news_for_dependents
from mo_operator.controllers.steps.deps import LogService, Waiting, logset_ref, resolve
from mo_operator.matrixone import labels

from .controller_fakes import FakeCaches

Obj = dict[str, Any]
S3 = {"s3": {"path": "bucket/mo", "type": "minio"}}


def ready(*, synced: bool = True, observed: int = 1) -> Obj:
    """The conditions and observedGeneration of an object Ready (and Synced) at generation 1."""
    return {
        "observedGeneration": observed,
        "conditions": [
            {"type": "Ready", "status": "True", "reason": "AllStoresReady"},
            {"type": "Synced", "status": str(synced), "reason": "Synced"},
        ],
    }


def logset(
    name: str = "mo",
    namespace: str = "ns",
    *,
    replicas: int = 3,
    discovery: bool = True,
    is_ready: bool = True,
) -> Obj:
    status: Obj = ready() if is_ready else {}
    if discovery:
        status["discovery"] = {"address": f"{name}-log-discovery.{namespace}.svc", "port": 32001}
    return {
        "kind": "LogSet",
        "metadata": {"name": name, "namespace": namespace, "generation": 1},
        "spec": {"replicas": replicas, "sharedStorage": S3},
        "status": status,
    }


def dnset(name: str = "mo", status: Obj | None = None, kind: str = "DNSet") -> Obj:
    return {
        "kind": kind,
        "metadata": {"name": name, "namespace": "ns", "generation": 1},
        "status": status or {},
    }


def cnset(deps: Obj, namespace: str = "ns") -> Obj:
    return {"kind": "CNSet", "metadata": {"name": "mo-tp", "namespace": namespace}, "deps": deps}


def ref(name: str, namespace: str | None = None) -> Obj:
    meta: Obj = {"name": name}
    if namespace is not None:
        meta["namespace"] = namespace
    return {"logSet": {"metadata": meta}}


def caches(*objs: Obj) -> Caches:
    return cast(Caches, FakeCaches(*objs))


def pod_set(**fields: Any) -> PodSet:
    return parse(PodSet, {"replicas": 1, **fields})


V2 = pod_set(image="matrixorigin/matrixone:2.0.1")
V1 = pod_set(image="matrixorigin/matrixone:1.2.3")


def test_an_external_log_service_is_used_by_address_as_given() -> None:
    obj = cnset({"externalLogSet": {"haKeeperEndpoint": "hakeeper.elsewhere:32001"}, **ref("ignored")})
    got = resolve(caches(), obj, V1)
    assert isinstance(got, LogService)
    assert got.discovery_address == "hakeeper.elsewhere:32001"
    assert got.endpoint.service_addresses == ()  # unknown for an external log service
    assert got.shared_storage == {} and got.logset is None


def test_no_log_service_named() -> None:
    got = resolve(caches(logset()), cnset({}), V2)
    assert isinstance(got, Waiting) and got.reason == "NoLogService"
    assert "neither a logSet nor an externalLogSet" in got.message
    assert isinstance(resolve(caches(), cnset({"logSet": {"metadata": {}}}), V2), Waiting)


def test_a_missing_logset_is_waited_for() -> None:
    got = resolve(caches(logset("other")), cnset(ref("mo")), V2)
    assert got == Waiting("WaitingForLogSet", "waiting for LogSet ns/mo to be Ready")


def test_a_logset_without_discovery_has_not_published_its_address() -> None:
    got = resolve(caches(logset(discovery=False)), cnset(ref("mo")), V2)
    assert got == Waiting("WaitingForLogSet", "waiting for LogSet ns/mo to be Ready")


def test_a_set_starts_once_its_logset_is_ready_and_synced_at_its_generation_as_upstream() -> None:
    """``GetDependencies``: a DNSet, CNSet or ProxySet waits for its LogSet ``Ready`` at
    its latest generation (our ``Synced`` settles later, by design, and is not waited
    for); a set already running keeps going through the LogSet's own rolls."""
    waiting = Waiting("WaitingForLogSet", "waiting for LogSet ns/mo to be Ready")
    settling = {**logset(), "status": {**logset()["status"], **ready(synced=False)}}
    assert isinstance(resolve(caches(settling), cnset(ref("mo")), V2, started=False), LogService)
    for not_yet in (
        logset(is_ready=False),
        {**logset(), "status": {**logset()["status"], **ready(observed=0)}},
    ):
        assert resolve(caches(not_yet), cnset(ref("mo")), V2, started=False) == waiting
        assert isinstance(resolve(caches(not_yet), cnset(ref("mo")), V2, started=True), LogService)
    assert isinstance(resolve(caches(logset()), cnset(ref("mo")), V2, started=False), LogService)


def test_a_cnset_that_names_its_dnset_waits_for_it_too() -> None:
    deps = {**ref("mo"), "dnSet": {"metadata": {"name": "mo"}}}
    waiting = Waiting("WaitingForDependencies", "waiting for LogSet ns/mo and DNSet ns/mo to be Ready")
    assert resolve(caches(logset()), cnset(deps), V2, started=False) == waiting
    assert resolve(caches(logset(), dnset()), cnset(deps), V2, started=False) == waiting, (
        "one message all along"
    )
    for tn in (dnset(status=ready()), dnset(status=ready(), kind="TNSet")):
        assert isinstance(resolve(caches(logset(), tn), cnset(deps), V2, started=False), LogService)
    assert isinstance(resolve(caches(logset()), cnset(deps), V2, started=True), LogService)


def test_the_discovery_address_and_shared_storage_of_the_logset() -> None:
    ls = logset()
    got = resolve(caches(ls), cnset(ref("mo")), V2)
    assert isinstance(got, LogService)
    assert got.discovery_address == "mo-log-discovery.ns.svc:32001"
    assert got.endpoint.service_addresses == ()  # 2.0 finds HAKeeper by discovery
    assert got.shared_storage == S3
    assert got.logset is not None and got.logset["metadata"]["name"] == "mo"


def test_before_2_0_every_log_store_is_listed() -> None:
    got = resolve(caches(logset(replicas=3)), cnset(ref("mo")), V1)
    assert isinstance(got, LogService)
    assert got.discovery_address == "mo-log-discovery.ns.svc:32001"
    assert got.endpoint.service_addresses == (
        "mo-log-0.mo-log-headless.ns.svc:32001",
        "mo-log-1.mo-log-headless.ns.svc:32001",
        "mo-log-2.mo-log-headless.ns.svc:32001",
    )
    # semanticVersion overrides the image tag, both ways
    new = resolve(
        caches(logset()),
        cnset(ref("mo")),
        pod_set(image="matrixorigin/matrixone:1.2.3", semanticVersion="2.0.0"),
    )
    assert isinstance(new, LogService) and new.endpoint.service_addresses == ()
    old = resolve(
        caches(logset()),
        cnset(ref("mo")),
        pod_set(image="matrixorigin/matrixone:2.0.1", semanticVersion="1.2.0"),
    )
    assert isinstance(old, LogService) and len(old.endpoint.service_addresses) == 3
    # an unknown version gets the addresses too (as upstream, no feature is assumed)
    latest = resolve(caches(logset()), cnset(ref("mo")), pod_set(image="matrixorigin/matrixone:latest"))
    assert isinstance(latest, LogService) and len(latest.endpoint.service_addresses) == 3


def test_before_2_0_the_stores_listed_skip_a_taken_over_logsets_reserved_ordinals() -> None:
    failed_over = logset(replicas=3)
    failed_over["metadata"]["annotations"] = {labels.LOGSET_RESERVED_ORDINALS: "[0]"}
    got = resolve(caches(failed_over), cnset(ref("mo")), V1)
    assert isinstance(got, LogService)
    assert got.endpoint.service_addresses == tuple(
        f"mo-log-{i}.mo-log-headless.ns.svc:32001" for i in (1, 2, 3)
    )
    failed_over["metadata"]["annotations"] = {labels.LOGSET_RESERVED_ORDINALS: "[1]"}
    hole = resolve(caches(failed_over), cnset(ref("mo")), V1)
    assert isinstance(hole, LogService)
    assert hole.endpoint.service_addresses == tuple(
        f"mo-log-{i}.mo-log-headless.ns.svc:32001" for i in (0, 2, 3)
    )


def test_a_logset_in_another_namespace() -> None:
    there = logset("shared", "logs")
    got = resolve(caches(there, logset("shared", "ns", discovery=False)), cnset(ref("shared", "logs")), V2)
    assert isinstance(got, LogService) and got.discovery_address == "shared-log-discovery.logs.svc:32001"
    assert logset_ref(cnset(ref("shared", "logs"))) == ("logs", "shared")
    assert logset_ref(cnset(ref("mo"))) == ("ns", "mo")
    assert logset_ref(cnset({})) is None


def _with(obj: Obj, **status: Any) -> Obj:
    return {**obj, "status": {**obj["status"], **status}}


def _meta(obj: Obj, **meta: Any) -> Obj:
    return {**obj, "metadata": {**obj["metadata"], **meta}}


CONVERGING = logset(is_ready=False)


@pytest.mark.parametrize(
    ("old", "new", "wakes"),
    [
        (CONVERGING, _with(CONVERGING, message="2/3 stores ready", hakeeperState="bootstrapping"), False),
        (CONVERGING, _with(CONVERGING, availableStores=[{"podName": "mo-log-0"}]), False),
        (
            CONVERGING,
            {**CONVERGING, "status": {**ready(), "discovery": CONVERGING["status"]["discovery"]}},
            True,
        ),
        (logset(discovery=False, is_ready=False), CONVERGING, True),
        (logset(), _with(logset(), observedGeneration=0), True),
        (logset(), _meta(logset(), generation=2), True),
        (logset(), _meta(logset(), annotations={"a": "b"}), True),
        (logset(), _meta(logset(), deletionTimestamp="2026-11-28T00:00:00Z"), True),
    ],
    ids=[
        "progress message",
        "store counts",
        "turns Ready",
        "publishes its discovery address",
        "Ready for an older generation",
        "new spec",
        "annotations",
        "deletion starts",
    ],
)
def test_a_log_sets_dependents_wake_only_for_what_they_read(old: Obj, new: Obj, wakes: bool) -> None:
    assert news_for_dependents(old, new) is wakes
