"""Properties of the patch engines over generated documents.

- RFC 7386: a merge patch computed as the difference of two documents
  transforms the first into the second.
- Strategic merge patch without any patch strategy is JSON merge patch
  (k8s.io/apimachinery strategicpatch: lists without ``patchStrategy:merge``
  are replaced, maps merge, null deletes).
- Server-side apply (https://kubernetes.io/docs/reference/using-api/server-side-apply/):
  applying the same configuration twice changes nothing; an applier owns
  exactly the fields of its configuration; when one manager applies a new
  configuration, the fields only the old one set are removed, leaving what
  a fresh apply of the new configuration would have made. (Not for
  configurations holding empty maps or keyed lists: a container emptied by
  removal disappears, where a fresh apply keeps the empty one, as in
  structured-merge-diff's ``RemoveItems``; the generators avoid them.)
- ``fieldsV1`` encoding round-trips (structured-merge-diff fieldpath).
"""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from mo_devkit.localcluster.apiserver.patching.fieldpath import from_fields_v1
from mo_devkit.localcluster.apiserver.patching.managed_fields import fields_of, server_side_apply
from mo_devkit.localcluster.apiserver.patching.merge_patch import apply_merge_patch, create_merge_patch
from mo_devkit.localcluster.apiserver.patching.strategic_merge import apply_strategic_merge_patch
from mo_devkit.localcluster.apiserver.patching.typeinfo import TypeInfo, schema_type_info

KEYS = st.sampled_from(["a", "b", "c", "d"])
SCALARS = st.one_of(st.booleans(), st.integers(-3, 3), st.text("xy", max_size=2))
NULL_FREE = st.recursive(
    SCALARS, lambda c: st.one_of(st.lists(c, max_size=3), st.dictionaries(KEYS, c, max_size=3)), max_leaves=12
)
ANY_JSON = st.recursive(
    st.one_of(SCALARS, st.none()),
    lambda c: st.one_of(st.lists(c, max_size=3), st.dictionaries(KEYS, c, max_size=3)),
    max_leaves=12,
)
# Merge patches: null (delete) only as an object member, never inside lists.
PATCH_VALUES = st.recursive(
    st.one_of(SCALARS, st.none()),
    lambda c: st.one_of(st.lists(NULL_FREE, max_size=3), st.dictionaries(KEYS, c, max_size=3)),
    max_leaves=12,
)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(KEYS, NULL_FREE, max_size=4), st.dictionaries(KEYS, NULL_FREE, max_size=4))
def test_merge_patch_of_a_diff_transforms_one_document_into_the_other(
    a: dict[str, Any], b: dict[str, Any]
) -> None:
    patch = create_merge_patch(a, b)
    assert apply_merge_patch(copy.deepcopy(a), patch) == b


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(KEYS, ANY_JSON, max_size=4), st.dictionaries(KEYS, PATCH_VALUES, max_size=4))
def test_strategic_patch_without_strategies_is_a_merge_patch(
    doc: dict[str, Any], patch: dict[str, Any]
) -> None:
    plain = TypeInfo.from_rules({})
    assert apply_strategic_merge_patch(doc, patch, plain) == apply_merge_patch(copy.deepcopy(doc), patch)


SCHEMA = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "properties": {
                "replicas": {"type": "integer"},
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                "groups": {
                    "type": "array",
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["name", "zone"],
                    "items": {
                        "type": "object",
                        "properties": {
                            "name": {"type": "string"},
                            "zone": {"type": "string"},
                            "size": {"type": "integer"},
                            "tags": {
                                "type": "array",
                                "x-kubernetes-list-type": "set",
                                "items": {"type": "string"},
                            },
                        },
                    },
                },
                "flags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
                "args": {"type": "array", "items": {"type": "string"}},
                "ref": {"type": "object", "x-kubernetes-map-type": "atomic"},
                "nested": {
                    "type": "object",
                    "properties": {"a": {"type": "object", "properties": {"b": {"type": "string"}}}},
                },
            },
        }
    },
}
THING = schema_type_info(SCHEMA)
WORDS = st.sampled_from(["p", "q", "r", "s"])
GROUPS = st.lists(
    st.fixed_dictionaries(
        {"name": WORDS},
        optional={"zone": WORDS, "size": st.integers(0, 3), "tags": st.lists(WORDS, min_size=1, unique=True)},
    ),
    min_size=1,
    max_size=3,
    unique_by=lambda g: (g["name"], g.get("zone")),
)
SPECS = st.fixed_dictionaries(
    {},
    optional={
        "replicas": st.integers(0, 3),
        "labels": st.dictionaries(WORDS, WORDS, min_size=1, max_size=3),
        "groups": GROUPS,
        "flags": st.lists(WORDS, min_size=1, max_size=3, unique=True),
        "args": st.lists(WORDS, max_size=3),
        "ref": st.dictionaries(WORDS, WORDS, max_size=2),
        "nested": st.fixed_dictionaries({"a": st.fixed_dictionaries({"b": WORDS})}),
    },
)
CONFIGS = st.builds(
    lambda spec, with_spec: {
        "apiVersion": "ex.io/v1",
        "kind": "Thing",
        "metadata": {"name": "t"},
        **({"spec": spec} if with_spec and spec else {}),
    },
    SPECS,
    st.booleans(),
)


def apply(
    live: dict[str, Any] | None, config: dict[str, Any], manager: str, now: str, force: bool = False
) -> dict[str, Any]:
    out = server_side_apply(
        copy.deepcopy(live), copy.deepcopy(config), manager=manager, force=force, type_info=THING, now=now
    )
    out["metadata"].setdefault("uid", "u")
    return out


def without_times(obj: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    for entry in out["metadata"].get("managedFields", []):
        entry.pop("time", None)
    return out


def owned_by(obj: dict[str, Any], manager: str) -> Any:
    entry = next(e for e in obj["metadata"]["managedFields"] if e["manager"] == manager)
    return from_fields_v1(entry["fieldsV1"])


@settings(max_examples=150, deadline=None)
@given(CONFIGS)
def test_applying_twice_changes_nothing(config: dict[str, Any]) -> None:
    first = apply(None, config, "m", "2024-01-01T00:00:00Z")
    assert apply(first, config, "m", "2024-01-01T00:05:00Z") == first


@settings(max_examples=150, deadline=None)
@given(CONFIGS, CONFIGS)
def test_a_forced_applier_owns_exactly_its_configuration(c1: dict[str, Any], c2: dict[str, Any]) -> None:
    first = apply(None, c1, "m1", "2024-01-01T00:00:00Z")
    second = apply(first, c2, "m2", "2024-01-01T00:01:00Z", force=True)
    config_fields = fields_of({"spec": c2["spec"]}, THING) if "spec" in c2 else None
    if config_fields is not None and not config_fields.is_empty():
        assert owned_by(second, "m2") == config_fields
    assert apply(second, c2, "m2", "2024-01-01T00:02:00Z") == second


@settings(max_examples=150, deadline=None)
@given(CONFIGS, CONFIGS)
def test_reapplying_leaves_what_a_fresh_apply_makes(c1: dict[str, Any], c2: dict[str, Any]) -> None:
    updated = apply(apply(None, c1, "m", "2024-01-01T00:00:00Z"), c2, "m", "2024-01-01T00:01:00Z")
    fresh = apply(None, c2, "m", "2024-01-01T00:01:00Z")
    assert without_times(updated) == without_times(fresh)


@settings(max_examples=150, deadline=None)
@given(CONFIGS)
def test_fields_v1_round_trips(config: dict[str, Any]) -> None:
    fields = fields_of(config, THING)
    assert from_fields_v1(fields.to_fields_v1()) == fields
