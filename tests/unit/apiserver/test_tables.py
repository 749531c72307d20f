"""Server-side tables (``meta.k8s.io/v1`` Table): the envelope and
``includeObject`` of apiserver's table handling, the custom resource table of
apiextensions-apiserver (``pkg/registry/customresource/tableconvertor``,
default Age column from ``pkg/apiserver/helpers.go``), kube-apiserver's default
table (Name, Created At) and the ages of ``HumanDuration``
(apimachinery ``pkg/util/duration/duration_test.go``)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from mo_devkit.localcluster.apiserver.builtins import builtin_type
from mo_devkit.localcluster.apiserver.errors import StatusError
from mo_devkit.localcluster.apiserver.printers.base import human_duration
from mo_devkit.localcluster.apiserver.registry import resource_types_of_crd
from mo_devkit.localcluster.apiserver.resources import ResourceType
from mo_devkit.localcluster.apiserver.tables import to_table

NOW = datetime(2024, 6, 1, 12, 0, 0, tzinfo=UTC)


def stamp(delta: timedelta) -> str:
    return (NOW - delta).strftime("%Y-%m-%dT%H:%M:%SZ")


def widget_type(columns: list[dict[str, Any]] | None = None) -> ResourceType:
    version: dict[str, Any] = {"name": "v1", "served": True, "storage": True}
    if columns is not None:
        version["additionalPrinterColumns"] = columns
    crd = {
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"kind": "Widget", "plural": "widgets"},
            "versions": [version],
        },
    }
    return resource_types_of_crd(crd)[0]


WIDGET = {
    "apiVersion": "example.com/v1",
    "kind": "Widget",
    "metadata": {
        "name": "w1",
        "namespace": "ns",
        "uid": "u1",
        "creationTimestamp": stamp(timedelta(minutes=5)),
    },
    "spec": {"replicas": 3, "ratio": 0.5, "selector": {"app": "w"}},
    "status": {
        "phase": "Ready",
        "conditions": [{"type": "Available", "status": "False"}, {"type": "Ready", "status": "True"}],
        "since": stamp(timedelta(hours=30)),
        "bad": "yesterday",
        "flag": True,
    },
}


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (1, "1s"),
        (70, "70s"),
        (190, "3m10s"),
        (70 * 60, "70m"),
        (47 * 3600, "47h"),
        (49 * 3600, "2d1h"),
        ((8 * 24 + 2) * 3600, "8d"),
        (367 * 24 * 3600, "367d"),
        ((365 * 2 * 24 + 25) * 3600, "2y1d"),
        ((365 * 8 * 24 + 2) * 3600, "8y"),
        (-2, "<invalid>"),
        (-1.5, "0s"),
        (119.999, "119s"),
        (120, "2m"),
        (3 * 3600 - 0.001, "179m"),
        (3 * 3600 + 60, "3h1m"),
        (8 * 3600 + 59 * 60, "8h"),
        (8 * 24 * 3600 - 0.001, "7d23h"),
        (8 * 365 * 24 * 3600 - 0.001, "7y364d"),
    ],
)
def test_human_duration(seconds: float, text: str) -> None:
    assert human_duration(timedelta(seconds=seconds)) == text


def test_custom_resource_columns() -> None:
    rt = widget_type(
        [
            {"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas", "description": "How many"},
            {"name": "Phase", "type": "string", "jsonPath": ".status.phase"},
            {"name": "Ready", "type": "string", "jsonPath": '.status.conditions[?(@.type=="Ready")].status'},
            {"name": "Since", "type": "date", "jsonPath": ".status.since", "priority": 1},
            {"name": "Ratio", "type": "number", "jsonPath": ".spec.ratio"},
            {"name": "Flag", "type": "boolean", "jsonPath": ".status.flag"},
            {"name": "Selector", "type": "string", "jsonPath": ".spec.selector", "format": "selector"},
            {"name": "First", "type": "string", "jsonPath": ".status.conditions[*].type"},
            {"name": "Missing", "type": "string", "jsonPath": ".status.nothing"},
            {"name": "Bad", "type": "date", "jsonPath": ".status.bad"},
            {"name": "Mismatch", "type": "integer", "jsonPath": ".status.phase"},
        ]
    )
    table = to_table(rt, [WIDGET], now=NOW)
    assert (table["kind"], table["apiVersion"]) == ("Table", "meta.k8s.io/v1")
    names = [c["name"] for c in table["columnDefinitions"]]
    assert names == [
        "Name",
        "Replicas",
        "Phase",
        "Ready",
        "Since",
        "Ratio",
        "Flag",
        "Selector",
        "First",
        "Missing",
        "Bad",
        "Mismatch",
    ]
    columns = {c["name"]: c for c in table["columnDefinitions"]}
    assert columns["Name"]["format"] == "name"
    assert columns["Replicas"]["description"] == "How many"
    assert (
        columns["Phase"]["description"]
        == "Custom resource definition column (in JSONPath format): .status.phase"
    )
    assert (columns["Since"]["type"], columns["Since"]["priority"]) == ("date", 1)
    assert columns["Selector"]["format"] == "selector"
    assert table["rows"][0]["cells"] == [
        "w1",
        3,
        "Ready",
        "True",
        "30h",
        0.5,
        True,
        '{"app":"w"}',
        "Available",
        None,
        "<invalid>",
        None,
    ]


def test_custom_resource_without_columns_shows_age() -> None:
    table = to_table(widget_type(), [WIDGET], now=NOW)
    assert [(c["name"], c["type"]) for c in table["columnDefinitions"]] == [
        ("Name", "string"),
        ("Age", "date"),
    ]
    assert table["rows"][0]["cells"] == ["w1", "5m"]
    # A path that finds nothing gives an empty cell, not an age.
    unstamped = {"metadata": {"name": "w2"}}
    assert to_table(widget_type(), [unstamped], now=NOW)["rows"][0]["cells"] == ["w2", None]


def test_include_object() -> None:
    rt = widget_type()
    metadata = to_table(rt, [WIDGET], now=NOW)["rows"][0]["object"]
    assert metadata == {
        "kind": "PartialObjectMetadata",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": WIDGET["metadata"],
    }
    assert to_table(rt, [WIDGET], include_object="", now=NOW)["rows"][0]["object"] == metadata
    assert to_table(rt, [WIDGET], include_object="Object", now=NOW)["rows"][0]["object"] == WIDGET
    assert to_table(rt, [WIDGET], include_object="None", now=NOW)["rows"][0]["object"] is None
    with pytest.raises(StatusError) as err:
        to_table(rt, [WIDGET], include_object="All", now=NOW)
    assert err.value.code == 400


def test_empty_list_still_has_columns() -> None:
    table = to_table(widget_type(), [], now=NOW)
    assert table["rows"] == []
    assert len(table["columnDefinitions"]) == 2
    assert table["metadata"] == {}


def test_kinds_without_a_printer_get_name_and_created_at() -> None:
    """Roles, ClusterRoles and CRDs have no kube-apiserver printer: the
    default table convertor prints the creation time as RFC 3339."""
    for api_version, kind in [
        ("rbac.authorization.k8s.io/v1", "Role"),
        ("rbac.authorization.k8s.io/v1", "ClusterRole"),
        ("apiextensions.k8s.io/v1", "CustomResourceDefinition"),
    ]:
        rt = builtin_type(api_version, kind)
        assert rt is not None
        obj = {"metadata": {"name": "x", "creationTimestamp": "2024-05-01T10:00:00Z"}}
        table = to_table(rt, [obj], now=NOW)
        assert [(c["name"], c["type"]) for c in table["columnDefinitions"]] == [
            ("Name", "string"),
            ("Created At", "date"),
        ]
        assert table["rows"][0]["cells"] == ["x", "2024-05-01T10:00:00Z"]


def test_column_definitions_have_every_field() -> None:
    rt = builtin_type("v1", "Pod")
    assert rt is not None
    for c in to_table(rt, [], now=NOW)["columnDefinitions"]:
        assert set(c) == {"name", "type", "format", "description", "priority"}
        assert c["description"]
