"""Label and field selectors as kube-apiserver parses and applies them.

Field selectors only accept the fields each kind supports (others get 400
"field label not supported"), as the real server does.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from .errors import bad_request

Obj = dict[str, Any]
Matcher = Callable[[Obj], bool]

_REQ = re.compile(
    r"""^\s*(?P<neg>!)?\s*(?P<key>[A-Za-z0-9][-A-Za-z0-9_./]*)\s*
        (?:(?P<op>==|=|!=|\s+in\s+|\s+notin\s+)\s*(?P<val>\([^)]*\)|[^,()\s]*))?\s*$""",
    re.X,
)


def _split_top(selector: str) -> list[str]:
    parts: list[str] = []
    cur: list[str] = []
    depth = 0
    for ch in selector:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return [p for p in (s.strip() for s in parts) if p]


def _requirement(
    key: str, op: str, values: frozenset[str], negated: bool
) -> Callable[[dict[str, str]], bool]:
    if not op:
        return (lambda labels: key not in labels) if negated else (lambda labels: key in labels)
    if op in ("=", "==", "in"):
        return lambda labels: labels.get(key) in values
    return lambda labels: labels.get(key) not in values


def parse_label_selector(selector: str) -> Matcher:
    """Parse a label selector string (``a=b,c!=d,e in (f,g),!h``)."""
    reqs: list[Callable[[dict[str, str]], bool]] = []
    for part in _split_top(selector):
        m = _REQ.match(part)
        if not m:
            raise bad_request(f"unable to parse requirement: invalid label selector: {part!r}")
        key, op, val, neg = m["key"], (m["op"] or "").strip(), m["val"] or "", bool(m["neg"])
        if op and neg:
            raise bad_request(f"unable to parse requirement: invalid label selector: {part!r}")
        if op in ("in", "notin"):
            if not (val.startswith("(") and val.endswith(")")):
                raise bad_request(f"unable to parse requirement: invalid label selector: {part!r}")
            values = frozenset(v.strip() for v in val[1:-1].split(",") if v.strip())
        else:
            values = frozenset((val,))
        reqs.append(_requirement(key, op, values, neg))

    def match(obj: Obj) -> bool:
        labels = obj.get("metadata", {}).get("labels") or {}
        return all(r(labels) for r in reqs)

    return match


# Fields each kind can be selected by, beyond metadata.name and metadata.namespace
# (k8s.io/kubernetes pkg/apis/*/v1/conversion.go AddFieldLabelConversionFunc).
_FIELDS: dict[str, tuple[str, ...]] = {
    "Pod": (
        "spec.nodeName",
        "spec.restartPolicy",
        "spec.schedulerName",
        "spec.serviceAccountName",
        "spec.hostNetwork",
        "status.phase",
        "status.podIP",
        "status.nominatedNodeName",
    ),
    "Event": (
        "involvedObject.kind",
        "involvedObject.namespace",
        "involvedObject.name",
        "involvedObject.uid",
        "involvedObject.apiVersion",
        "involvedObject.resourceVersion",
        "involvedObject.fieldPath",
        "reason",
        "reportingComponent",
        "source",
        "type",
    ),
    "Secret": ("type",),
    "Namespace": ("status.phase",),
    "Node": ("spec.unschedulable",),
    "ReplicaSet": ("status.replicas",),
    "Job": ("status.successful",),
    "PersistentVolumeClaim": (),
}


def _field_value(obj: Obj, path: str) -> str:
    if path == "source":
        return str((obj.get("source") or {}).get("component", ""))
    cur: Any = obj
    for part in path.split("."):
        if not isinstance(cur, dict):
            return ""
        cur = cur.get(part)
    if cur is None:
        return ""
    if isinstance(cur, bool):
        return "true" if cur else "false"
    return str(cur)


def parse_field_selector(selector: str, kind: str) -> Matcher:
    allowed = {"metadata.name", "metadata.namespace", *_FIELDS.get(kind, ())}
    reqs: list[tuple[str, str, bool]] = []
    for part in _split_top(selector):
        for op, eq in (("!=", False), ("==", True), ("=", True)):
            if op in part:
                key, _, val = part.partition(op)
                key = key.strip()
                if key not in allowed and kind in _FIELDS:  # the kind's field label conversion
                    raise bad_request(f"field label not supported: {key}")
                if key not in allowed:  # the generic registry's attributes
                    raise bad_request(
                        f'"{key}" is not a known field selector: only "metadata.name", "metadata.namespace"'
                    )
                reqs.append((key, val.strip(), eq))
                break
        else:
            raise bad_request(f"invalid selector: '{selector}'; can't understand '{part}'")

    def match(obj: Obj) -> bool:
        for key, val, eq in reqs:
            if key == "metadata.namespace":
                actual = obj.get("metadata", {}).get("namespace", "")
            else:
                actual = _field_value(obj, key)
            if (actual == val) != eq:
                return False
        return True

    return match


def match_label_selector_object(selector: dict[str, Any] | None, labels: dict[str, str]) -> bool:
    """Match a structured LabelSelector (matchLabels + matchExpressions).

    A null selector matches nothing and an empty one everything, as in
    metav1.LabelSelectorAsSelector.
    """
    if selector is None:
        return False
    for k, v in (selector.get("matchLabels") or {}).items():
        if labels.get(k) != v:
            return False
    for expr in selector.get("matchExpressions") or []:
        key, op, values = expr.get("key"), expr.get("operator"), expr.get("values") or []
        if op == "In" and labels.get(key) not in values:
            return False
        if op == "NotIn" and key in labels and labels[key] in values:
            return False
        if op == "Exists" and key not in labels:
            return False
        if op == "DoesNotExist" and key in labels:
            return False
    return True


def label_selector_string(selector: Any) -> str:
    """``labels.Selector.String()`` of a LabelSelector: requirements sorted by key."""
    if not isinstance(selector, dict):
        return ""
    reqs: list[tuple[str, str]] = [(k, f"{k}={v}") for k, v in (selector.get("matchLabels") or {}).items()]
    for e in selector.get("matchExpressions") or []:
        key, op, values = e.get("key", ""), e.get("operator"), sorted(e.get("values") or [])
        if op == "In":
            reqs.append((key, f"{key} in ({','.join(values)})"))
        elif op == "NotIn":
            reqs.append((key, f"{key} notin ({','.join(values)})"))
        elif op == "Exists":
            reqs.append((key, key))
        elif op == "DoesNotExist":
            reqs.append((key, f"!{key}"))
    return ",".join(text for _, text in sorted(reqs, key=lambda r: r[0]))
