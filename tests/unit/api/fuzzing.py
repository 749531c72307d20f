"""Hypothesis strategies for objects of our kinds: the valid examples under
``manifests/`` and mutations of them (wrong types, negative numbers, bad
quantities, missing and unknown fields, long and unicode strings, deep nesting,
extreme values: Go's integer limits, 64 KB strings, long digit strings, names at
and past each derived limit).
Shared by the api property tests and the webhook property tests."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from mo_operator.api.kinds import KINDS
from mo_operator.api.validation import FieldError
from mo_operator.api.validation.cluster import MAX_CLUSTER_NAME_LENGTH
from mo_operator.api.validation.derived import name_limit
from mo_operator.api.validation.errors import ROOT

from .conftest import EXAMPLES

__all__ = ["BASES", "FUZZ", "JUNK", "SPECIALS", "mutated", "names_a_field"]

BASES: dict[str, list[dict[str, Any]]] = {}
for _obj in EXAMPLES.values():
    BASES.setdefault(_obj["kind"], []).append(_obj)

# One variant with a status, so that status schemas are exercised too.
BASES["LogSet"].append(
    {
        **copy.deepcopy(BASES["LogSet"][0]),
        "status": {
            "observedGeneration": 2,
            "conditions": [
                {
                    "type": "Ready",
                    "status": "True",
                    "reason": "AllReady",
                    "message": "",
                    "lastTransitionTime": "2024-05-01T10:00:00Z",
                }
            ],
            "availableStores": [
                {"podName": "mo-log-0", "phase": "Up", "lastTransition": "2024-05-01T10:00:00Z"}
            ],
            "discovery": {"address": "mo-log-discovery.default.svc", "port": 32001},
        },
    }
)

BAD_QUANTITIES = ["", "abc", "10GB", "1.2.3Gi", "--1", "Gi", "1e", "1 Gi", "0x10", "\u0661\u0660Gi"]
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    st.text(alphabet=st.characters(codec="utf-8", exclude_categories=()), max_size=12),
    st.text(alphabet=st.characters(categories=["Cs"]), min_size=1, max_size=3),
    st.sampled_from(BAD_QUANTITIES),
    st.sampled_from(["0", "1", "-1", "1Gi", "-10Gi", "500m", "10%", "TP", "Delete", "minio", "1.2.3", "x.y"]),
)
JUNK = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=6,
)


def _deep(depth: int) -> Any:
    value: Any = "bottom"
    for i in range(depth):
        value = {"n": value} if i % 2 else [value]
    return value


# Values of the right type but doubtful content, to reach the semantic rules.
TWEAK_INTS = st.one_of(st.sampled_from([-1, 0, 1, 2, 3, 5, 100, 101, 65536, 2**31]), st.integers(-10, 10))
TWEAK_STRINGS = st.sampled_from(
    [
        "",
        "0",
        "-1Gi",
        "1Gi",
        "20Gi",
        "ClusterIP",
        "Drain",
        "aws",
        "minio",
        "/x",
        "a/b",
        "UPPER",
        "a_b",
        "1.2.3",
        "v2.0.0",
        "nightly",
        "10m",
        "-5m",
        "x%",
        "50%",
        "[tn]\n[dn]",
        "[tn]",
        "tp",
        "ap",
        "Pod",
        "Nope",
    ]
)

INT_LIMITS = st.sampled_from(
    [2**31 - 1, 2**31, -(2**31), -(2**31) - 1, 2**63 - 1, 2**63, -(2**63), 1000, 1001, 100_000]
)
"""Go's int32 and int64 limits and one past each, the replicas limit and one past it."""
UNICODE = st.one_of(
    st.text(alphabet=st.characters(min_codepoint=0x80, exclude_categories=("Cs",)), min_size=1, max_size=80),
    st.sampled_from(
        ["é" * 300, "日本語" * 30, "\u200bmo", "mo\u202e", "\uff2d\uff4f", "🦀" * 20, "x\x00y", "a\nb"]
    ),
)

SPECIALS = st.one_of(
    st.integers(min_value=60, max_value=70_000).map(lambda n: "x" * n),
    st.just("x" * 65536),
    st.integers(min_value=20, max_value=6_000).map(lambda n: "9" * n),
    st.integers(min_value=1, max_value=300).map(_deep),
    st.integers(min_value=-(2**40), max_value=-1),
    INT_LIMITS,
    UNICODE,
)
"""Extreme values: 64 KB strings, long digit strings (Python refuses to convert past
4,300 digits), deep nesting, Go's integer limits, unicode."""


@st.composite
def names_near_limits(draw: st.DrawFn, kind: str) -> str:
    """A name at, just under or just past the longest its kind derives valid names from
    (``api/validation/derived.py``), or one no Service can be named after."""
    limit = name_limit(kind) or (MAX_CLUSTER_NAME_LENGTH if kind == "MatrixOneCluster" else 63)
    length = draw(st.sampled_from([limit - 1, limit, limit + 1, limit + 2, 253, 254]))
    shape = draw(st.sampled_from(["m", "m-", "1", "m.", "M"]))
    return (shape * length)[: max(length, 1)].rstrip("-.") or "m"


def _slots(obj: Any) -> list[tuple[Any, Any]]:
    """Every (container, key or index) in ``obj``, the place a mutation can hit."""
    out: list[tuple[Any, Any]] = []
    stack = [obj]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            for k, v in node.items():
                out.append((node, k))
                stack.append(v)
        elif isinstance(node, list):
            for i, v in enumerate(node):
                out.append((node, i))
                stack.append(v)
    return out


@st.composite
def mutated(draw: st.DrawFn, kind: str) -> dict[str, Any]:
    obj: dict[str, Any] = copy.deepcopy(draw(st.sampled_from(BASES[kind])))
    for _ in range(draw(st.integers(min_value=0, max_value=3))):
        slots = _slots(obj)
        container, slot = draw(st.sampled_from(slots))
        op = draw(
            st.sampled_from(["tweak", "tweak", "replace", "special", "delete", "unknown", "wrap", "name"])
        )
        if op == "name" and isinstance(obj.get("metadata"), dict):
            obj["metadata"]["name"] = draw(names_near_limits(kind))
            groups = (obj.get("spec") or {}).get("cnGroups") if isinstance(obj.get("spec"), dict) else None
            if isinstance(groups, list) and groups and isinstance(groups[0], dict):
                groups[0]["name"] = draw(names_near_limits("CNSet"))[: draw(st.integers(1, 60))]
            continue
        value = container[slot]
        if op == "tweak" and isinstance(value, bool):
            container[slot] = not value
        elif op == "tweak" and isinstance(value, int):
            container[slot] = draw(TWEAK_INTS)
        elif op == "tweak" and isinstance(value, str):
            container[slot] = draw(TWEAK_STRINGS)
        elif op == "replace":
            container[slot] = draw(JUNK)
        elif op == "special":
            container[slot] = draw(SPECIALS)
        elif op == "delete":
            del container[slot]
        elif op == "unknown" and isinstance(container[slot], dict):
            container[slot][draw(st.text(min_size=1, max_size=10))] = draw(JUNK)
        elif op == "wrap":
            container[slot] = [container[slot]]
    return obj


def names_a_field(err: FieldError, obj: dict[str, Any], kind: str) -> bool:
    """The error's path starts at a top-level field of the object or of its kind."""
    top = err.path.split(".")[0].split("[")[0]
    fields = set(obj) | {f.alias or n for n, f in KINDS[kind].model.model_fields.items()}
    return bool(err.message) and (err.path == ROOT or top in fields)


FUZZ = settings(
    max_examples=1000,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)
