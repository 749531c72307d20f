"""Custom resource validation messages and paths.

Sources: apiextensions-apiserver pkg/apiserver/validation/validation.go
(``kubeOpenAPIResultToFieldErrors``), kube-openapi pkg/validation/validate and
pkg/validation/errors/schema.go (the message texts), apimachinery
pkg/util/validation/field/errors.go (``ErrorBody`` of v1.30), and the CRD docs
https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definitions/#validation
"""

from __future__ import annotations

from typing import Any

import pytest
from crd_schema_strategies import json_values, schemas
from hypothesis import given, settings

from mo_devkit.localcluster.apiserver.schema.validation import Cause, validate


def obj_schema(**props: Any) -> dict[str, Any]:
    return {"type": "object", "properties": {"spec": {"type": "object", "properties": props}}}


def check(spec: dict[str, Any], **props: Any) -> list[Cause]:
    return validate({"spec": spec}, obj_schema(**props))


def test_type_mismatch_message() -> None:
    """TypeInvalid carries the JSON type seen, quoted, as in the docs' example
    output ``spec.replicas in body must be of type integer: "string"``."""
    assert check({"replicas": "3"}, replicas={"type": "integer"}) == [
        Cause(
            "FieldValueTypeInvalid",
            'Invalid value: "string": spec.replicas in body must be of type integer: "string"',
            "spec.replicas",
        )
    ]


@pytest.mark.parametrize(
    ("value", "seen"),
    [({}, "object"), ([], "array"), (True, "boolean"), (1.5, "number")],
)
def test_type_names_of_json_values(value: Any, seen: str) -> None:
    """kube-openapi type.go: schemaInfoForType names map, slice, bool and float64."""
    [cause] = check({"n": value}, n={"type": "integer"})
    assert cause.message == f'Invalid value: "{seen}": spec.n in body must be of type integer: "{seen}"'


def test_integral_float_is_an_integer() -> None:
    """type.go accepts a float64 with an integral value for type integer (isFloatInt)."""
    assert check({"n": 3.0}, n={"type": "integer"}) == []


def test_null_needs_nullable() -> None:
    """A null is "null" to the type validator unless the schema is nullable."""
    assert check({"n": None}, n={"type": "integer"}) == [
        Cause(
            "FieldValueTypeInvalid",
            'Invalid value: "null": spec.n in body must be of type integer: "null"',
            "spec.n",
        )
    ]
    assert check({"n": None}, n={"type": "integer", "nullable": True}) == []


def test_required() -> None:
    schema = obj_schema(a={"type": "string"})
    schema["properties"]["spec"]["required"] = ["a", "b"]
    assert validate({"spec": {"a": "x"}}, schema) == [Cause("FieldValueRequired", "Required value", "spec.b")]


def test_enum_not_supported() -> None:
    """EnumFailCode becomes field.NotSupported with every value quoted."""
    [cause] = check({"mode": "x"}, mode={"type": "string", "enum": ["a", "b"]})
    assert cause == Cause(
        "FieldValueNotSupported", 'Unsupported value: "x": supported values: "a", "b"', "spec.mode"
    )


def test_enum_non_string_values_are_json() -> None:
    [cause] = check({"n": 3}, n={"type": "integer", "enum": [1, 2]})
    assert cause.message == 'Unsupported value: 3: supported values: "1", "2"'


def test_enum_converts_numbers_like_go() -> None:
    """basicCommonValidator converts the value to the enum member's Go type before
    DeepEqual: 2.0 matches 2 (and so does 2.5, truncated)."""
    assert check({"n": 2.0}, n={"enum": [2], "type": "number"}) == []
    assert check({"n": 2.5}, n={"enum": [2], "type": "number"}) == []


@pytest.mark.parametrize(
    ("keyword", "value", "message"),
    [
        ({"minimum": 1}, 0, "Invalid value: 0: spec.n in body should be greater than or equal to 1"),
        (
            {"minimum": 1, "exclusiveMinimum": True},
            1,
            "Invalid value: 1: spec.n in body should be greater than 1",
        ),
        ({"maximum": 10}, 11, "Invalid value: 11: spec.n in body should be less than or equal to 10"),
        (
            {"maximum": 10, "exclusiveMaximum": True},
            10,
            "Invalid value: 10: spec.n in body should be less than 10",
        ),
        ({"maximum": 1.5}, 2.5, "Invalid value: 2.5: spec.n in body should be less than or equal to 1.5"),
        ({"multipleOf": 3}, 7, "Invalid value: 7: spec.n in body should be a multiple of 3"),
        ({"multipleOf": 0.5}, 0.7, "Invalid value: 0.7: spec.n in body should be a multiple of 0.5"),
    ],
)
def test_numeric_bounds(keyword: dict[str, Any], value: Any, message: str) -> None:
    """errors/schema.go: minIncFail, minExcFail, maxIncFail, maxExcFail, multipleOfFail."""
    [cause] = check({"n": value}, n={"type": "number", **keyword})
    assert cause == Cause("FieldValueInvalid", message, "spec.n")


def test_integer_bound_is_truncated_like_go() -> None:
    """values.go MaximumNativeType compares an int64 value with int64(max)."""
    [cause] = check({"n": 11}, n={"type": "integer", "maximum": 10.9})
    assert cause.message == "Invalid value: 11: spec.n in body should be less than or equal to 10"


def test_string_length_and_pattern() -> None:
    """TooLongFailCode becomes field.TooLong (v1.30: "must have at most N bytes");
    the string validator reports only its first failure."""
    schema = {"type": "string", "maxLength": 3, "minLength": 2, "pattern": "^[a-z]+$"}
    assert check({"s": "abcd"}, s=schema) == [
        Cause("FieldValueTooLong", "Too long: must have at most 3 bytes", "spec.s")
    ]
    assert check({"s": "a"}, s=schema) == [
        Cause(
            "FieldValueInvalid",
            'Invalid value: "a": spec.s in body should be at least 2 chars long',
            "spec.s",
        )
    ]
    assert check({"s": "A1"}, s=schema) == [
        Cause("FieldValueInvalid", "Invalid value: \"A1\": spec.s in body should match '^[a-z]+$'", "spec.s")
    ]


def test_pattern_dollar_is_go_end_of_text() -> None:
    """RE2's $ does not match before a trailing newline (Python's would)."""
    assert len(check({"s": "abc\n"}, s={"type": "string", "pattern": "^[a-z]+$"})) == 1


def test_length_counts_characters() -> None:
    """values.go MaxLength counts runes (utf8.RuneCount), not bytes."""
    assert check({"s": "ééé"}, s={"type": "string", "maxLength": 3}) == []


@pytest.mark.parametrize(
    ("fmt", "good", "bad"),
    [
        ("date-time", "2024-01-02T03:04:05Z", "2024-01-02"),
        ("date", "2024-02-29", "2023-02-29"),
        ("byte", "aGVsbG8=", "hello!"),
        ("uuid", "123e4567-e89b-12d3-a456-426614174000", "123"),
        ("ipv4", "10.0.0.1", "10.0.0.256"),
        ("ipv6", "::1", "10.0.0.1"),
        ("cidr", "10.0.0.0/8", "10.0.0.0/33"),
        ("hostname", "example.com", "-bad-.com"),
        ("duration", "1h30m", "soon"),
        ("email", "a@example.com", "nobody"),
        ("mac", "00:00:5e:00:53:01", "00:00:5e"),
        ("uri", "https://example.com/x", "relative/path"),
    ],
)
def test_string_formats(fmt: str, good: str, bad: str) -> None:
    """strfmt formats kept by apiextensions (validation/formats.go); a failure is
    an InvalidType naming the format."""
    schema = {"type": "string", "format": fmt}
    assert check({"s": good}, s=schema) == []
    assert check({"s": bad}, s=schema) == [
        Cause(
            "FieldValueTypeInvalid",
            f'Invalid value: "{bad}": spec.s in body must be of type {fmt}: "{bad}"',
            "spec.s",
        )
    ]


def test_unsupported_format_is_ignored() -> None:
    """StripUnsupportedFormatsPostProcess drops formats CRDs do not support."""
    assert check({"s": "anything"}, s={"type": "string", "format": "my-format"}) == []


def test_int32_format_with_wrong_type_names_the_format() -> None:
    """type.go: a non-string value failing a format reports the format and the
    value's own format (float64)."""
    [cause] = check({"n": 1.5}, n={"type": "integer", "format": "int32"})
    assert cause.message == 'Invalid value: "float64": spec.n in body must be of type int32: "float64"'


def test_array_keywords_and_item_paths() -> None:
    """Items are validated at path[i]; MaxItems becomes field.TooMany."""
    schema = {
        "type": "array",
        "minItems": 2,
        "maxItems": 3,
        "uniqueItems": True,
        "items": {"type": "integer"},
    }
    assert check({"l": [1]}, l=schema) == [
        Cause("FieldValueInvalid", "Invalid value: 1: spec.l in body should have at least 2 items", "spec.l")
    ]
    assert check({"l": [1, 2, 3, 4]}, l=schema) == [
        Cause("FieldValueTooMany", "Too many: 4: must have at most 3 items", "spec.l")
    ]
    assert check({"l": [1, 1]}, l=schema) == [
        Cause(
            "FieldValueInvalid", 'Invalid value: "": spec.l in body shouldn\'t contain duplicates', "spec.l"
        )
    ]
    assert check({"l": [1, "x"]}, l=schema)[0].field == "spec.l[1]"


def test_nested_paths_like_kubernetes_prints_them() -> None:
    schema = obj_schema(
        cnGroups={
            "type": "array",
            "items": {"type": "object", "properties": {"replicas": {"type": "integer", "minimum": 0}}},
        }
    )
    [cause] = validate({"spec": {"cnGroups": [{"replicas": 1}, {"replicas": -1}]}}, schema)
    assert cause.field == "spec.cnGroups[1].replicas"
    assert (
        cause.message
        == "Invalid value: -1: spec.cnGroups[1].replicas in body should be greater than or equal to 0"
    )


def test_property_counts_and_additional_properties() -> None:
    """TooFewProperties is a plain Invalid; TooManyProperties is field.TooMany;
    additionalProperties values are validated at ``parent.key``."""
    schema = {
        "type": "object",
        "minProperties": 1,
        "maxProperties": 2,
        "additionalProperties": {"type": "string"},
    }
    assert check({"m": {}}, m=schema) == [
        Cause(
            "FieldValueInvalid",
            "Invalid value: 0: spec.m in body should have at least 1 properties",
            "spec.m",
        )
    ]
    assert check({"m": {"a": "1", "b": "2", "c": "3"}}, m=schema) == [
        Cause("FieldValueTooMany", "Too many: 3: must have at most 2 items", "spec.m")
    ]
    assert check({"m": {"a": 1}}, m=schema)[0].field == "spec.m.a"


def test_additional_properties_false() -> None:
    [cause] = check({"m": {"x": 1}}, m={"type": "object", "additionalProperties": False})
    assert cause == Cause(
        "FieldValueInvalid", 'Invalid value: "x": spec.m.x in body is a forbidden property', "spec.m"
    )


def test_int_or_string() -> None:
    """x-kubernetes-int-or-string validates against the type list integer,string."""
    schema = {"x-kubernetes-int-or-string": True}
    assert check({"v": 1}, v=schema) == []
    assert check({"v": "1Gi"}, v=schema) == []
    [cause] = check({"v": True}, v=schema)
    assert (
        cause.message == 'Invalid value: "boolean": spec.v in body must be of type integer,string: "boolean"'
    )


def test_junctor_failures_are_reported_at_the_root() -> None:
    """anyOf/oneOf/allOf/not failures are composite errors, which
    kubeOpenAPIResultToFieldErrors reports at the (nil) root path."""
    any_of = {"type": "object", "anyOf": [{"required": ["a"]}, {"required": ["b"]}]}
    causes = check({"x": {}}, x=any_of)
    assert causes[0] == Cause(
        "FieldValueInvalid", 'Invalid value: "": "spec.x" must validate at least one schema (anyOf)', "<nil>"
    )
    assert causes[1] == Cause("FieldValueRequired", "Required value", "spec.x.a")
    one_of = {"type": "object", "oneOf": [{"required": ["a"]}, {"required": ["b"]}]}
    assert check({"x": {"a": 1, "b": 1}}, x=one_of) == [
        Cause(
            "FieldValueInvalid",
            'Invalid value: "": "spec.x" must validate one and only one schema (oneOf). Found 2 valid alternatives',
            "<nil>",
        )
    ]
    not_schema = {"type": "object", "not": {"required": ["a"]}}
    assert check({"x": {"a": 1}}, x=not_schema)[0].message.endswith(
        '"spec.x" must not validate the schema (not)'
    )
    all_of = {"type": "integer", "allOf": [{"minimum": 5}]}
    messages = [c.message for c in check({"x": 1}, x=all_of)]
    assert 'Invalid value: "": "spec.x" must validate all the schemas (allOf). None validated' in messages


def test_any_of_reports_the_closest_branch() -> None:
    """schema_props.go keeps the failing branch with the most passed checks."""
    schema = {
        "anyOf": [{"type": "string"}, {"type": "integer", "minimum": 10}],
        "x-kubernetes-int-or-string": True,
    }
    causes = check({"x": 3}, x=schema)
    assert [c.message for c in causes][
        1
    ] == "Invalid value: 3: spec.x in body should be greater than or equal to 10"


def test_root_path_prefixes_fields_not_messages() -> None:
    """The status subresource validates status with fldPath "status"; the message
    keeps the path relative to the validated value."""
    schema = {"type": "object", "properties": {"replicas": {"type": "integer"}}}
    [cause] = validate({"replicas": "x"}, schema, root_path="status")
    assert cause.field == "status.replicas"
    assert cause.message == 'Invalid value: "string": replicas in body must be of type integer: "string"'


def test_preserved_unknown_fields_are_not_validated() -> None:
    assert (
        check(
            {"x": {"anything": [1, {"b": None}]}},
            x={"type": "object", "x-kubernetes-preserve-unknown-fields": True},
        )
        == []
    )


def test_list_type_set_duplicates() -> None:
    """listtype/validation.go: the second occurrence is a Duplicate value."""
    schema = {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}}
    assert check({"tags": ["a", "b", "a", "a"]}, tags=schema) == [
        Cause("FieldValueDuplicate", 'Duplicate value: "a"', "spec.tags[2]")
    ]


def test_list_type_map_duplicate_keys() -> None:
    """A duplicated map-list key is shown as a Go map literal (v1.30 %#v)."""
    schema = {
        "type": "array",
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["name"],
        "items": {"type": "object", "properties": {"name": {"type": "string"}, "port": {"type": "integer"}}},
    }
    assert check({"l": [{"name": "a"}, {"name": "b"}, {"name": "a", "port": 1}]}, l=schema) == [
        Cause("FieldValueDuplicate", 'Duplicate value: map[string]interface {}{"name":"a"}', "spec.l[2]")
    ]
    two_keys = {**schema, "x-kubernetes-list-map-keys": ["name", "port"]}
    assert check({"l": [{"name": "a", "port": 1}, {"name": "a", "port": 1}]}, l=two_keys) == [
        Cause(
            "FieldValueDuplicate",
            'Duplicate value: map[string]interface {}{"name":"a", "port":1}',
            "spec.l[1]",
        )
    ]


def test_embedded_resource_type_meta() -> None:
    """objectmeta/validation.go: embedded resources need apiVersion and kind; kind
    must be a DNS-1035 label up to case; metadata is ObjectMeta-validated."""
    schema = {
        "type": "object",
        "x-kubernetes-embedded-resource": True,
        "x-kubernetes-preserve-unknown-fields": True,
    }
    assert check({"t": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x"}}}, t=schema) == []
    causes = check({"t": {"metadata": {"name": "a/b", "labels": {"bad key!": "v"}}}}, t=schema)
    fields = [(c.field, c.reason) for c in causes]
    assert ("spec.t.apiVersion", "FieldValueRequired") in fields
    assert ("spec.t.kind", "FieldValueRequired") in fields
    assert ("spec.t.metadata.name", "FieldValueInvalid") in fields
    assert ("spec.t.metadata.labels", "FieldValueInvalid") in fields
    [kind] = check({"t": {"apiVersion": "v1", "kind": "No_Good"}}, t=schema)
    assert kind.message.startswith(
        'Invalid value: "No_Good": may have mixed case, but should otherwise match: '
    )


@settings(max_examples=300, deadline=None)
@given(json_values, schemas)
def test_validation_never_raises_on_arbitrary_json(value: Any, schema: dict[str, Any]) -> None:
    """Whatever a client sends and whatever a CRD says, validation answers with
    causes instead of crashing the request."""
    causes = validate({"spec": value}, {"type": "object", "properties": {"spec": schema}})
    assert all(isinstance(c, Cause) and c.reason.startswith(("Field", "Internal")) for c in causes)
