"""Label selectors, node selector terms and tolerations, evaluated as
``k8s.io/apimachinery/pkg/labels`` and ``k8s.io/component-helpers`` do."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def _requirement_matches(req: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    key = req.get("key", "")
    op = req.get("operator", "")
    values = list(req.get("values") or [])
    present = key in labels
    if op == "In":
        return present and labels[key] in values
    if op == "NotIn":
        return not present or labels[key] not in values
    if op == "Exists":
        return present
    if op == "DoesNotExist":
        return not present
    if op in ("Gt", "Lt"):  # node selector requirements only
        if not present or len(values) != 1:
            return False
        try:
            have, want = int(labels[key]), int(values[0])
        except ValueError:
            return False
        return have > want if op == "Gt" else have < want
    return False


def selector_matches(selector: Mapping[str, Any] | None, labels: Mapping[str, str]) -> bool:
    """``metav1.LabelSelectorAsSelector(selector).Matches(labels)``.

    A nil selector matches nothing and an empty one matches everything, as
    in ``LabelSelectorAsSelector``.
    """
    if selector is None:
        return False
    for k, v in (selector.get("matchLabels") or {}).items():
        if labels.get(k) != v:
            return False
    return all(_requirement_matches(r, labels) for r in selector.get("matchExpressions") or [])


def selector_is_empty(selector: Mapping[str, Any] | None) -> bool:
    return not selector or (not selector.get("matchLabels") and not selector.get("matchExpressions"))


def map_selector_matches(selector: Mapping[str, str] | None, labels: Mapping[str, str]) -> bool:
    """A Service's or a nodeSelector's plain map: every pair must be present."""
    return all(labels.get(k) == v for k, v in (selector or {}).items())


def node_selector_term_matches(
    term: Mapping[str, Any], labels: Mapping[str, str], fields: Mapping[str, str]
) -> bool:
    """One ``NodeSelectorTerm``: all its expressions and field expressions hold.
    An empty term matches no node (``nodeaffinity.NodeSelector``)."""
    exprs = term.get("matchExpressions") or []
    field_exprs = term.get("matchFields") or []
    if not exprs and not field_exprs:
        return False
    return all(_requirement_matches(r, labels) for r in exprs) and all(
        _requirement_matches(r, fields) for r in field_exprs
    )


def node_selector_matches(selector: Mapping[str, Any], node: Mapping[str, Any]) -> bool:
    """A ``NodeSelector``: the terms are ORed."""
    labels = (node.get("metadata") or {}).get("labels") or {}
    fields = {"metadata.name": (node.get("metadata") or {}).get("name", "")}
    return any(node_selector_term_matches(t, labels, fields) for t in selector.get("nodeSelectorTerms") or [])


def toleration_tolerates(toleration: Mapping[str, Any], taint: Mapping[str, Any]) -> bool:
    """``v1.Toleration.ToleratesTaint``."""
    effect = toleration.get("effect") or ""
    if effect and effect != taint.get("effect"):
        return False
    key = toleration.get("key") or ""
    if key and key != taint.get("key"):
        return False
    op = toleration.get("operator") or "Equal"
    if op == "Exists":
        return True
    if op == "Equal":
        return (toleration.get("value") or "") == (taint.get("value") or "")
    return False


def tolerating(tolerations: list[Mapping[str, Any]], taint: Mapping[str, Any]) -> Mapping[str, Any] | None:
    for t in tolerations:
        if toleration_tolerates(t, taint):
            return t
    return None
