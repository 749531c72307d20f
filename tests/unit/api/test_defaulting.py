"""Defaulting fills what upstream's mutating webhooks fill (``pkg/webhook/*_webhook.go``,
``utils.go``) plus the CRD schema defaults, only where fields are absent."""

from __future__ import annotations

import copy
from typing import Any

from mo_operator.api.defaulting import default
from mo_operator.api.validation import validate_create

from .conftest import example

GODEBUG = {"name": "GODEBUG", "value": "madvdontneed=1,gctrace=2"}


def test_defaulting_is_idempotent_and_leaves_its_input_alone(manifest: dict[str, Any]) -> None:
    before = copy.deepcopy(manifest)
    once = default(manifest["kind"], manifest)
    assert manifest == before
    assert default(manifest["kind"], once) == once
    assert default(manifest["kind"], once, old=once) == once
    assert validate_create(manifest["kind"], once) == []


def test_logset_defaults() -> None:
    spec = default("LogSet", example("logset"))["spec"]
    assert spec["initialConfig"] == {"logShardReplicas": 3, "logShards": 1, "dnShards": 1}
    assert spec["storeFailureTimeout"] == "30m0s"  # given, kept
    assert spec["overlay"] == {"env": [GODEBUG]}
    assert spec["pvcRetentionPolicy"] == spec["sharedStorage"]["s3"]["s3RetentionPolicy"] == "Retain"
    assert "promDiscoveryScheme" not in spec


def test_a_small_logset_has_one_log_shard_replica_and_the_default_failure_timeout() -> None:
    obj = example("logset")
    obj["spec"]["replicas"] = 1
    del obj["spec"]["storeFailureTimeout"]
    spec = default("LogSet", obj)["spec"]
    assert spec["initialConfig"]["logShardReplicas"] == 1
    assert spec["storeFailureTimeout"] == "10m0s"


def _retention(pvc: str | None, s3: str | None) -> tuple[str, str]:
    obj = example("logset")
    if pvc:
        obj["spec"]["pvcRetentionPolicy"] = pvc
    if s3:
        obj["spec"]["sharedStorage"]["s3"]["s3RetentionPolicy"] = s3
    spec = default("LogSet", obj)["spec"]
    return spec["pvcRetentionPolicy"], spec["sharedStorage"]["s3"]["s3RetentionPolicy"]


def test_the_retention_policy_matrix() -> None:
    """Upstream's bucket e2e: each policy inherits from the other; Retain when neither is set
    (upstream: Delete), so deleting a cluster keeps its volumes and data unless asked."""
    assert _retention(None, None) == ("Retain", "Retain")
    assert _retention("Delete", None) == ("Delete", "Delete")
    assert _retention(None, "Delete") == ("Delete", "Delete")
    assert _retention("Retain", None) == ("Retain", "Retain")
    assert _retention(None, "Retain") == ("Retain", "Retain")
    assert _retention("Delete", "Retain") == ("Delete", "Retain")
    obj = example("logset")
    obj["spec"]["sharedStorage"] = {"fileSystem": {"path": "/mnt/mo"}}
    spec = default("LogSet", obj)["spec"]
    assert spec["pvcRetentionPolicy"] == "Retain" and spec["sharedStorage"] == {
        "fileSystem": {"path": "/mnt/mo"}
    }


def test_cnset_defaults() -> None:
    obj = example("cnset")
    obj["spec"]["resources"] = {"requests": {"memory": "12Gi"}}
    obj["spec"]["cacheVolume"] = {"size": "10Gi"}
    obj["spec"]["scalingConfig"] = {"storeDrainEnabled": True}
    obj["spec"]["exportToPrometheus"] = True
    spec = default("CNSet", obj)["spec"]
    assert spec["serviceType"] == "ClusterIP"
    assert spec["role"] == "TP"
    assert spec["sharedStorageCache"] == {"memoryCacheSize": "6Gi", "diskCacheSize": "9Gi"}
    assert spec["scalingConfig"] == {"storeDrainEnabled": True, "storeDrainTimeout": "5m0s"}
    assert spec["updateStrategy"] == {"maxSurge": 1, "maxUnavailable": 0}
    assert spec["promDiscoveryScheme"] == "Service"
    assert spec["overlay"]["env"] == [GODEBUG]


def test_cache_sizes_follow_the_format_of_their_source() -> None:
    """Go's ``Quantity.Set`` keeps the source's format: 2G halves to 1G, 3Gi to 1536Mi."""
    obj = example("cnset")
    obj["spec"]["resources"] = {"requests": {"memory": "2G"}}
    obj["spec"]["cacheVolume"] = {"size": 1000}
    assert default("CNSet", obj)["spec"]["sharedStorageCache"] == {
        "memoryCacheSize": "1G",
        "diskCacheSize": "900",
    }
    obj["spec"]["resources"] = {"requests": {"memory": "3Gi"}}
    assert default("CNSet", obj)["spec"]["sharedStorageCache"]["memoryCacheSize"] == "1536Mi"


def test_no_memory_request_means_no_memory_cache_default() -> None:
    """Upstream's CN rule, also for TN (upstream gives a TN without a request a zero cache)."""
    for name, kind in (("cnset", "CNSet"), ("dnset", "DNSet")):
        assert "sharedStorageCache" not in default(kind, example(name))["spec"]


def test_user_values_are_never_overwritten() -> None:
    obj = example("cnset-full")
    spec = default("CNSet", obj)["spec"]
    assert spec["serviceType"] == "NodePort"
    assert spec["sharedStorageCache"] == {"memoryCacheSize": "1Gi", "diskCacheSize": "18Gi"}
    assert spec["updateStrategy"] == {"maxSurge": "25%", "maxUnavailable": 0}
    assert spec["promDiscoveryScheme"] == "Pod"
    assert spec["overlay"]["env"] == [{"name": "TZ", "value": "UTC"}, GODEBUG]
    obj["spec"]["overlay"]["env"] = [{"name": "GODEBUG", "value": "off"}]
    assert default("CNSet", obj)["spec"]["overlay"]["env"] == [{"name": "GODEBUG", "value": "off"}]


def test_cluster_defaults_reach_every_component_but_not_images() -> None:
    """Images stay derived from spec.version, so that changing the version upgrades."""
    spec = default("MatrixOneCluster", example("matrixonecluster"))["spec"]
    assert spec["operatorVersion"] == "1.3.0"
    assert spec["logService"]["initialConfig"]["logShardReplicas"] == 3
    assert spec["tn"]["sharedStorageCache"] == {"diskCacheSize": "9Gi"}
    assert spec["cnGroups"][0]["serviceType"] == "ClusterIP"
    assert "role" not in spec["cnGroups"][0]
    assert all("image" not in spec[c] for c in ("logService", "tn"))
    assert "image" not in spec["cnGroups"][0]


def test_operator_version_is_set_on_create_only() -> None:
    """An object from before operatorVersion existed stays on the legacy behaviour."""
    stored = example("matrixonecluster")
    assert (
        "operatorVersion" not in default("MatrixOneCluster", example("matrixonecluster"), old=stored)["spec"]
    )
    assert "operatorVersion" not in default("CNSet", example("cnset"))["spec"]


def test_an_update_that_leaves_out_what_create_filled_keeps_it() -> None:
    stored = default("LogSet", example("logset"))
    update = example("logset")
    update["spec"]["replicas"] = 1  # the default logShardReplicas would now be 1
    spec = default("LogSet", update, old=stored)["spec"]
    assert spec["initialConfig"]["logShardReplicas"] == 3


def test_service_args_come_from_the_operator_config() -> None:
    args = {"logService": ["-debug-http=:6060"], "cn": ["-debug-http=:6061"], "proxy": ["-p"], "dn": ["-d"]}
    assert default("LogSet", example("logset"), default_args=args)["spec"]["serviceArgs"] == [
        "-debug-http=:6060"
    ]
    assert default("ProxySet", example("proxyset"), default_args=args)["spec"]["serviceArgs"] == ["-p"]
    obj = example("cnset")
    obj["spec"]["serviceArgs"] = ["-mine"]
    assert default("CNSet", obj, default_args=args)["spec"]["serviceArgs"] == ["-mine"]
    mo = default("MatrixOneCluster", example("matrixonecluster"), default_args=args)["spec"]
    assert mo["tn"]["serviceArgs"] == ["-d"] and mo["cnGroups"][0]["serviceArgs"] == ["-debug-http=:6061"]


def test_proxy_and_webui_get_schema_defaults_only() -> None:
    obj = example("proxyset")
    del obj["spec"]["serviceType"]
    assert default("ProxySet", obj)["spec"] == {**obj["spec"], "serviceType": "ClusterIP"}
    webui = example("webui")
    assert default("WebUI", webui) == webui


def test_job_overlays_pull_if_not_present() -> None:
    obj = example("backupjob")
    obj["spec"]["overlay"] = {"env": [{"name": "A", "value": "1"}]}
    assert default("BackupJob", obj)["spec"]["overlay"]["imagePullPolicy"] == "IfNotPresent"
    assert "overlay" not in default("BackupJob", example("backupjob"))["spec"]


def test_invalid_objects_come_back_undefaulted() -> None:
    obj = example("cnset")
    obj["spec"]["replicas"] = "three"
    obj["spec"]["image"] = None
    out = default("CNSet", obj)
    assert out["spec"] == {"dnsBasedIdentity": True, "replicas": "three"}
    assert default("Pod", obj) is obj
    assert default("CNSet", "not an object") == "not an object"
