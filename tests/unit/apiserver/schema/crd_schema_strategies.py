"""Hypothesis strategies shared by the schema tests: arbitrary decoded JSON,
and CRD schema nodes mixing every keyword the validator, pruner and
defaulter handle (including invalid combinations a user might send)."""

from __future__ import annotations

from hypothesis import strategies as st

json_scalars = (
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text()
)
json_values = st.recursive(
    json_scalars,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=5), children, max_size=4)
    ),
    max_leaves=20,
)
_keywords = st.fixed_dictionaries(
    {},
    optional={
        "type": st.sampled_from(["object", "array", "string", "integer", "number", "boolean"]),
        "nullable": st.booleans(),
        "minimum": st.integers(-5, 5) | st.floats(-5, 5),
        "exclusiveMaximum": st.booleans(),
        "maximum": st.integers(-5, 5),
        "multipleOf": st.sampled_from([0.5, 2, 3, -1, 0]),
        "maxLength": st.integers(0, 4),
        "pattern": st.sampled_from(["^a", "[", "b$", "(?=x)"]),
        "format": st.sampled_from(["date-time", "int32", "byte", "uri", "hostname", "email"]),
        "enum": st.lists(json_scalars, max_size=3),
        "minItems": st.integers(0, 3),
        "uniqueItems": st.booleans(),
        "maxProperties": st.integers(0, 3),
        "required": st.lists(st.text(max_size=3), max_size=2),
        "additionalProperties": st.booleans(),
        "x-kubernetes-int-or-string": st.booleans(),
        "x-kubernetes-list-type": st.sampled_from(["set", "map", "atomic"]),
        "x-kubernetes-list-map-keys": st.lists(st.text(max_size=3), max_size=2),
        "x-kubernetes-embedded-resource": st.booleans(),
    },
)
schemas = st.recursive(
    _keywords,
    lambda children: st.builds(
        lambda base, props, items, any_of: {
            **base,
            **({"properties": props} if props else {}),
            **({"items": items} if items is not None else {}),
            **({"anyOf": any_of} if any_of else {}),
        },
        _keywords,
        st.dictionaries(st.text(max_size=3), children, max_size=3),
        st.none() | children,
        st.lists(children, max_size=2),
    ),
    max_leaves=8,
)
