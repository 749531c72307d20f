"""Server-side apply bodies (``application/apply-patch+yaml``) are YAML, and nearly
every client sends them as JSON: a JSON body is read by the JSON parser, and reads
exactly as the same body written as YAML; a body that is neither keeps the YAML
parser's error (kube-apiserver answers 400 "error decoding patch: ...")."""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml

from mo_devkit.localcluster.apiserver import patch_ops
from mo_devkit.localcluster.apiserver.errors import StatusError
from mo_devkit.localcluster.apiserver.patch_ops import APPLY_PATCH, MERGE_PATCH, parse_patch_body
from mo_devkit.localcluster.apiserver.resources import ResourceType

STATEFULSET = ResourceType(
    group="apps",
    version="v1",
    kind="StatefulSet",
    plural="statefulsets",
    singular="statefulset",
    namespaced=True,
)

BODY: dict[str, Any] = {
    "apiVersion": "apps/v1",
    "kind": "StatefulSet",
    "metadata": {
        "name": "mo-log",
        "namespace": "team-a",
        "labels": {"matrixorigin.io/component": "LogSet", "matrixorigin.io/instance": "mo"},
        "annotations": {"note": 'é ünïcode ✓ and "quotes", a: colon, # not a comment', "empty": ""},
        "ownerReferences": [
            {
                "apiVersion": "core.matrixorigin.io/v1alpha1",
                "kind": "LogSet",
                "name": "mo",
                "uid": "u-1",
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ],
    },
    "spec": {
        "replicas": 3,
        "serviceName": "mo-log-headless",
        "selector": {"matchLabels": {"matrixorigin.io/instance": "mo"}},
        "template": {
            "metadata": {"labels": {"matrixorigin.io/instance": "mo"}},
            "spec": {
                "terminationGracePeriodSeconds": 30,
                "containers": [
                    {
                        "name": "main",
                        "image": "matrixorigin/matrixone:2.0.0",
                        "command": ["/bin/sh", "/etc/matrixone/config/start.sh"],
                        "args": ["-debug-http=:6060", "yes", "no", "on", "off", "null", "~", "0777", "1.0"],
                        "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}, "limits": {"cpu": "2"}},
                        "env": [
                            {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}
                        ],
                    }
                ],
                "nodeSelector": None,
                "tolerations": [],
                "weights": [0.5, -1, 1.25, 12345678901234567890],
                "flags": [True, False],
            },
        },
        "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"]}}],
    },
}


def parse(raw: bytes | str, content_type: str = APPLY_PATCH) -> Any:
    return parse_patch_body(content_type, raw.encode() if isinstance(raw, str) else raw, STATEFULSET)


@pytest.mark.parametrize(
    "raw",
    [
        json.dumps(BODY),
        json.dumps(BODY, indent=2),
        "\n  " + json.dumps(BODY, separators=(",", ":")) + "\n",
        json.dumps(BODY, ensure_ascii=False),
    ],
    ids=["json", "json-indented", "json-compact-padded", "json-utf8"],
)
def test_a_json_body_reads_as_the_same_body_written_as_yaml(raw: str) -> None:
    as_yaml = parse(yaml.safe_dump(BODY, allow_unicode=True))
    as_json = parse(raw)
    assert as_yaml == BODY
    assert as_json == as_yaml
    assert json.dumps(as_json, sort_keys=True) == json.dumps(as_yaml, sort_keys=True), "same types too"


def test_a_json_body_does_not_go_through_the_yaml_parser(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(_text: str) -> Any:
        raise AssertionError("PyYAML was asked to parse a JSON body")

    monkeypatch.setattr(patch_ops.yaml, "safe_load", refuse)
    assert parse(json.dumps(BODY)) == BODY
    with pytest.raises(StatusError, match="PyYAML was asked"):
        parse("kind: StatefulSet\n")  # the check itself can fail: real YAML still goes there


def test_json_numbers_read_as_json_numbers() -> None:
    """``1e3`` is a number in JSON (and in the YAML 1.2 kube-apiserver's decoder
    reads); PyYAML, a YAML 1.1 parser, would have read the string ``"1e3"``."""
    assert parse('{"spec": {"a": 1e3, "b": -2.5E-1}}') == {"spec": {"a": 1000.0, "b": -0.25}}


@pytest.mark.parametrize(
    "raw",
    [
        '{"metadata": {"name": "x"',  # truncated JSON
        '{"metadata": [1, 2}',  # mismatched brackets
        '{"a": "b"} trailing: [',  # JSON followed by broken YAML
        "metadata:\n  name: [x\n",  # broken block YAML
        "metadata:\n\tname: x\n",  # a tab indents YAML
        '{"a": 1}\n---\n{"b": 2}\n',  # two documents
    ],
)
def test_invalid_bodies_give_the_yaml_parsers_error(raw: str) -> None:
    with pytest.raises(yaml.YAMLError) as expected:
        yaml.safe_load(raw)
    with pytest.raises(StatusError) as got:
        parse(raw)
    assert got.value.code == 400
    assert got.value.reason == "BadRequest"
    assert got.value.message == f"error decoding patch: {expected.value}"


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ('{"a": 1,}', {"a": 1}),  # a trailing comma: not JSON, valid YAML flow
        ("{a: 1, b: yes}", {"a": 1, "b": True}),  # YAML flow mapping with plain scalars
        ('{"a": NaN}', {"a": "NaN"}),  # not JSON: YAML reads a string
        ("", {}),
        ("  \n", {}),
    ],
)
def test_yaml_that_is_not_json_reads_as_before(raw: str, expected: Any) -> None:
    assert parse(raw) == expected == (yaml.safe_load(raw) if raw.strip() else {})


def test_other_patch_types_stay_json_only() -> None:
    assert parse('{"a": 1}', MERGE_PATCH) == {"a": 1}
    with pytest.raises(StatusError) as got:
        parse("a: 1\n", MERGE_PATCH)
    assert got.value.code == 400
    assert got.value.message.startswith("error decoding patch: ")
