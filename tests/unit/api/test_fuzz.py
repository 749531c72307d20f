"""Property tests: validation and defaulting never raise on any JSON, every rejection
names a field, and what validation accepts, defaulting keeps valid and the CRD
schema (as kube-apiserver checks it) accepts too.

Each kind gets 1,000 specs: its valid examples and mutations of them (wrong types,
negative numbers, bad quantities, missing and unknown fields, long and unicode
strings, deep nesting); the strategies are in ``fuzzing.py``.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mo_devkit.localcluster.apiserver.schema.validation import validate as apiserver_validate
from mo_operator.api.defaulting import default
from mo_operator.api.kinds import KINDS
from mo_operator.api.normalize import kind_schema
from mo_operator.api.validation import FieldError, validate_create, validate_update

from .fuzzing import FUZZ, JUNK, SPECIALS, mutated, names_a_field


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_validation_and_defaulting_are_total_and_consistent(kind: str) -> None:
    """The CRD checks mirror kube-apiserver's structural schema validation
    (https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definitions/#validation)."""
    schema = kind_schema(KINDS[kind].model)

    @FUZZ
    @given(mutated(kind))
    def check(obj: dict[str, Any]) -> None:
        before = copy.deepcopy(obj)
        errors = validate_create(kind, obj)
        defaulted = default(kind, obj)
        assert obj == before, "validation and defaulting must not mutate their input"
        assert all(isinstance(e, FieldError) and names_a_field(e, obj, kind) for e in errors), errors
        assert default(kind, defaulted) == defaulted
        if not errors:
            assert validate_create(kind, defaulted) == []
            assert validate_update(kind, defaulted, defaulted) == []
            assert apiserver_validate(defaulted, schema) == []

    check()


@given(st.one_of(JUNK, SPECIALS), st.sampled_from([*sorted(KINDS), "Pod", ""]))
@settings(max_examples=300, deadline=None, database=None)
def test_any_json_at_all_is_answered_not_raised(value: Any, kind: str) -> None:
    errors = validate_create(kind, value)
    assert all(e.path and e.message for e in errors)
    if not isinstance(value, dict) or kind not in KINDS:
        assert errors
    assert all(e.path and e.message for e in validate_update(kind, value, value))
    default(kind, value)
