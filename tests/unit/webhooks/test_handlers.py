"""The handlers, AdmissionReview in and response out over the real webhook server:
defaulting answers a JSON patch that is idempotent, validation denies with
messages naming the fields, and the update rules (immutable fields, no volume
shrink, no operatorVersion downgrade) hold on UPDATE with an oldObject."""

from __future__ import annotations

import base64
import copy
import json
from typing import Any

import pytest
from api.conftest import EXAMPLES, example

from mo_operator.api.defaulting import LATEST_OPERATOR_VERSION, default
from mo_operator.api.kinds import LOGSET_BOOTSTRAP_ANNOTATION
from mo_operator.api.validation import FieldError
from mo_operator.kube.webhook.server import AdmissionRequest
from mo_operator.webhooks import DEFAULTED_KINDS, VALIDATED_KINDS, Validator, invalid_message, route
from mo_operator.webhooks.validator import MAX_ERROR_LENGTH, MAX_ERRORS

from .conftest import DEFAULT_ARGS, Served, review

Obj = dict[str, Any]

DEFAULTED_EXAMPLES = sorted(n for n, o in EXAMPLES.items() if o["kind"] in DEFAULTED_KINDS)


def test_every_kind_is_served_at_upstreams_paths(served: Served) -> None:
    paths = set(served.server.paths)
    assert len(paths) == len(served.server.paths) == len(DEFAULTED_KINDS) + len(VALIDATED_KINDS)
    for kind in VALIDATED_KINDS:
        assert f"/validate-core-matrixorigin-io-v1alpha1-{kind.lower()}" in paths
    for kind in DEFAULTED_KINDS:
        assert f"/mutate-core-matrixorigin-io-v1alpha1-{kind.lower()}" in paths


# ------------------------------------------------------------------ defaulting


@pytest.mark.parametrize("name", DEFAULTED_EXAMPLES)
async def test_defaulting_patches_to_the_defaulted_object_and_is_idempotent(
    served: Served, name: str
) -> None:
    obj = example(name)
    kind = obj["kind"]
    response, once = await served.mutate(kind, "CREATE", obj)
    assert response["allowed"] is True and "status" not in response
    assert once == default(kind, obj, default_args=DEFAULT_ARGS)
    assert once != obj, "every defaulted kind fills something into every example"
    response, twice = await served.mutate(kind, "CREATE", once)
    assert "patch" not in response and twice == once
    # An update that sends the stored object back changes nothing either.
    response, _ = await served.mutate(kind, "UPDATE", once, once)
    assert "patch" not in response


async def test_upstream_defaults_reach_the_patch(served: Served) -> None:
    _, logset = await served.mutate("LogSet", "CREATE", example("logset"))
    spec = logset["spec"]
    assert spec["initialConfig"] == {"logShardReplicas": 3, "logShards": 1, "dnShards": 1}
    assert spec["pvcRetentionPolicy"] == spec["sharedStorage"]["s3"]["s3RetentionPolicy"] == "Retain"
    assert spec["overlay"]["env"] == [{"name": "GODEBUG", "value": "madvdontneed=1,gctrace=2"}]
    assert spec["serviceArgs"] == DEFAULT_ARGS["logService"]
    _, cnset = await served.mutate("CNSet", "CREATE", example("cnset"))
    assert cnset["spec"]["serviceType"] == "ClusterIP" and cnset["spec"]["role"] == "TP"
    assert cnset["spec"]["updateStrategy"] == {"maxSurge": 1, "maxUnavailable": 0}
    _, mo = await served.mutate("MatrixOneCluster", "CREATE", example("matrixonecluster"))
    assert mo["spec"]["operatorVersion"] == LATEST_OPERATOR_VERSION


async def test_an_update_keeps_what_create_set_once(served: Served) -> None:
    """Server-side apply of the original manifest drops the fields the webhook added;
    operatorVersion (set on create only) and the immutable initialConfig must come back
    from the stored object, not from today's defaults."""
    stored = default("MatrixOneCluster", example("matrixonecluster"))
    stored["spec"]["operatorVersion"] = "1.3.5"
    reapplied = example("matrixonecluster")
    reapplied["spec"]["logService"]["replicas"] = 1  # the default would now be 1 log shard replica
    _, updated = await served.mutate("MatrixOneCluster", "UPDATE", reapplied, stored)
    assert updated["spec"]["operatorVersion"] == "1.3.5"
    assert updated["spec"]["logService"]["initialConfig"]["logShardReplicas"] == 3
    # Only a create gets the newest operatorVersion.
    legacy = example("matrixonecluster")
    _, updated = await served.mutate("MatrixOneCluster", "UPDATE", legacy, copy.deepcopy(legacy))
    assert "operatorVersion" not in updated["spec"]


async def test_defaulting_leaves_metadata_alone_and_never_denies(served: Served) -> None:
    obj = example("cnset")
    obj["metadata"] |= {"creationTimestamp": None, "managedFields": [{"manager": "kubectl", "fieldsV1": {}}]}
    response, _ = await served.mutate("CNSet", "CREATE", obj)
    ops = json.loads(base64.b64decode(response["patch"]))
    assert ops and not [op for op in ops if op["path"].startswith("/metadata")]
    broken = example("cnset")
    broken["spec"]["replicas"] = "three"
    response, patched = await served.mutate("CNSet", "CREATE", broken)
    assert response["allowed"] is True and patched == broken


# ------------------------------------------------------------------ validation


@pytest.mark.parametrize("name", sorted(EXAMPLES))
async def test_every_example_is_admitted_after_defaulting(served: Served, name: str) -> None:
    obj = example(name)
    kind = obj["kind"]
    if kind in DEFAULTED_KINDS:
        _, obj = await served.mutate(kind, "CREATE", obj)
    response = await served.validate(kind, "CREATE", obj)
    assert response["allowed"] is True, response
    response = await served.validate(kind, "UPDATE", obj, obj)
    assert response["allowed"] is True, response


async def _denied(served: Served, kind: str, operation: str, obj: Obj, old: Obj | None = None) -> str:
    response = await served.validate(kind, operation, obj, old)
    assert response["allowed"] is False
    status = response["status"]
    assert status["code"] == 422 and status["reason"] == "Invalid"
    assert "details" not in status, "causes would make kubectl drop the webhook's name from its output"
    message: str = status["message"]
    return message


async def test_a_denial_names_the_object_and_the_field(served: Served) -> None:
    obj = default("LogSet", example("logset"))
    obj["spec"]["volume"]["size"] = "0"
    message = await _denied(served, "LogSet", "CREATE", obj)
    assert message == 'LogSet.core.matrixorigin.io "mo" is invalid: spec.volume.size: size must not be zero'


async def test_several_errors_are_listed_as_kubernetes_aggregates_them(served: Served) -> None:
    obj = example("matrixonecluster")
    obj["metadata"]["name"] = "m" * 47
    del obj["spec"]["tn"]
    obj["spec"]["cnGroups"].append({**obj["spec"]["cnGroups"][0], "name": "Bad_Name"})
    message = await _denied(served, "MatrixOneCluster", "CREATE", obj)
    prefix = f'MatrixOneCluster.core.matrixorigin.io "{"m" * 47}" is invalid: ['
    assert message.startswith(prefix) and message.endswith("]")
    errors = message[len(prefix) : -1]
    assert errors.startswith("metadata.name: must be no more than 46 characters, ")
    assert "spec.tn: .spec.tn must be set" in errors
    assert 'spec.cnGroups[1].name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain' in errors


@pytest.mark.parametrize(
    ("name", "change", "expected"),
    [
        ("cnset", lambda o: o["spec"].update(nodePort=30001), "spec.nodePort: cannot set node port when serviceType is ClusterIP"),
        ("cnset", lambda o: o["spec"].update(cnLabels=[{"key": "", "values": ["a"]}]), "spec.cnLabels[0].key: label key cannot be empty"),
        ("cnset", lambda o: o.update(deps={}), "deps: one of deps.logSet or deps.externalLogSet must be set"),
        ("dnset", lambda o: o["spec"].update(config="[tn]\n[dn]\n"), "spec.config: [tn] and [dn] cannot be set at the same time"),
        ("dnset", lambda o: o["spec"].update(memoryLimitPercent=101), "spec.memoryLimitPercent: memoryLimitPercent value must be in interval (0, 100]"),
        ("logset", lambda o: o["spec"]["sharedStorage"].update(fileSystem={"path": "/mnt"}), "spec.sharedStorage: more than 1 storage provider configured"),
        ("logset", lambda o: o["spec"]["initialConfig"].update(logShardReplicas=5), "spec.initialConfig.logShardReplicas: logShardReplicas must not larger then logservice replicas"),
        ("matrixonecluster", lambda o: o["spec"].update(version=""), "spec.version: version must be set"),
        ("matrixonecluster", lambda o: o["spec"].update(dn=o["spec"]["tn"]), "spec.dn: legacy component .spec.dn cannot be set when .spec.tn is set"),
        ("cnclaimset", lambda o: o["spec"]["selector"].update(matchLabels={"app": "other"}), "spec.template.metadata.labels: `selector` does not match template `labels`"),
        ("backup", lambda o: o["meta"].update(location={}), "meta.location: no shared storage provider configured"),
    ],
)  # fmt: skip
async def test_upstreams_rejections_with_upstreams_messages(
    served: Served, name: str, change: Any, expected: str
) -> None:
    obj = example(name)
    kind = obj["kind"]
    obj = default(kind, obj)
    change(obj)
    message = await _denied(served, kind, "CREATE", obj)
    assert message.startswith(f'{kind}.core.matrixorigin.io "{obj["metadata"]["name"]}" is invalid: ')
    assert expected in message, message


# ---------------------------------------------------------------- update rules


def _logset() -> Obj:
    """A stored LogSet whose HAKeeper bootstrap was decided (its initialConfig is fixed)."""
    obj: Obj = default("LogSet", example("logset"))
    obj["spec"]["volume"]["storageClassName"] = "standard"
    obj["metadata"].setdefault("annotations", {})[LOGSET_BOOTSTRAP_ANNOTATION] = "[]"
    return obj


def _running_cluster() -> Obj:
    """A stored cluster whose log service bootstrapped (its initialConfig is fixed)."""
    obj: Obj = default("MatrixOneCluster", example("matrixonecluster"))
    obj["status"] = {"logService": {"discovery": {"address": "mo-log-discovery.ns.svc", "port": 32001}}}
    return obj


@pytest.mark.parametrize(
    ("kind", "old", "change", "expected"),
    [
        ("LogSet", _logset, lambda s: s["volume"].update(size="5Gi"), "spec.volume.size: volume size cannot be decreased"),
        ("LogSet", _logset, lambda s: s["volume"].update(storageClassName="fast"), "spec.volume.storageClassName: storageClassName is immutable"),
        ("LogSet", _logset, lambda s: s["initialConfig"].update(logShardReplicas=1), "spec.initialConfig: initialConfig is immutable"),
        ("LogSet", _logset, lambda s: s["sharedStorage"]["s3"].update(path="elsewhere"), "spec.sharedStorage.s3: sharedStorage.s3 is immutable"),
        ("CNSet", lambda: default("CNSet", example("cnset-full")), lambda s: s["cacheVolume"].update(size="19Gi"), "spec.cacheVolume.size: volume size cannot be decreased"),
        ("CNSet", lambda: default("CNSet", example("cnset-full")) | {"spec": {**example("cnset-full")["spec"], "operatorVersion": "1.3.0"}}, lambda s: s.update(operatorVersion="1.2.0"), "spec.operatorVersion: new operatorVersion must be greater than or equal to the oldVersion"),
        ("DNSet", lambda: default("DNSet", example("dnset") | {"spec": {**example("dnset")["spec"], "cacheVolume": {"size": "10Gi"}}}), lambda s: s["cacheVolume"].update(size="9500Mi"), "spec.cacheVolume.size: volume size cannot be decreased"),
        ("MatrixOneCluster", lambda: default("MatrixOneCluster", example("matrixonecluster")), lambda s: s.update(operatorVersion="1.2.0"), "spec.operatorVersion: new operatorVersion must be greater than or equal to the oldVersion"),
        ("MatrixOneCluster", lambda: default("MatrixOneCluster", example("matrixonecluster-restore")), lambda s: s.update(restoreFrom="another"), "spec.restoreFrom: restoreFrom is immutable"),
        ("MatrixOneCluster", _running_cluster, lambda s: s["logService"]["initialConfig"].update(logShardReplicas=1), "spec.logService.initialConfig: initialConfig is immutable"),
        ("CNClaim", lambda: example("cnclaim") | {"spec": {**example("cnclaim")["spec"], "podName": "pod-a"}}, lambda s: s.update(podName="pod-b"), "spec.podName: podName is immutable, except to migrate the claim: set spec.sourcePod.podName to pod-a"),
    ],
)  # fmt: skip
async def test_update_rules_hold_on_update_only(
    served: Served, kind: str, old: Any, change: Any, expected: str
) -> None:
    stored = old()
    new = copy.deepcopy(stored)
    change(new["spec"])
    response = await served.validate(kind, "UPDATE", stored, stored)
    assert response["allowed"] is True, "the stored object itself is valid"
    message = await _denied(served, kind, "UPDATE", new, stored)
    assert message.endswith(f" is invalid: {expected}"), message
    response = await served.validate(kind, "CREATE", new)
    assert response["allowed"] is True, "the same object is fine to create: the rule is about the change"


async def test_growing_and_upgrading_are_allowed(served: Served) -> None:
    stored = _logset()
    grown = copy.deepcopy(stored)
    grown["spec"]["volume"]["size"] = "20Gi"
    grown["spec"]["operatorVersion"] = "1.3.0"
    grown["spec"]["replicas"] = 5
    assert (await served.validate("LogSet", "UPDATE", grown, stored))["allowed"] is True


async def test_metadata_changes_of_an_invalid_stored_object_are_allowed(served: Served) -> None:
    """A finalizer must always be removable, even from an object stored before a rule existed."""
    stored = default("LogSet", example("logset"))
    stored["spec"]["volume"]["size"] = "0"
    stored["metadata"]["finalizers"] = ["matrixorigin.io/logset"]
    released = copy.deepcopy(stored)
    released["metadata"]["finalizers"] = []
    assert (await served.validate("LogSet", "UPDATE", released, stored))["allowed"] is True
    released["spec"]["storeFailureTimeout"] = "20m0s"
    assert (await served.validate("LogSet", "UPDATE", released, stored))["allowed"] is True, (
        "an old problem is not held against an unrelated change (ratcheting)"
    )


async def test_other_operations_are_admitted(served: Served) -> None:
    obj = default("LogSet", example("logset"))
    obj["spec"]["volume"]["size"] = "0"
    for operation in ("DELETE", "CONNECT"):
        assert (await served.validate("LogSet", operation, None, obj))["allowed"] is True
    status, text = await served.send(
        route("LogSet").validate_path, json.dumps(review("LogSet", "CREATE", None)).encode()
    )
    assert (status, text) == (400, "request.object is required on CREATE\n")


# --------------------------------------------------------------- the messages


def test_the_message_follows_apimachinery_invalid_errors() -> None:
    one = [FieldError("spec.a", "bad")]
    assert invalid_message("CNSet", "x", one) == 'CNSet.core.matrixorigin.io "x" is invalid: spec.a: bad'
    two = [FieldError("spec.a", "bad"), FieldError("spec.b", "worse"), FieldError("spec.a", "bad")]
    assert invalid_message("CNSet", 'q"t', two) == (
        'CNSet.core.matrixorigin.io "q\\"t" is invalid: [spec.a: bad, spec.b: worse]'
    )


def test_a_message_stays_readable_however_broken_the_object() -> None:
    many = [FieldError(f"spec.f{i}", "bad") for i in range(MAX_ERRORS + 5)]
    message = invalid_message("CNSet", "x", many)
    assert message.endswith(f"spec.f{MAX_ERRORS - 1}: bad, and 5 more errors]")
    long = [FieldError("spec.image", "Invalid value: " + "x" * 100_000)]
    message = invalid_message("CNSet", "x", long)
    assert len(message) < MAX_ERROR_LENGTH + 100 and "spec.image: Invalid value: xxx" in message


async def test_generate_name_stands_in_for_a_missing_name() -> None:
    obj = default("LogSet", example("logset"))
    obj["spec"]["volume"]["size"] = "0"
    del obj["metadata"]["name"]
    obj["metadata"]["generateName"] = "mo-"
    denial = await Validator("LogSet")(AdmissionRequest.from_review(review("LogSet", "CREATE", obj)))
    assert denial is not None and denial.message.startswith('LogSet.core.matrixorigin.io "mo-" is invalid: ')


def test_routes_name_webhooks_as_the_install_manifests_do() -> None:
    r = route("TNSet")
    assert (r.mutate_path, r.validate_path) == (
        "/mutate-core-matrixorigin-io-v1alpha1-tnset",
        "/validate-core-matrixorigin-io-v1alpha1-tnset",
    )
    assert (r.mutating_name, r.validating_name) == (
        "mtnset.core.matrixorigin.io",
        "vtnset.core.matrixorigin.io",
    )
    assert (route("LogSet").scope, route("Backup").scope) == ("Namespaced", "Cluster")
