"""Where a volume's node affinity pins it (controllers/logset/stranded.py): the label
selector a term lists its nodes by, whether a node satisfies it, and how the place is
named in the Failover condition."""

from __future__ import annotations

from typing import Any

import pytest

from mo_operator.controllers.logset.stranded import has_node, label_selector, matches, place

ZONE = "topology.kubernetes.io/zone"


def expr(key: str, operator: str, *values: str) -> dict[str, Any]:
    return {"key": key, "operator": operator, "values": list(values)}


def node(
    labels: dict[str, str], *, ready: bool = True, cordoned: bool = False, name: str = "n"
) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "labels": labels},
        "spec": {"unschedulable": cordoned},
        "status": {"conditions": [{"type": "Ready", "status": "True" if ready else "False"}]},
    }


@pytest.mark.parametrize(
    ("expressions", "selector"),
    [
        ([expr(ZONE, "In", "b", "a")], f"{ZONE} in (a,b)"),
        ([expr(ZONE, "In", "a"), expr("disk", "NotIn", "hdd")], f"{ZONE} in (a),disk notin (hdd)"),
        ([expr("ssd", "Exists"), expr("spot", "DoesNotExist")], "ssd,!spot"),
        ([expr("cpus", "Gt", "4")], ""),  # checked on the nodes, never sent
    ],
)
def test_a_term_lists_its_nodes_by_the_labels_the_api_server_can_select(
    expressions: list[dict[str, Any]], selector: str
) -> None:
    assert label_selector({"matchExpressions": expressions}) == selector


@pytest.mark.parametrize(
    ("term", "labels", "name", "fits"),
    [
        ({"matchExpressions": [expr(ZONE, "In", "a")]}, {ZONE: "a"}, "n", True),
        ({"matchExpressions": [expr(ZONE, "In", "a")]}, {ZONE: "b"}, "n", False),
        (
            {"matchExpressions": [expr(ZONE, "In", "a"), expr("disk", "NotIn", "hdd")]},
            {ZONE: "a", "disk": "hdd"},
            "n",
            False,
        ),
        ({"matchExpressions": [expr("cpus", "Gt", "4")]}, {"cpus": "8"}, "n", True),
        ({"matchExpressions": [expr("cpus", "Lt", "4")]}, {"cpus": "8"}, "n", False),
        ({"matchExpressions": [expr("cpus", "Gt", "4")]}, {"cpus": "many"}, "n", False),
        (
            {"matchExpressions": [expr(ZONE, "In", "a")], "matchFields": [expr("metadata.name", "In", "m")]},
            {ZONE: "a"},
            "n",
            False,
        ),
    ],
)
def test_a_node_satisfies_a_term_when_every_expression_holds(
    term: dict[str, Any], labels: dict[str, str], name: str, fits: bool
) -> None:
    assert matches(term, node(labels, name=name)) is fits


def test_only_a_schedulable_ready_node_can_take_the_store() -> None:
    term = {"matchExpressions": [expr(ZONE, "In", "a")]}
    assert not has_node(
        term, [node({ZONE: "a"}, ready=False), node({ZONE: "a"}, cordoned=True), node({ZONE: "b"})]
    )
    assert has_node(term, [node({ZONE: "a"}, ready=False), node({ZONE: "a"})])


@pytest.mark.parametrize(
    ("terms", "said"),
    [
        ([{"matchExpressions": [expr(ZONE, "In", "eu-1a")]}], "zone eu-1a"),
        (
            [
                {"matchExpressions": [expr(ZONE, "In", "eu-1a")]},
                {"matchExpressions": [expr(ZONE, "In", "eu-1b")]},
            ],
            "zones eu-1a, eu-1b",
        ),
        (
            [{"matchExpressions": [expr(ZONE, "In", "eu-1a"), expr("disk", "In", "ssd")]}],
            f"nodes with {ZONE} In eu-1a and disk In ssd",
        ),
    ],
)
def test_the_condition_names_the_zone_that_is_gone(terms: list[dict[str, Any]], said: str) -> None:
    assert place(terms) == said
