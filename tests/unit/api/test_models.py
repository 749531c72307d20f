"""The models read upstream's manifests and write them back unchanged, under
upstream's JSON names, and give typed snake_case access to them."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import ValidationError

from mo_operator.api.base import dump, parse
from mo_operator.api.cluster import MatrixOneCluster
from mo_operator.api.cnclaim import CNStoreStatus
from mo_operator.api.cnset import CNSet, CNSetSpec
from mo_operator.api.dnset import DNSet, TNSet
from mo_operator.api.fields import parse_duration
from mo_operator.api.kinds import KINDS, kind_info

from .conftest import example


def test_every_example_round_trips_exactly(manifest: dict[str, Any]) -> None:
    model = KINDS[manifest["kind"]].model
    parsed = parse(model, manifest)
    assert dump(parsed) == manifest
    # And through JSON, the way objects travel to and from the API server.
    assert dump(parse(model, json.loads(json.dumps(manifest)))) == manifest


def test_typed_access_uses_snake_case_names() -> None:
    mo = parse(MatrixOneCluster, example("matrixonecluster-full"))
    assert mo.spec.log_service.shared_storage.s3 is not None
    assert mo.spec.log_service.shared_storage.s3.certificate_ref is not None
    assert mo.spec.log_service.shared_storage.s3.certificate_ref.files == ["cert.pem"]
    assert mo.spec.cn_groups is not None and mo.spec.cn_groups[0].name == "tp"
    assert (
        mo.spec.cn_groups[0].cn_labels is not None
        and mo.spec.cn_groups[0].cn_labels[1].key == "YOUR_LABEL_KEY_B"
    )
    assert mo.spec.tn is not None and mo.spec.tn.shared_storage_cache is not None
    assert mo.spec.tn.shared_storage_cache.disk_cache_size == "10Gi"
    assert mo.spec.log_service.resources is not None and mo.spec.log_service.resources.requests == {
        "cpu": 4,
        "memory": "12Gi",
    }


def test_python_code_can_build_objects_with_python_names() -> None:
    spec = CNSetSpec(
        replicas=2, image="matrixorigin/matrixone:1.2.3", reuse_pvc=True, service_type="NodePort"
    )
    assert dump(spec) == {
        "replicas": 2,
        "image": "matrixorigin/matrixone:1.2.3",
        "reusePVC": True,
        "serviceType": "NodePort",
    }


def test_json_names_that_are_not_plain_camel_case_are_upstreams() -> None:
    """reusePVC, serviceID and the CN store's pod name under "string" (cnclaim_types.go)."""
    assert parse(CNSet, {"spec": {"replicas": 1, "reusePVC": True}}).spec.reuse_pvc is True
    store = parse(CNStoreStatus, {"serviceID": "u", "string": "cn-0"})
    assert (store.service_id, store.pod_name) == ("u", "cn-0")
    with pytest.raises(ValidationError):
        parse(CNSet, {"spec": {"replicas": 1, "reusePvc": True}})


def test_json_validation_reads_json_names_only() -> None:
    with pytest.raises(ValidationError) as err:
        parse(CNSet, {"spec": {"replicas": 1, "service_type": "NodePort"}})
    assert err.value.errors()[0]["type"] == "extra_forbidden"


def test_validation_is_strict_about_json_types() -> None:
    for bad in ("3", 3.0, True):
        with pytest.raises(ValidationError):
            parse(CNSet, {"spec": {"replicas": bad}})


def test_free_form_kubernetes_objects_keep_unknown_fields() -> None:
    obj = example("cnset-full")
    obj["spec"]["overlay"]["affinity"]["podAntiAffinity"] = {"future": {"field": [1, 2]}}
    obj["deps"]["externalLogSet"] = {"haKeeperEndpoint": "x:1"}
    assert dump(parse(CNSet, obj)) == obj


def test_dependency_references_keep_what_upstream_embeds() -> None:
    """Upstream embeds a whole LogSet in deps.logSet; only its metadata is read."""
    obj = example("dnset")
    obj["deps"]["logSet"]["spec"] = {"replicas": 3}
    parsed = parse(DNSet, obj)
    assert parsed.deps is not None and parsed.deps.log_set is not None
    assert parsed.deps.log_set.metadata is not None and parsed.deps.log_set.metadata.name == "mo"
    assert dump(parsed) == obj


def test_tnset_is_dnset_under_its_newer_name() -> None:
    assert TNSet.model_fields.keys() == DNSet.model_fields.keys()
    assert KINDS["TNSet"].model is TNSet and KINDS["DNSet"].model is DNSet


def test_registry_knows_only_our_kinds() -> None:
    assert kind_info("Pod") is None
    info = kind_info("MatrixOneCluster")
    assert info is not None and (info.plural, info.singular, info.list_kind) == (
        "matrixoneclusters",
        "matrixonecluster",
        "MatrixOneClusterList",
    )


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("10m", 600),
        ("10m0s", 600),
        ("1h30m", 5400),
        ("1.5h", 5400),
        ("-1s", -1),
        ("0", 0),
        ("300ms", 0.3),
        ("1.s", 1),
    ],
)
def test_durations_read_as_go_reads_them(text: str, seconds: float) -> None:
    """time.ParseDuration (https://pkg.go.dev/time#ParseDuration)."""
    assert parse_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize("text", ["", "10", "m", "1x", ".s", "..1s", "1 m", "+", "-"])
def test_bad_durations_are_refused_with_gos_message(text: str) -> None:
    with pytest.raises(ValueError, match=r'^time: invalid duration "'):
        parse_duration(text)
