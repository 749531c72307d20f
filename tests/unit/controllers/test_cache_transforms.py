"""What the operator's cache drops: managed fields, ``kubectl apply``'s copy of
the object, every pod spec field no controller reads, the Service spec
fields the API server assigns and the operator never sets, and the text of
ConfigMaps (a digest that compares as the text did)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import mo_operator.controllers as controllers
from mo_operator.controllers.framework import resources as r
from mo_operator.controllers.framework.cache_transforms import (
    CACHE_TRANSFORMS,
    CONTAINER_STATUS_UNREAD,
    POD_SPEC_READ,
    POD_STATUS_UNREAD,
    SERVICE_SPEC_ASSIGNED,
    TextDigest,
)
from mo_operator.controllers.framework.desired import matches, stamped
from mo_operator.controllers.specs import services
from mo_operator.controllers.specs.configmaps import hashed_config_map
from mo_operator.kube.cache.informer import LAST_APPLIED, strip_managed_fields
from mo_operator.kube.controller.controller import kept_changed
from mo_operator.kube.meta.frozen import freeze

POD: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {
        "name": "mo-tp-cn-0",
        "namespace": "ns",
        "resourceVersion": "7",
        "annotations": {
            LAST_APPLIED: "{...}",
            "matrixorigin.io/hakeeper-discovery": "mo-log-discovery:32001",
        },
        "managedFields": [{"manager": "mo-operator"}],
    },
    "spec": {
        "containers": [{"name": "main", "image": "matrixorigin/matrixone:2.0.0"}],
        "tolerations": [{"operator": "Exists"}],
        "volumes": [{"name": "config", "configMap": {"name": "mo-tp-cn-config-1"}}],
        "nodeName": "node-0",
        "hostname": "mo-tp-cn-0",
        "subdomain": "mo-tp-headless",
    },
    "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]},
}


def test_a_cached_pod_keeps_its_metadata_status_and_the_spec_fields_read() -> None:
    cached = CACHE_TRANSFORMS[r.PODS](POD)
    assert set(cached["spec"]) == set(POD_SPEC_READ)
    assert cached["status"] == POD["status"]
    assert cached["metadata"]["resourceVersion"] == "7"
    assert "managedFields" not in cached["metadata"]
    assert cached["metadata"]["annotations"] == {
        "matrixorigin.io/hakeeper-discovery": "mo-log-discovery:32001"
    }
    assert POD["spec"]["containers"], "the input is left as it was"


def running_pod(name: str, ip: str, container_id: str) -> dict[str, Any]:
    status = {
        "phase": "Running",
        "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": "2026-11-26T20:21:11Z"}],
        "hostIP": "172.18.0.2",
        "hostIPs": [{"ip": "172.18.0.2"}],
        "podIP": ip,
        "podIPs": [{"ip": ip}],
        "startTime": "2026-11-26T20:21:11Z",
        "qosClass": "BestEffort",
        "containerStatuses": [
            {
                "name": "main",
                "image": "matrixorigin/matrixone:2.0.0",
                "imageID": "docker.io/matrixorigin/matrixone@sha256:0c08",
                "containerID": container_id,
                "ready": True,
                "restartCount": 0,
                "state": {"running": {"startedAt": "2026-11-26T20:21:11Z"}},
                "lastState": {},
            }
        ],
    }
    return {**POD, "metadata": {**POD["metadata"], "name": name}, "status": status}


def test_a_cached_pod_keeps_the_status_fields_read_and_pods_share_what_remains() -> None:
    a = CACHE_TRANSFORMS[r.PODS](running_pod("a", "10.0.0.1", "containerd://1"))
    b = CACHE_TRANSFORMS[r.PODS](running_pod("b", "10.0.0.2", "containerd://2"))
    assert set(a["status"]) == {"phase", "conditions", "containerStatuses"}
    (main,) = a["status"]["containerStatuses"]
    assert main["state"] == {"running": {"startedAt": "2026-11-26T20:21:11Z"}} and main["ready"] is True
    assert not set(main) & set(CONTAINER_STATUS_UNREAD)
    assert a["status"] == b["status"], "nothing of the pod's own is left: the memo can store it once"


_UNREAD = "|".join((*POD_STATUS_UNREAD, *CONTAINER_STATUS_UNREAD))
_UNREAD_NAMED = re.compile(f'"({_UNREAD})"')


def test_no_source_reads_a_pod_status_field_the_cache_drops() -> None:
    """A guard over the controllers' and MatrixOne's sources (what runs in the
    operator; the simulated MatrixOne reads the API server, not this cache): no
    string names a dropped field."""
    root = Path(controllers.__file__).parent.parent
    named = [
        (path.name, m.group(1))
        for folder in ("controllers", "matrixone")
        for path in (root / folder).rglob("*.py")
        if "simulated" not in path.parts and path.name != "cache_transforms.py"
        for m in _UNREAD_NAMED.finditer(path.read_text())
    ]
    assert not named, named


def test_other_kinds_lose_only_managed_fields_and_the_last_applied_copy() -> None:
    sts = {**POD, "kind": "StatefulSet"}
    cached = strip_managed_fields(sts)
    assert cached["spec"] == POD["spec"]
    assert set(cached["metadata"]) == set(POD["metadata"]) - {"managedFields"}
    assert strip_managed_fields(cached) is cached, "nothing to strip: the same object"


_SPEC_READ = re.compile(
    r"""(?:spec_of\((?P<a>\w+)\)|\((?P<b>\w+)\.get\("spec"\)\s+or\s+\{\}\))\.get\("(?P<field>\w+)"\)"""
)


def test_controllers_read_no_other_pod_spec_field() -> None:
    """A guard over the sources: ``spec_of(pod).get("x")`` or ``(pod.get("spec") or
    {}).get("x")`` on a variable named like a pod must name a field the cache keeps."""
    root = Path(controllers.__file__).parent
    reads = set()
    for path in root.rglob("*.py"):
        for m in _SPEC_READ.finditer(path.read_text()):
            var = m.group("a") or m.group("b")
            if var in ("p", "pod") or var.endswith("_pod"):
                reads.add((path.name, m.group("field")))
    assert reads, "the pattern still finds the known reads"
    assert {field for _, field in reads} <= set(POD_SPEC_READ), sorted(reads)


OWNER = {
    "apiVersion": "core.matrixorigin.io/v1alpha1",
    "kind": "CNSet",
    "metadata": {"name": "mo-tp", "namespace": "ns", "uid": "u-1"},
}
LABELS = {"matrixorigin.io/instance": "mo-tp"}


def every_service_we_make() -> list[dict[str, Any]]:
    return [
        services.headless_service(OWNER, "mo-tp-headless", LABELS, LABELS, [("service", 6001)]),
        services.discovery_service(OWNER, "mo-log-discovery", LABELS, LABELS),
        services.metric_service(OWNER, "mo-tp-metric", LABELS, LABELS, {"prometheus.io/scrape": "true"}),
        services.client_service(OWNER, "mo-tp", LABELS, LABELS, "mysql", 6001, service_type=None),
        services.client_service(
            OWNER,
            "mo-tp-np",
            LABELS,
            LABELS,
            "mysql",
            6001,
            service_type="NodePort",
            node_port=31001,
            annotations={"a": "b"},
        ),
    ]


def as_served(service: dict[str, Any], cluster_ip: str) -> dict[str, Any]:
    """``service`` as the API server stores it: its assigned fields added."""
    spec = service["spec"]
    assigned = {
        "type": "ClusterIP",
        "sessionAffinity": "None",
        "internalTrafficPolicy": "Cluster",
        "ipFamilyPolicy": "SingleStack",
        "ipFamilies": ["IPv4"],
        "clusterIP": cluster_ip,
        "clusterIPs": [cluster_ip],
    }
    return {**service, "spec": {**assigned, **spec}, "status": {"loadBalancer": {}}}


def test_no_service_we_make_sets_a_field_the_cache_drops() -> None:
    for service in every_service_we_make():
        assert not set(service["spec"]) & set(SERVICE_SPEC_ASSIGNED), service["metadata"]["name"]
        assert service["spec"].get("clusterIP", "None") == "None", "only a headless one sets its IP"


def test_a_cached_service_still_matches_its_desired_rendering_and_its_drift_shows() -> None:
    transform = CACHE_TRANSFORMS[r.SERVICES]
    for service in every_service_we_make():
        desired = stamped(service)
        served = as_served(desired, service["spec"].get("clusterIP", "10.96.0.7"))
        cached = transform(served)
        assert not set(cached["spec"]) & set(SERVICE_SPEC_ASSIGNED)
        assert matches(desired, cached), service["metadata"]["name"]
        drifted = transform({**served, "spec": {**served["spec"], "selector": {"other": "x"}}})
        assert not matches(desired, drifted), "a change by another writer is still seen"
    headless = transform(as_served(every_service_we_make()[0], "None"))
    assert headless["spec"]["clusterIP"] == "None"
    assert "clusterIP" not in transform(as_served(every_service_we_make()[3], "10.96.0.7"))["spec"]


def config_map(data: dict[str, str]) -> dict[str, Any]:
    return stamped(hashed_config_map(OWNER, "mo-tp-cn-config", LABELS, data))


def test_a_cached_config_map_keeps_digests_that_compare_as_its_text_did() -> None:
    transform = CACHE_TRANSFORMS[r.CONFIGMAPS]
    config = "[cn]\nrole = 'TP'\n" * 40
    desired = config_map({"config.toml": config, "start.sh": "exec mo-service"})
    cached = transform(desired)
    assert all(type(v) is TextDigest for v in cached["data"].values())
    assert matches(desired, cached)
    edited = transform({**desired, "data": {**desired["data"], "config.toml": config + "x"}})
    assert not matches(desired, edited), "another writer's edit still shows"
    dropped = transform({**desired, "data": {"start.sh": "exec mo-service"}})
    assert not matches(desired, dropped), "so does a value removed"
    extra = transform({**desired, "data": {**desired["data"], "other": "theirs"}})
    assert matches(desired, extra), "a key another writer added is not ours to compare, as before"
    assert cached["data"]["config.toml"] == TextDigest(config) and hash(TextDigest(config)) == hash(
        cached["data"]["config.toml"]
    )
    assert cached["data"]["config.toml"] != TextDigest(config + "x")


_DATA_READ = re.compile(r"""(?:\.get\(|\[|mapping_at\([^,]+,\s*)"data"[\])]""")


def test_only_secrets_have_their_data_read() -> None:
    """A guard over what runs in the operator: the sources that read any object's
    ``data`` are those that read Secrets (ConfigMaps keep only digests)."""
    root = Path(controllers.__file__).parent.parent
    readers = {
        path.relative_to(root).as_posix()
        for folder in ("controllers", "matrixone")
        for path in (root / folder).rglob("*.py")
        if "simulated" not in path.parts
        and path.name != "cache_transforms.py"
        and _DATA_READ.search(path.read_text())
    }
    assert readers == {"controllers/webui.py", "controllers/cluster/actor.py"}, readers


def test_a_cached_disruption_budget_keeps_no_status_and_its_status_updates_wake_no_one() -> None:
    """The disruption controller rewrites a budget's status at every pod transition;
    no controller reads it, so the cache drops it and such an update changes nothing
    kept (``kept_changed``), while a change of the spec still does."""
    pdb = {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "mo-log", "namespace": "ns", "resourceVersion": "3", "generation": 1},
        "spec": {"maxUnavailable": 1},
        "status": {"currentHealthy": 2, "disruptionsAllowed": 1},
    }
    transform = CACHE_TRANSFORMS[r.PDBS]
    cached = freeze(transform(pdb))
    assert "status" not in cached and cached["spec"] == pdb["spec"]
    moved = {**pdb, "metadata": {**pdb["metadata"], "resourceVersion": "4"}, "status": {"currentHealthy": 3}}
    assert not kept_changed(cached, freeze(transform(moved)))
    respecced = {**moved, "metadata": {**moved["metadata"], "generation": 2}, "spec": {"maxUnavailable": 2}}
    assert kept_changed(cached, freeze(transform(respecced)))


def test_no_source_reads_a_disruption_budgets_status() -> None:
    root = Path(controllers.__file__).parent.parent
    named = [
        (path.name, word)
        for folder in ("controllers", "matrixone")
        for path in (root / folder).rglob("*.py")
        for word in ("disruptionsAllowed", "currentHealthy", "desiredHealthy", "expectedPods")
        if word in path.read_text()
    ]
    assert not named, named
