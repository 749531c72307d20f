"""Validation rules: each rejection names the field and, where upstream's webhook has
a message for it (``pkg/webhook/*.go``), says what upstream says."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from mo_operator.api.kinds import LOGSET_BOOTSTRAP_ANNOTATION
from mo_operator.api.validation import FieldError, validate_create, validate_update
from mo_operator.api.validation.errors import ROOT

from .conftest import example

Obj = dict[str, Any]


def _set(path: str, value: Any) -> Callable[[Obj], None]:
    """A mutation that sets a dotted path (list indices as numbers) to a value."""

    def mutate(obj: Obj) -> None:
        *parents, last = path.split(".")
        node: Any = obj
        for part in parents:
            node = node[int(part)] if isinstance(node, list) else node.setdefault(part, {})
        if isinstance(node, list):
            node[int(last)] = value
        else:
            node[last] = value

    return mutate


def _delete(path: str) -> Callable[[Obj], None]:
    def mutate(obj: Obj) -> None:
        *parents, last = path.split(".")
        node: Any = obj
        for part in parents:
            node = node[int(part)] if isinstance(node, list) else node[part]
        del node[last]

    return mutate


# fmt: off
CASES: list[tuple[str, Callable[[Obj], None], str | None, str | None]] = [
    # The schema: types, enums, bounds, required and unknown fields, keyed lists.
    ("logset", _set("spec.replicas", "3"), "spec.replicas", "must be of type integer"),
    ("logset", _set("spec.replicas", -1), "spec.replicas", "must be greater than or equal to 0"),
    ("logset", _delete("spec.volume"), "spec.volume", "Required value"),
    ("logset", _set("spec.volumeSize", "1Gi"), "spec.volumeSize", 'unknown field "volumeSize"'),
    ("logset", _set("spec.failedPodStrategy", "Keep"), "spec.failedPodStrategy",
     'Unsupported value: "Keep": supported values: "Orphan", "Delete"'),
    ("logset", _set("spec.volume.size", "10GB"), "spec.volume.size",
     "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"),
    ("logset", _set("spec.storeFailureTimeout", "10 minutes"), "spec.storeFailureTimeout",
     'time: invalid duration "10 minutes"'),
    ("logset", _set("spec.config", "[log\nlevel="), "spec.config", "must be valid TOML"),
    ("cnset-full", _set("spec.resources.limits.cpu", "two"), "spec.resources.limits[cpu]",
     "quantities must match the regular expression"),
    ("matrixonecluster", _set("spec.cnGroups", [{"name": "tp", "replicas": 1}, {"name": "tp", "replicas": 2}]),
     "spec.cnGroups[1]", 'Duplicate value: {"name":"tp"}'),
    ("cnset", _set("spec.serviceType", "ExternalName"), "spec.serviceType",
     'Unsupported value: "ExternalName": supported values: "ClusterIP", "NodePort", "LoadBalancer"'),
    # PodDisruptionBudgets: one bound, a count or a percentage, as the API server takes them.
    ("logset", _set("spec.podDisruptionBudget", {"maxUnavailable": 1, "minAvailable": 2}),
     "spec.podDisruptionBudget.minAvailable", "minAvailable and maxUnavailable cannot be both set"),
    ("cnset", _set("spec.podDisruptionBudget", {"maxUnavailable": "150%"}),
     "spec.podDisruptionBudget.maxUnavailable", 'Invalid value: "150%": must not be greater than 100%'),
    ("matrixonecluster", _set("spec.cnGroups.0.podDisruptionBudget", {"minAvailable": -1}),
     "spec.cnGroups[0].podDisruptionBudget.minAvailable", "must be greater than or equal to 0"),
    # Pod sets: image, resources, node selector, cluster domain, Prometheus, GOMEMLIMIT.
    ("cnset", _delete("spec.image"), "spec.image", "image must be set"),
    ("cnset-full", _set("spec.resources.requests.memory", "8Gi"), "spec.resources.requests[memory]",
     "must be less than or equal to memory limit of 4Gi"),
    ("cnset-full", _set("spec.resources.requests.gpu", 1), "spec.resources.requests[gpu]",
     'Invalid value: "gpu": must be a standard resource for containers'),
    ("cnset-full", _set("spec.resources.limits.cpu", "-1"), "spec.resources.limits[cpu]",
     "must be greater than or equal to 0"),
    ("cnset", _set("spec.nodeSelector", {"zone": "a b"}), "spec.nodeSelector", 'Invalid value: "a b": a valid label'),
    ("cnset", _set("spec.clusterDomain", "local"), "spec.clusterDomain",
     'Invalid value: "local": should be a domain with at least two segments separated by dots'),
    ("cnset", _set("spec.exportToPrometheus", True), None, None),  # defaulted to the Service scheme
    ("cnset-full", _set("spec.promDiscoveryScheme", "Node"), "spec.promDiscoveryScheme",
     'Invalid value: "Node": invalid PromDiscoveryScheme, must be Pod or Service'),
    ("cnset", _set("spec.memoryLimitPercent", 0), "spec.memoryLimitPercent",
     "memoryLimitPercent value must be in interval (0, 100]"),
    ("logset", _set("spec.memoryLimitPercent", 101), "spec.memoryLimitPercent",
     "memoryLimitPercent value must be in interval (0, 100]"),
    ("cnset", _set("spec.overlay", {"env": [{"value": "x"}]}), "spec.overlay.env[0].name", "Required value"),
    ("cnset", _set("spec.overlay", {"terminationGracePeriodSeconds": -1}), "spec.overlay.terminationGracePeriodSeconds",
     "must be greater than 0"),
    ("cnset", _set("spec.overlay", {"serviceAccountName": "Bad_Name"}), "spec.overlay.serviceAccountName",
     'Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain'),
    # Volumes and caches.
    ("logset", _set("spec.volume.size", 0), "spec.volume.size", "size must not be zero"),
    ("cnset-full", _set("spec.cacheVolume.size", "0Gi"), "spec.cacheVolume.size", "size must not be zero"),
    ("cnset", _set("spec.sharedStorageCache", {"diskCacheSize": "1Gi"}), "spec.sharedStorageCache.diskCacheSize",
     "diskCacheSize requires cacheVolume to be set"),
    ("cnset-full", _set("spec.sharedStorageCache.diskCacheSize", "30Gi"), "spec.sharedStorageCache.diskCacheSize",
     "diskCacheSize must not be larger than cacheVolume.size"),
    # Shared storage: exactly one provider, complete.
    ("logset", _set("spec.sharedStorage", {}), "spec.sharedStorage", "no shared storage provider configured"),
    ("logset", _set("spec.sharedStorage.fileSystem", {"path": "/mnt/mo"}), "spec.sharedStorage",
     "more than 1 storage provider configured"),
    ("logset", _set("spec.sharedStorage.s3.path", ""), "spec.sharedStorage.s3.path", "path must be set for S3 storage"),
    ("logset", _set("spec.sharedStorage", {"fileSystem": {"path": ""}}), "spec.sharedStorage.fileSystem.path",
     "path must be set for file-system storage"),
    ("logset", _delete("spec.sharedStorage.s3.endpoint"), "spec.sharedStorage.s3.endpoint",
     "endpoint must be set for minio storage"),
    # The log service keeps a quorum.
    ("logset", _set("spec.initialConfig", {"logShardReplicas": 5}), "spec.initialConfig.logShardReplicas",
     "logShardReplicas must not larger then logservice replicas"),
    ("logset", _set("spec.initialConfig", {"logShardReplicas": 0}), "spec.initialConfig.logShardReplicas",
     "must be greater than or equal to 1"),
    ("logset", _set("spec.storeFailureTimeout", "-5m"), "spec.storeFailureTimeout", "must not be negative"),
    # CN sets.
    ("cnset", _set("spec.nodePort", 30001), "spec.nodePort", "cannot set node port when serviceType is ClusterIP"),
    ("cnset", _set("spec.cnLabels", [{"key": "", "values": ["a"]}]), "spec.cnLabels[0].key", "label key cannot be empty"),
    ("cnset", _set("spec.cnLabels", [{"key": "k"}]), "spec.cnLabels[0].values", "label values cannot be empty"),
    ("cnset", _set("spec.cnLabels", [{"key": "k", "values": ["a", ""]}]), "spec.cnLabels[0].values[1]",
     "label value cannot be empty string"),
    ("cnset-full", _set("spec.updateStrategy.maxSurge", "lots"), "spec.updateStrategy.maxSurge",
     'Invalid value: "lots": a valid percent string must be a numeric string followed by an ending \'%\''),
    ("cnset-full", _set("spec.updateStrategy.maxUnavailable", -1), "spec.updateStrategy.maxUnavailable",
     "must be greater than or equal to 0"),
    # TN sets.
    ("tnset", _set("spec.config", "[tn]\n[dn]\n"), "spec.config", "[tn] and [dn] cannot be set at the same time"),
    # Dependencies.
    ("dnset", _delete("deps"), "deps", "one of deps.logSet or deps.externalLogSet must be set"),
    ("cnset", _set("deps.externalLogSet", {"haKeeperEndpoint": "x:1"}), "deps",
     "only one of deps.logSet or deps.externalLogSet may be set"),
    ("proxyset", _set("deps.logSet.metadata", {}), "deps.logSet.metadata.name", "Required value"),
    # Clusters.
    ("matrixonecluster", _set("metadata.name", "a" * 47), "metadata.name", "must be no more than 46 characters"),
    ("matrixonecluster", _set("metadata.name", "1mo"), "metadata.name",
     'Invalid value: "1mo": a DNS-1035 label must consist of lower case alphanumeric characters'),
    ("matrixonecluster", _delete("spec.tn"), "spec.tn", ".spec.tn must be set"),
    ("matrixonecluster", _set("spec.dn", {"replicas": 1}), "spec.dn",
     "legacy component .spec.dn cannot be set when .spec.tn is set"),
    ("matrixonecluster", _set("spec.version", ""), "spec.version", "version must be set"),
    ("matrixonecluster", _set("spec.cnGroups.0.name", "a_b"), "spec.cnGroups[0].name",
     'Invalid value: "a_b": a lowercase RFC 1123 subdomain'),
    ("matrixonecluster", _set("spec.tp", {"replicas": 1}), "spec.cnGroups[0].name", "name must be unique"),
    ("matrixonecluster", _set("spec.logService.volume.size", 0), "spec.logService.volume.size",
     "size must not be zero"),
    ("matrixonecluster", _set("spec.cnGroups.0.nodePort", 30001), "spec.cnGroups[0].nodePort",
     "cannot set node port when serviceType is ClusterIP"),
    # Jobs, backups and pools.
    ("backupjob", _set("spec.source", {}), "spec.source", "one of clusterRef or cnSetRef must be set"),
    ("backupjob", _set("spec.target", {"fileSystem": {"path": "/b"}}), "spec.target.fileSystem",
     "backups can only be written to s3"),
    ("restorejob", _delete("spec.backupName"), "spec.backupName", "backupName must be set unless externalSource is set"),
    ("backupschedule", _set("spec.schedule", "0 3 * *"), "spec.schedule",
     'Invalid value: "0 3 * *": must have 5 fields (minute hour day-of-month month day-of-week), not 4'),
    ("backupschedule", _set("spec.schedule", "61 * * * *"), "spec.schedule",
     'Invalid value: "61 * * * *": not a cron schedule'),
    ("backupschedule", _set("spec.schedule", "@every 1h"), "spec.schedule",
     'Invalid value: "@every 1h": unknown macro \'@every\''),
    ("backupschedule", _set("spec.schedule", "CRON_TZ=UTC 0 3 * * *"), "spec.schedule",
     'Invalid value: "CRON_TZ=UTC 0 3 * * *": cannot name a time zone (TZ= or CRON_TZ=): set spec.timeZone instead'),
    ("backupschedule", _set("spec.timeZone", "Mars/Olympus"), "spec.timeZone",
     'Invalid value: "Mars/Olympus": unknown time zone \'Mars/Olympus\''),
    ("backupschedule", _set("spec.concurrencyPolicy", "Queue"), "spec.concurrencyPolicy", "Unsupported value"),
    ("backupschedule", _set("spec.retention.count", 0), "spec.retention.count",
     "must be greater than or equal to 1"),
    ("backupschedule", _set("spec.template.source", {}), "spec.template.source",
     "one of clusterRef or cnSetRef must be set"),
    ("backup", _set("meta.atTime", "yesterday"), "meta.atTime", "must be an RFC 3339 date-time"),
    ("cnclaimset", _set("spec.template.metadata.labels", {"app": "other"}), "spec.template.metadata.labels",
     "`selector` does not match template `labels`"),
    ("cnpool", _set("spec.strategy.scaleStrategy.maxPods", 1), "spec.strategy.scaleStrategy.maxPods",
     "maxPods must not be less than maxIdle"),
    ("cnpool", _delete("spec.template.image"), "spec.template.image", "image must be set"),
    ("cnclaim", _set("spec.cnLabels", [{"key": "role"}]), "spec.cnLabels[0].values", "label values cannot be empty"),
    # Limits (docs/webhooks.md): what one object may make the operator do, and what
    # Kubernetes or MatrixOne would refuse only later.
    ("matrixonecluster", _set("spec.cnGroups.0.replicas", 100_000), "spec.cnGroups[0].replicas",
     "must be less than or equal to 1000"),
    ("matrixonecluster", _set("spec.logService.replicas", 100_000), "spec.logService.replicas",
     "must be less than or equal to 1000"),
    ("cnclaimset", _set("spec.replicas", 1001), "spec.replicas", "must be less than or equal to 1000"),
    ("cnpool", _set("spec.strategy.scaleStrategy.maxIdle", 2**31 - 1), "spec.strategy.scaleStrategy.maxIdle",
     "must be less than or equal to 1000"),
    ("logset", _set("spec.initialConfig", {"logShardReplicas": 2**63 - 1}), "spec.initialConfig.logShardReplicas",
     "must be less than or equal to 1000"),
    ("matrixonecluster", _set("spec.version", "9" * 5000), "spec.version", "Too long: may not be more than 128"),
    ("matrixonecluster", _set("spec.version", "1.2.3+build"), "spec.version",
     'Invalid value: "1.2.3+build": must be an image tag'),
    ("matrixonecluster", _set("spec.imageRepository", "Matrixorigin/MatrixOne"), "spec.imageRepository",
     'Invalid value: "Matrixorigin/MatrixOne": repository name must be lowercase'),
    ("matrixonecluster", _set("spec.imageRepository", "not a repo!"), "spec.imageRepository",
     'Invalid value: "not a repo!": must be a repository'),
    ("cnset", _set("spec.image", "x" * 65536), "spec.image", "Too long: may not be more than 512"),
    ("cnset", _set("spec.image", "matrixorigin/matrixone::2.0"), "spec.image", "Invalid value"),
    ("cnset-full", _set("spec.pythonUdfSidecar.image", "a b"), "spec.pythonUdfSidecar.image", "Invalid value"),
    ("logset", _set("spec.sharedStorage.s3.path", "b/" + "p" * 65536), "spec.sharedStorage.s3.path",
     "Too long: may not be more than 1024"),
    ("logset", _set("spec.sharedStorage.s3.secretRef", {"name": "Bad_Name"}), "spec.sharedStorage.s3.secretRef.name",
     'Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain'),
    ("logset", _set("spec.volume.size", "2Pi"), "spec.volume.size", "must be less than or equal to 1Pi"),
    ("cnset-full", _set("spec.cacheVolume.size", "1Ei"), "spec.cacheVolume.size", "must be less than or equal to 1Pi"),
    ("logset", _set("spec.volume.storageClassName", "fast disks"), "spec.volume.storageClassName",
     'Invalid value: "fast disks": a lowercase RFC 1123 subdomain'),
    ("logset", _set("spec.config", "a = 1\n" + "#" * (256 * 1024)), "spec.config", "Too long"),
    ("cnset", _set("spec.topologySpread", ["not a key!"]), "spec.topologySpread[0]", 'Invalid value: "not a key!"'),
    ("cnset", _set("spec.serviceAnnotations", {"not a key!": "v"}), "spec.serviceAnnotations",
     'Invalid value: "not a key!"'),
    ("logset", _set("spec.initialConfig", {"logShards": 1, "dnShards": 2}), "spec.initialConfig.dnShards",
     "dnShards must equal logShards"),
    ("logset", _set("spec.initialConfig", {"logShards": 2, "dnShards": 2, "logShardReplicas": 1}), None, None),
    ("matrixonecluster", _set("spec.logService.initialConfig", {"logShards": 2, "dnShards": 2}), None, None),
    ("matrixonecluster", lambda o: (_set("spec.version", "2.0.1")(o),
                                    _set("spec.logService.initialConfig", {"logShards": 2, "dnShards": 2})(o)),
     "spec.logService.initialConfig.dnShards", "dnShards must be 1: MatrixOne 2.0.1 runs exactly one TN shard"),
]
# fmt: on


@pytest.mark.parametrize(("name", "mutate", "path", "message"), CASES, ids=[f"{c[0]}:{c[2]}" for c in CASES])
def test_rejection_names_the_field_with_upstreams_message(
    name: str, mutate: Callable[[Obj], None], path: str | None, message: str | None
) -> None:
    obj = example(name)
    mutate(obj)
    errors = validate_create(obj["kind"], obj)
    if path is None:
        assert errors == []
        return
    assert any(e.path == path and e.message.startswith(message or "") for e in errors), errors


def test_every_example_is_valid(manifest: Obj) -> None:
    assert validate_create(manifest["kind"], manifest) == []


def test_nulls_count_as_absent_as_the_api_server_prunes_them() -> None:
    """CRD "Defaulting and Nullable": a null non-nullable field is dropped
    (https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definitions/#defaulting-and-nullable)."""
    obj = example("matrixonecluster")
    obj["spec"]["version"] = None  # what an unfilled "version: #TAG" placeholder gives
    obj["spec"]["proxy"] = None
    assert validate_create("MatrixOneCluster", obj) == [FieldError("spec.version", "Required value")]


def test_the_object_must_be_of_the_kind_it_is_validated_as() -> None:
    assert validate_create("DNSet", example("tnset")) == [
        FieldError("kind", 'Invalid value: "TNSet": must be "DNSet"')
    ]
    obj = example("cnset")
    obj["apiVersion"] = "core.matrixorigin.io/v1"
    assert [e.path for e in validate_create("CNSet", obj)] == ["apiVersion"]


def test_inputs_that_are_not_objects_are_answered() -> None:
    assert validate_create("CNSet", [1, 2]) == [FieldError(ROOT, "must be of type object")]
    assert validate_create("Pod", {})[0].path == "kind"
    deep: Any = "x"
    for _ in range(150):
        deep = {"a": deep}
    (err,) = validate_create("CNSet", {"spec": deep})
    assert err.path.startswith("spec.a.a.a") and "nested" in err.message


def _bootstrapped(obj: Obj) -> Obj:
    """``obj`` as stored once its HAKeeper bootstrap was decided (LogSet) or done (cluster)."""
    if obj["kind"] == "LogSet":
        obj["metadata"].setdefault("annotations", {})[LOGSET_BOOTSTRAP_ANNOTATION] = "[]"
    if obj["kind"] == "MatrixOneCluster":
        obj["status"] = {"logService": {"discovery": {"address": "mo-log-discovery.ns.svc", "port": 32001}}}
    return obj


def _updated(name: str, mutate: Callable[[Obj], None]) -> tuple[Obj, Obj]:
    old = _bootstrapped(example(name))
    new = example(name)
    mutate(new)
    return old, new


@pytest.mark.parametrize(
    ("name", "path"),
    [("logset", "spec.initialConfig"), ("matrixonecluster", "spec.logService.initialConfig")],
)
def test_initial_config_is_immutable_from_creation_as_upstreams(name: str, path: str) -> None:
    """Upstream's ValidateSpecUpdate refuses any change once the object exists (HAKeeper
    bootstraps from it once; MatrixOne cannot apply a change): also before the operator
    recorded the bootstrap, and on a cluster whose status does not show it yet."""
    for old in (example(name), _bootstrapped(example(name))):
        new = example(name)
        _set(path, {"logShardReplicas": 1})(new)
        assert FieldError(path, "initialConfig is immutable") in validate_update(new["kind"], old, new)


@pytest.mark.parametrize(
    ("name", "path"),
    [("logset", "spec.initialConfig"), ("matrixonecluster", "spec.logService.initialConfig")],
)
def test_an_initial_config_the_rules_refuse_may_be_corrected(name: str, path: str) -> None:
    """A LogSet made with a bad initialConfig (webhook off) must stay fixable: the
    reconcilers refused it too, so nothing was built from it."""
    old, new = example(name), example(name)
    _set(path, {"logShardReplicas": 5})(old)
    _set(path, {"logShardReplicas": 1})(new)
    assert validate_update(new["kind"], old, new) == []
    _set(path, {"logShards": 1, "dnShards": 2})(old)
    assert validate_update(new["kind"], old, new) == []


# fmt: off
UPDATE_CASES: list[tuple[str, Callable[[Obj], None], str, str]] = [
    ("logset", _set("spec.initialConfig", {"logShards": 2}), "spec.initialConfig", "initialConfig is immutable"),
    ("logset", _set("spec.sharedStorage.s3.path", "other"), "spec.sharedStorage.s3", "sharedStorage.s3 is immutable"),
    ("logset", _set("spec.volume.size", "5Gi"), "spec.volume.size", "volume size cannot be decreased"),
    ("logset", _set("spec.volume.storageClassName", "fast"), "spec.volume.storageClassName",
     "storageClassName is immutable"),
    ("logset", _set("spec.operatorVersion", "1.1.0"), "spec.operatorVersion",
     "new operatorVersion must be greater than or equal to the oldVersion"),
    ("cnset-full", _set("spec.cacheVolume.size", "10Gi"), "spec.cacheVolume.size", "volume size cannot be decreased"),
    ("matrixonecluster", _set("spec.logService.volume.size", "1Gi"), "spec.logService.volume.size",
     "volume size cannot be decreased"),
    ("matrixonecluster", _set("spec.logService.initialConfig", {"logShardReplicas": 1}),
     "spec.logService.initialConfig", "initialConfig is immutable"),
    ("matrixonecluster", _set("spec.cnGroups.0.cacheVolume.size", "1Gi"), "spec.cnGroups[0].cacheVolume.size",
     "volume size cannot be decreased"),
    ("matrixonecluster-restore", _set("spec.restoreFrom", "other"), "spec.restoreFrom", "restoreFrom is immutable"),
    ("matrixonecluster", _set("spec.operatorVersion", "1.0.0"), "spec.operatorVersion",
     "new operatorVersion must be greater than or equal to the oldVersion"),
    ("logset", _set("spec.replicas", 2), "spec.initialConfig.logShardReplicas",
     "logShardReplicas must not larger then logservice replicas"),
    ("logset", _set("spec.sharedStorage", {"fileSystem": {"path": "/mnt"}}), "spec.sharedStorage.s3",
     "sharedStorage.s3 is immutable"),
]
# fmt: on


@pytest.mark.parametrize(
    ("name", "mutate", "path", "message"), UPDATE_CASES, ids=[f"{c[0]}:{c[2]}" for c in UPDATE_CASES]
)
def test_update_rules(name: str, mutate: Callable[[Obj], None], path: str, message: str) -> None:
    old, new = _updated(name, mutate)
    errors = validate_update(new["kind"], old, new)
    assert FieldError(path, message) in errors, errors


@pytest.mark.parametrize(
    ("name", "mutate"),
    [
        ("logset", _set("spec.replicas", 5)),  # scale out
        ("logset", _set("spec.replicas", 0)),  # scale to zero (upstream allows it)
        ("logset", _set("spec.volume.size", "20Gi")),  # grow the volume
        ("logset", _set("spec.sharedStorage.s3.s3RetentionPolicy", "Retain")),  # a policy, not a location
        ("logset", _set("spec.operatorVersion", "1.3.0")),  # from the legacy 1.2.0
        ("cnset", _set("spec.image", "matrixorigin/matrixone:1.2.0")),  # upgrade
        ("matrixonecluster", _set("spec.version", "1.1.0")),  # MO versions may go back; upstream allows it
        ("matrixonecluster-restore", _delete("spec.restoreFrom")),  # cleaning up after the restore
    ],
)
def test_allowed_updates(name: str, mutate: Callable[[Obj], None]) -> None:
    old, new = _updated(name, mutate)
    assert validate_update(new["kind"], old, new) == []


def test_the_operator_version_a_cluster_got_on_create_may_not_go_back() -> None:
    """Leaving it out keeps it (re-applying the original manifest with server-side
    apply drops what the webhook added); naming an older one is refused."""
    old = example("matrixonecluster")
    old["spec"]["operatorVersion"] = "1.3.0"
    assert validate_update("MatrixOneCluster", old, example("matrixonecluster")) == []
    older = example("matrixonecluster")
    older["spec"]["operatorVersion"] = "1.2.0"
    assert validate_update("MatrixOneCluster", old, older) == [
        FieldError(
            "spec.operatorVersion", "new operatorVersion must be greater than or equal to the oldVersion"
        )
    ]


def test_a_problem_the_stored_object_already_has_does_not_block_updates() -> None:
    """Like CRD validation ratcheting: objects stored before a rule existed stay editable."""
    old = example("cnset")
    old["spec"]["clusterDomain"] = "not_a_domain"
    new = example("cnset")
    new["spec"]["clusterDomain"] = "not_a_domain"
    new["spec"]["replicas"] = 3
    assert validate_create("CNSet", new) != []
    assert validate_update("CNSet", old, new) == []
    new["metadata"]["finalizers"] = []
    old["spec"]["nodePort"] = 1
    assert validate_update("CNSet", old, new) == []


def test_a_change_of_metadata_alone_is_never_refused() -> None:
    old = example("logset")
    old["spec"]["volume"]["size"] = 0  # invalid, stored while the webhook was off
    new = example("logset")
    new["spec"]["volume"]["size"] = 0
    new["metadata"]["finalizers"] = ["matrixorigin.io/logset"]
    assert validate_update("LogSet", old, new) == []


def test_claims_keep_their_pod_unless_migrated() -> None:
    """Upstream's (unregistered) CNClaim validator: "podName is immutable"; its
    migration (cnclaim/migrate.go) changes podName with sourcePod naming the old pod."""
    old = example("cnclaim")
    old["spec"]["podName"] = "mo-cn-0"
    new = example("cnclaim")
    new["spec"]["podName"] = "mo-cn-1"
    [err] = validate_update("CNClaim", old, new)
    assert err.path == "spec.podName" and "podName is immutable" in err.message and "mo-cn-0" in err.message
    fresh = example("cnclaim")
    assert validate_update("CNClaim", fresh, old) == []

    migrated = copy.deepcopy(new)
    migrated["spec"]["sourcePod"] = {"podName": "mo-cn-0", "nodeName": "n1"}
    assert validate_update("CNClaim", old, migrated) == []
    redirected = copy.deepcopy(migrated)
    redirected["spec"]["podName"] = "mo-cn-2"
    assert validate_update("CNClaim", migrated, redirected) == [], "a migration may be sent elsewhere"
    elsewhere = copy.deepcopy(migrated)
    elsewhere["spec"]["sourcePod"] = {"podName": "mo-cn-7"}
    assert [e.path for e in validate_update("CNClaim", old, elsewhere)] == ["spec.podName"]
    cleared = copy.deepcopy(old)
    del cleared["spec"]["podName"]
    assert [e.path for e in validate_update("CNClaim", old, cleared)] == ["spec.podName"]
    done = copy.deepcopy(new)  # the controller clears sourcePod once the migration is over
    assert validate_update("CNClaim", migrated, done) == []
