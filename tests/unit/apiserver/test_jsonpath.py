"""The JSONPath subset of CRD printer columns, against the behaviour of
client-go's ``util/jsonpath`` (https://kubernetes.io/docs/reference/kubectl/jsonpath/)
with missing keys allowed, as the CRD table convertor sets it."""

from __future__ import annotations

from typing import Any

import pytest

from mo_devkit.localcluster.apiserver.jsonpath import JSONPathError, compile_path, find, format_value

OBJ: dict[str, Any] = {
    "metadata": {
        "name": "w",
        "creationTimestamp": "2024-01-02T03:04:05Z",
        "labels": {"app.kubernetes.io/name": "x"},
    },
    "spec": {"replicas": 3, "ratio": 1.5, "paused": False, "ports": [80, 443, 8080], "empty": None},
    "status": {
        "phase": "Running",
        "conditions": [
            {"type": "Ready", "status": "True", "priority": 2},
            {"type": "Synced", "status": "False", "priority": 5},
        ],
        "nested": {"status": "inner"},
    },
}


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        (".status.phase", ["Running"]),
        ("{.status.phase}", ["Running"]),
        ("$.spec.replicas", [3]),
        (".metadata.creationTimestamp", ["2024-01-02T03:04:05Z"]),
        ('.status.conditions[?(@.type=="Ready")].status', ["True"]),
        (".status.conditions[?(@.type=='Synced')].status", ["False"]),
        ('.status.conditions[?(@.type != "Ready")].type', ["Synced"]),
        (".status.conditions[?(@.priority > 3)].type", ["Synced"]),
        (".status.conditions[?(@.priority <= 2)].type", ["Ready"]),
        (".status.conditions[?(@.status)].type", ["Ready", "Synced"]),
        (".status.conditions[?(@.missing)].type", []),
        (".status.conditions[0].type", ["Ready"]),
        (".status.conditions[-1].type", ["Synced"]),
        (".status.conditions[*].type", ["Ready", "Synced"]),
        (".spec.ports[1:]", [443, 8080]),
        (".spec.ports[:2]", [80, 443]),
        (".spec.ports[::2]", [80, 8080]),
        (".metadata.labels['app.kubernetes.io/name']", ["x"]),
        (".status..status", ["True", "False", "inner"]),
        (".status.nested.*", ["inner"]),
        (".spec.paused", [False]),
        (".spec.empty", [None]),
    ],
)
def test_find(expression: str, expected: list[Any]) -> None:
    assert find(expression, OBJ) == expected


@pytest.mark.parametrize(
    "expression",
    [
        ".status.missing",
        ".status.conditions[5].type",
        ".status.phase.length",
        ".status.conditions.type",
        ".spec.replicas[0]",
    ],
)
def test_missing_or_mismatched_paths_find_nothing(expression: str) -> None:
    assert find(expression, OBJ) == []


@pytest.mark.parametrize(
    "expression",
    [
        ".status[",
        ".spec.ports[a]",
        ".status.conditions[?(@.type == Ready)]",
        ".spec.ports[1:2:3:4]",
        ".x[?@.y]",
    ],
)
def test_invalid_expressions(expression: str) -> None:
    with pytest.raises(JSONPathError):
        compile_path(expression)


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ("Running", "Running"),
        (3, "3"),
        (1.5, "1.5"),
        (2.0, "2"),
        (True, "true"),
        ({"b": 1, "a": "<x>"}, '{"a":"\\u003cx\\u003e","b":1}'),
        ([1, "a"], '[1,"a"]'),
        (None, None),
    ],
)
def test_format_value_prints_as_go(value: Any, text: str | None) -> None:
    """Strings raw, scalars as Go's %v, objects as encoding/json (client-go
    jsonpath ``PrintResults``)."""
    assert format_value(value) == text
