"""The generated CRDs: committed copies current, structural schemas, names, columns,
subresources, keyed lists.

Rules: https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definitions/
(structural schemas, defaulting, printer columns, scale subresource, categories).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from mo_devkit.localcluster.apiserver.schema.structural import structural_causes
from mo_devkit.localcluster.apiserver.schema.validation import validate as apiserver_validate
from mo_operator.api.crdgen import all_crds, crd_file_name, crds_yaml, stale_crd_files, write_crds
from mo_operator.api.kinds import GROUP, KINDS, VERSION
from mo_operator.api.validation import validate_create

from .conftest import EXAMPLES

REPO = Path(__file__).resolve().parents[3]
COMMITTED = REPO / "deploy" / "crds"
BY_KIND = {c["spec"]["names"]["kind"]: c for c in all_crds()}


def _version(kind: str) -> dict[str, Any]:
    versions: list[dict[str, Any]] = BY_KIND[kind]["spec"]["versions"]
    (version,) = versions
    return version


def _schema(kind: str) -> dict[str, Any]:
    schema: dict[str, Any] = _version(kind)["schema"]["openAPIV3Schema"]
    return schema


def _nodes(schema: dict[str, Any], path: str = "") -> Iterator[tuple[str, dict[str, Any]]]:
    yield path, schema
    for name, prop in schema.get("properties", {}).items():
        yield from _nodes(prop, f"{path}.{name}")
    if isinstance(schema.get("additionalProperties"), dict):
        yield from _nodes(schema["additionalProperties"], f"{path}[*]")
    if "items" in schema:
        yield from _nodes(schema["items"], f"{path}[]")


def test_committed_crds_are_what_the_models_generate() -> None:
    """CI relies on this: after changing a model, run ``mo-operator crds --write deploy/crds``."""
    assert stale_crd_files(COMMITTED) == []


def test_stale_crd_files_names_changed_missing_and_foreign_files(tmp_path: Path) -> None:
    written = write_crds(tmp_path)
    assert stale_crd_files(tmp_path) == []
    written[0].write_text(written[0].read_text() + "# edited\n")
    written[1].unlink()
    (tmp_path / f"{GROUP}_gones.yaml").write_text("stale")
    assert stale_crd_files(tmp_path) == sorted([written[0].name, written[1].name, f"{GROUP}_gones.yaml"])


def test_write_crds_removes_files_of_kinds_that_no_longer_exist(tmp_path: Path) -> None:
    (tmp_path / f"{GROUP}_gones.yaml").write_text("stale")
    (tmp_path / "unrelated.yaml").write_text("kept")
    written = write_crds(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [*(p.name for p in written), "unrelated.yaml"]
    )


def test_generation_is_deterministic_and_the_stream_holds_every_crd() -> None:
    text = crds_yaml()
    assert text == crds_yaml()
    assert list(yaml.safe_load_all(text)) == all_crds()
    assert [c["spec"]["names"]["kind"] for c in all_crds()] == list(KINDS)


@pytest.mark.parametrize("kind", list(KINDS))
def test_schema_is_structural_as_kube_apiserver_checks_it(kind: str) -> None:
    status = "status" in _version(kind)["subresources"]
    assert structural_causes(_schema(kind), "openAPIV3Schema", status_subresource=status) == []


@pytest.mark.parametrize("kind", list(KINDS))
def test_every_node_is_typed_described_and_free_of_refs_and_unions(kind: str) -> None:
    for path, node in _nodes(_schema(kind)):
        assert not {"$ref", "anyOf", "oneOf", "allOf", "not"} & node.keys(), path
        assert (
            "type" in node
            or node.get("x-kubernetes-int-or-string")
            or node.get("x-kubernetes-preserve-unknown-fields")
        ), path
        # kubectl explain shows descriptions of fields; list items and map values describe
        # themselves through their field, and the root metadata is the standard ObjectMeta.
        if path and not path.endswith(("[]", "[*]")) and path != ".metadata":
            assert node.get("description"), f"{kind}{path} has no description"


def test_quantities_are_int_or_string_with_the_quantity_pattern() -> None:
    size = _schema("LogSet")["properties"]["spec"]["properties"]["volume"]["properties"]["size"]
    assert size["x-kubernetes-int-or-string"] is True
    assert size["pattern"].startswith("^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))")
    limits = _schema("CNSet")["properties"]["spec"]["properties"]["resources"]["properties"]["limits"]
    assert limits["additionalProperties"]["x-kubernetes-int-or-string"] is True
    surge = _schema("CNSet")["properties"]["spec"]["properties"]["updateStrategy"]["properties"]["maxSurge"]
    assert surge == {"x-kubernetes-int-or-string": True, "description": surge["description"]}


@pytest.mark.parametrize("cpu", ["E", "Ei", "m", "e5"])
def test_a_quantity_without_a_number_is_refused_as_the_crds_pattern_refuses_it(cpu: str) -> None:
    cnset = {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "CNSet",
        "metadata": {"name": "tp", "namespace": "default"},
        "spec": {
            "replicas": 1,
            "image": "matrixorigin/matrixone:2.0.0",
            "resources": {"requests": {"cpu": cpu}},
        },
        "deps": {"logSet": {"metadata": {"name": "mo"}}},
    }
    errors = [str(e) for e in validate_create("CNSet", cnset)]
    assert len(errors) == 1 and errors[0].startswith("spec.resources.requests[cpu]: should match '^"), errors
    schema = _schema("CNSet")
    assert apiserver_validate(cnset, schema), "kube-apiserver's structural check refuses it too"


def test_keyed_lists_are_list_maps() -> None:
    groups = _schema("MatrixOneCluster")["properties"]["spec"]["properties"]["cnGroups"]
    assert groups["x-kubernetes-list-type"] == "map"
    assert groups["x-kubernetes-list-map-keys"] == ["name"]
    assert "name" in groups["items"]["required"]
    conditions = _schema("CNSet")["properties"]["status"]["properties"]["conditions"]
    assert (conditions["x-kubernetes-list-type"], conditions["x-kubernetes-list-map-keys"]) == (
        "map",
        ["type"],
    )


def test_a_duplicate_cn_group_is_refused_by_the_schema_itself() -> None:
    """The API server enforces list-map keys (``validate_list_sets_and_maps``)."""
    obj = EXAMPLES["matrixonecluster"]
    obj = {**obj, "spec": {**obj["spec"], "cnGroups": [obj["spec"]["cnGroups"][0]] * 2}}
    causes = apiserver_validate(obj, _schema("MatrixOneCluster"))
    assert [c.field for c in causes] == ["spec.cnGroups[1]"]


def test_upstream_schema_defaults_and_enums_are_kept() -> None:
    for kind in ("CNSet", "ProxySet", "WebUI"):
        service_type = _schema(kind)["properties"]["spec"]["properties"]["serviceType"]
        assert service_type["default"] == "ClusterIP"
        assert service_type["enum"] == ["ClusterIP", "NodePort", "LoadBalancer"]
    overlay = _schema("BackupJob")["properties"]["spec"]["properties"]["overlay"]["properties"]
    assert overlay["imagePullPolicy"]["default"] == "IfNotPresent"
    s3 = _schema("LogSet")["properties"]["spec"]["properties"]["sharedStorage"]["properties"]["s3"]
    assert s3["properties"]["s3RetentionPolicy"]["enum"] == ["Delete", "Retain"]
    assert s3["properties"]["secretRef"]["x-kubernetes-map-type"] == "atomic"


def test_embedded_kubernetes_objects_are_kept_as_written() -> None:
    overlay = _schema("CNSet")["properties"]["spec"]["properties"]["overlay"]["properties"]
    assert overlay["affinity"]["x-kubernetes-preserve-unknown-fields"] is True
    assert overlay["tolerations"]["items"]["x-kubernetes-preserve-unknown-fields"] is True
    deps = _schema("CNSet")["properties"]["deps"]["properties"]
    assert deps["logSet"]["x-kubernetes-preserve-unknown-fields"] is True


def test_names_short_names_categories_and_scope() -> None:
    expected_short = {"MatrixOneCluster": ["mo"], "LogSet": ["log"], "DNSet": ["dn"], "TNSet": ["tn"]}
    expected_short |= {
        "CNSet": ["cn"],
        "ProxySet": ["proxy"],
        "BucketClaim": ["bucket"],
        "BackupSchedule": ["bs"],
    }
    for kind, crd in BY_KIND.items():
        names = crd["spec"]["names"]
        assert crd["metadata"]["name"] == f"{names['plural']}.{GROUP}"
        assert names["plural"] == f"{kind.lower()}s" and names["singular"] == kind.lower()
        assert names["listKind"] == f"{kind}List"
        assert names["categories"] == ["matrixone"]
        assert names.get("shortNames", []) == expected_short.get(kind, [])
        assert crd["spec"]["scope"] == ("Cluster" if kind == "Backup" else "Namespaced")
        assert _version(kind)["name"] == VERSION and _version(kind)["served"] and _version(kind)["storage"]
    every_short = [s for c in BY_KIND.values() for s in c["spec"]["names"].get("shortNames", [])]
    assert len(every_short) == len(set(every_short))


def test_every_kind_has_status_and_the_scalable_ones_scale() -> None:
    scale = {
        "specReplicasPath": ".spec.replicas",
        "statusReplicasPath": ".status.replicas",
        "labelSelectorPath": ".status.labelSelector",
    }
    for kind in KINDS:
        subresources = _version(kind)["subresources"]
        assert subresources["status"] == {}
        assert subresources.get("scale") == (scale if kind in ("CNSet", "CNClaimSet", "ProxySet") else None)
        status = _schema(kind)["properties"]["status"]["properties"]
        assert {"observedGeneration", "conditions"} <= status.keys()
        if "scale" in subresources:
            assert {"replicas", "labelSelector"} <= status.keys()


def _columns(kind: str) -> dict[str, tuple[str, str]]:
    return {c["name"]: (c["type"], c["jsonPath"]) for c in _version(kind)["additionalPrinterColumns"]}


def _priorities(kind: str) -> dict[str, int]:
    return {c["name"]: c.get("priority", 0) for c in _version(kind)["additionalPrinterColumns"]}


def test_printer_columns_say_readiness_as_a_count_and_the_running_version() -> None:
    """READY as ``2/3``, VERSION as the pods run it (the spec's in -o wide), UP-TO-DATE,
    and the first thing not fine in -o wide; upstream's Log/DN columns went (DN was blank
    for every cluster written with tn), and its Version was the spec's."""
    mo = _columns("MatrixOneCluster")
    assert mo["Ready"] == ("string", ".status.readiness")
    assert mo["Version"] == ("string", ".status.version")
    assert mo["Desired"] == ("string", ".spec.version")
    assert mo["Phase"] == ("string", ".status.phase")
    assert mo["Up-To-Date"] == ("string", '.status.conditions[?(@.type=="UpToDate")].status')
    assert mo["Message"] == ("string", ".status.message")
    assert {k for k, p in _priorities("MatrixOneCluster").items() if p} == {"Desired", "Message"}
    for kind in ("LogSet", "DNSet", "TNSet", "CNSet", "ProxySet", "WebUI"):
        columns = _columns(kind)
        assert columns["Ready"] == ("string", ".status.readiness")
        assert columns["Up-To-Date"] == ("integer", ".status.updatedReplicas")
        assert columns["Version"] == ("string", ".status.version")
        assert columns["Image"] == ("string", ".spec.image")
        assert {k for k, p in _priorities(kind).items() if p} == {"Image", "Message"}
    assert _columns("BucketClaim")["Bind"] == ("string", ".status.bindTo")
    assert _columns("Backup")["At"] == ("string", ".meta.atTime")
    assert _columns("CNClaim")["Pod"] == ("string", ".spec.podName")
    for kind in KINDS:
        assert [name for name, p in _priorities(kind).items() if not p][-1] == "Age"


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_the_apiserver_accepts_every_example_under_its_crd(name: str) -> None:
    obj = EXAMPLES[name]
    assert apiserver_validate(obj, _schema(obj["kind"])) == []


def test_file_names_follow_controller_gen() -> None:
    assert crd_file_name(KINDS["CNSet"]) == "core.matrixorigin.io_cnsets.yaml"
