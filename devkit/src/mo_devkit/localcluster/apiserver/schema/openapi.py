"""The OpenAPI value validation kube-apiserver runs on custom resources: a
port of ``k8s.io/kube-openapi/pkg/validation/validate`` as apiextensions
configures it, followed by ``kubeOpenAPIResultToFieldErrors``.

Fidelity matters here more than elegance: clients and users read these
messages, and the choice among ``anyOf`` failures depends on the same
"match count" bookkeeping the Go code keeps. Each validator below names its
Go counterpart; they run in the same order and count matches the same way.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from . import fielderrors as fe
from . import formats, nodes
from .fielderrors import Cause
from .goformat import as_go_number, go_deep_equal, go_float_v, go_json, go_kind, go_quote, go_scalar_v
from .goregex import PatternError, compile_go
from .nodes import Schema

_IN = "body"
_MAX_JSON_FLOAT = float(2**53 - 1)


@dataclass
class _Error:
    """An ``errors.Validation`` (``code`` set) or a composite message (``code`` None)."""

    message: str
    code: str | None = None
    name: str = ""
    value: Any = None
    valid: Any = None
    values: list[Any] = field(default_factory=list)


@dataclass
class _Result:
    errors: list[_Error] = field(default_factory=list)
    matches: int = 0

    def add(self, *errors: _Error) -> None:
        seen = {e.message for e in self.errors}
        for e in errors:
            if e.message not in seen:
                self.errors.append(e)
                seen.add(e.message)

    def merge(self, *others: _Result | None) -> _Result:
        for other in others:
            if other is not None:
                self.add(*other.errors)
                self.matches += other.matches
        return self

    @property
    def valid(self) -> bool:
        return not self.errors


def _failed(error: _Error) -> _Result:
    return _Result([error])


def _in(name: str, text: str) -> str:
    return f"{name} in {_IN} {text}"


# ------------------------------------------------------------- numbers


def _is_json_integer(f: float) -> bool:
    """``swag.IsFloat64AJSONInteger``: integral (to a relative 1e-9) within ±(2^53-1)."""
    if math.isnan(f) or math.isinf(f) or abs(f) > _MAX_JSON_FLOAT:
        return False
    g = float(math.trunc(f))
    if f == g:
        return True
    diff = abs(f - g)
    if f == 0 or g == 0 or diff < 5e-324:
        return diff < 1e-8 * 5e-324
    return diff / min(abs(f) + abs(g), 1.7976931348623157e308) < 1e-9


def _to_int64(f: float) -> int:
    """Go's ``int64(f)``: truncation (saturated where Go would be undefined)."""
    if math.isnan(f):
        return 0
    return max(-(2**63), min(2**63 - 1, math.trunc(f)))


def _fmt_number(n: int | float) -> str:
    return str(n) if isinstance(n, int) else go_float_v(n)


def _bound_error(code: str, path: str, bound: int | float, exclusive: bool, data: Any) -> _Error:
    if code == "max":
        text = "should be less than" if exclusive else "should be less than or equal to"
    else:
        text = "should be greater than" if exclusive else "should be greater than or equal to"
    return _Error(_in(path, f"{text} {_fmt_number(bound)}"), code, path, data)


def _number_validator(s: Schema, data: int | float, path: str) -> _Result:
    """``numberValidator``: multipleOf, minimum, maximum in the value's native type."""
    res = _Result()
    native_int = isinstance(data, int)
    multiple = s.get("multipleOf")
    if isinstance(multiple, int | float) and not isinstance(multiple, bool):
        factor: int | float = _to_int64(float(multiple)) if native_int else float(multiple)
        if factor <= 0:
            msg = f"factor MultipleOf declared for {path} must be positive: {_fmt_number(factor)}"
            res.add(_Error(msg, "must_be_positive", path, factor))
        else:
            if native_int:
                ok = data % factor == 0
            else:
                mult = (1 / factor * data) if factor < 1 else (data / factor)
                ok = _is_json_integer(mult)
            if not ok:
                msg = _in(path, f"should be a multiple of {_fmt_number(factor)}")
                res.add(_Error(msg, "multiple_of", path, data))
    for keyword, code, exclusive_key in (
        ("minimum", "min", "exclusiveMinimum"),
        ("maximum", "max", "exclusiveMaximum"),
    ):
        bound = s.get(keyword)
        if not isinstance(bound, int | float) or isinstance(bound, bool):
            continue
        exclusive = s.get(exclusive_key) is True
        limit: int | float = _to_int64(float(bound)) if native_int else float(bound)
        if code == "min":
            failed = data <= limit if exclusive else data < limit
        else:
            failed = data >= limit if exclusive else data > limit
        if failed:
            res.add(_bound_error(code, path, limit, exclusive, data))
    res.matches += 1
    return res


# ------------------------------------------------------------- strings


def _string_validator(s: Schema, data: str, path: str) -> _Result | None:
    """``stringValidator``: maxLength, minLength, pattern; the first failure only."""
    max_length = s.get("maxLength")
    if isinstance(max_length, int) and len(data) > max_length:
        return _failed(
            _Error(
                _in(path, f"should be at most {max_length} chars long"), "too_long", path, data, max_length
            )
        )
    min_length = s.get("minLength")
    if isinstance(min_length, int) and len(data) < min_length:
        return _failed(
            _Error(
                _in(path, f"should be at least {min_length} chars long"), "too_short", path, data, min_length
            )
        )
    pattern = s.get("pattern")
    if isinstance(pattern, str) and pattern:
        try:
            matched = compile_go(pattern).search(data) is not None
        except PatternError as e:
            return _failed(
                _Error(
                    _in(path, f"should match '{pattern}, but pattern is invalid: {e}'"), "pattern", path, data
                )
            )
        if not matched:
            return _failed(_Error(_in(path, f"should match '{pattern}'"), "pattern", path, data))
    return None


def _type_error(path: str, type_name: str, value: Any) -> _Error:
    if isinstance(value, str):
        message = _in(path, f"must be of type {type_name}: {go_quote(value)}")
    else:
        message = _in(path, f"must be of type {type_name}")
    return _Error(message, "type", path, value)


def _schema_info(data: Any) -> tuple[str, str]:
    kind = go_kind(data)
    return {
        "bool": ("boolean", ""),
        "string": ("string", ""),
        "int64": ("integer", "int64"),
        "float64": ("number", "float64"),
        "slice": ("array", ""),
        "map": ("object", ""),
    }.get(kind, ("", ""))


def _type_validator(types: list[str], nullable: bool, fmt: str, data: Any, path: str) -> _Result:
    """``typeValidator.Validate``."""
    if data is None:
        if types and "null" not in types and not nullable:
            return _failed(_type_error(path, ",".join(types), "null"))
        return _Result(matches=1)
    kind = go_kind(data)
    sch_type, value_format = _schema_info(data)
    is_float_int = sch_type == "number" and _is_json_integer(float(data)) and "integer" in types
    is_int_float = sch_type == "integer" and "number" in types
    if (
        kind not in ("string", "slice")
        and fmt
        and not (sch_type in types or value_format == fmt or is_float_int or is_int_float)
    ):
        return _failed(_type_error(path, fmt, value_format))
    if "number" not in types and "integer" not in types and fmt and kind in ("string", "slice"):
        return _Result(matches=1)
    if not (sch_type in types or is_float_int or is_int_float):
        return _failed(_type_error(path, ",".join(types), sch_type))
    return _Result(matches=1)


def _enum_validator(s: Schema, data: Any, path: str) -> _Result | None:
    """``basicCommonValidator``: enum membership with Go's type conversions."""
    enum = s.get("enum")
    if not isinstance(enum, list) or not enum:
        return None
    if data is not None and any(_enum_matches(data, e) for e in enum):
        return None
    return _failed(_Error(_in(path, f"should be one of {_go_list_v(enum)}"), "enum", path, data, values=enum))


def _go_list_v(values: list[Any]) -> str:
    def one(v: Any) -> str:
        if isinstance(v, bool | int | float):
            return go_scalar_v(v)
        if v is None:
            return "<nil>"
        return v if isinstance(v, str) else go_json(v)

    return "[" + " ".join(one(v) for v in values) + "]"


def _enum_matches(data: Any, enum_value: Any) -> bool:
    """``reflect.Value.Convert`` then ``DeepEqual``: 1.0 matches 1 (and so does 1.5)."""
    data_kind, enum_kind = go_kind(data), go_kind(enum_value)
    if enum_kind == "nil":
        return False
    if data_kind == enum_kind:
        return go_deep_equal(data, enum_value)
    if data_kind == "float64" and enum_kind == "int64":
        return bool(_to_int64(float(data)) == enum_value)
    if data_kind == "int64" and enum_kind == "float64":
        return float(data) == float(enum_value)
    if data_kind == "int64" and enum_kind == "string":
        return bool(enum_value == (chr(data) if 0 <= data <= 0x10FFFF else "\ufffd"))
    return False


# ------------------------------------------------------------- composition


def _schema_props_validator(s: Schema, data: Any, path: str) -> _Result:
    """``schemaPropsValidator``: anyOf, oneOf, allOf, not."""
    main = _Result()
    any_of = nodes.subschemas(s, "anyOf")
    if any_of:
        best: _Result | None = None
        first_success: _Result | None = None
        for sub in any_of:
            result = validate_node(sub, data, path)
            if result.valid:
                best, first_success = None, result
                break
            if best is None or result.matches > best.matches:
                best = result
        if first_success is None:
            main.add(_Error(f"{go_quote(path)} must validate at least one schema (anyOf)"))
        main.merge(best if best is not None else first_success)
    one_of = nodes.subschemas(s, "oneOf")
    if one_of:
        best = first_success = None
        validated = 0
        for sub in one_of:
            result = validate_node(sub, data, path)
            if result.valid:
                validated += 1
                best = None
                first_success = first_success or result
                continue
            if validated == 0 and (best is None or result.matches > best.matches):
                best = result
        if validated != 1:
            detail = "Found none valid" if validated == 0 else f"Found {validated} valid alternatives"
            main.add(_Error(f"{go_quote(path)} must validate one and only one schema (oneOf). {detail}"))
            main.merge(best)
        else:
            main.merge(first_success)
    all_of = nodes.subschemas(s, "allOf")
    if all_of:
        validated = 0
        for sub in all_of:
            result = validate_node(sub, data, path)
            validated += result.valid
            main.merge(result)
        if validated != len(all_of):
            detail = ". None validated" if validated == 0 else ""
            main.add(_Error(f"{go_quote(path)} must validate all the schemas (allOf){detail}"))
    not_schema = s.get("not")
    if isinstance(not_schema, dict) and validate_node(not_schema, data, path).valid:
        main.add(_Error(f"{go_quote(path)} must not validate the schema (not)"))
    main.matches += 1
    return main


# ------------------------------------------------------------- containers


def _slice_validator(s: Schema, data: list[Any], path: str) -> _Result:
    """``schemaSliceValidator``: items, minItems, maxItems, uniqueItems."""
    result = _Result()
    item_schema = nodes.items(s)
    if item_schema is not None:
        for i, value in enumerate(data):
            result.merge(validate_node(item_schema, value, f"{path}[{i}]"))
    size = len(data)
    min_items = s.get("minItems")
    if isinstance(min_items, int) and size < min_items:
        result.add(
            _Error(_in(path, f"should have at least {min_items} items"), "min_items", path, size, min_items)
        )
    max_items = s.get("maxItems")
    if isinstance(max_items, int) and size > max_items:
        result.add(
            _Error(_in(path, f"should have at most {max_items} items"), "max_items", path, size, max_items)
        )
    if s.get("uniqueItems") is True and _has_duplicates(data):
        result.add(_Error(_in(path, "shouldn't contain duplicates"), "unique", path))
    result.matches += 1
    return result


def _has_duplicates(values: list[Any]) -> bool:
    return any(go_deep_equal(values[i], values[j]) for i in range(len(values)) for j in range(i))


def _object_validator(s: Schema, data: dict[str, Any], path: str) -> _Result:
    """``objectValidator``: property counts, additionalProperties, properties, required."""
    res = _Result()
    size = len(data)
    min_props = s.get("minProperties")
    if isinstance(min_props, int) and size < min_props:
        res.add(
            _Error(
                _in(path, f"should have at least {min_props} properties"),
                "too_few_props",
                path,
                size,
                min_props,
            )
        )
    max_props = s.get("maxProperties")
    if isinstance(max_props, int) and size > max_props:
        res.add(
            _Error(
                _in(path, f"should have at most {max_props} properties"),
                "too_many_props",
                path,
                size,
                max_props,
            )
        )
    props = nodes.properties(s)
    if not nodes.additional_properties_allowed(s):
        for k in data:
            if k not in props:
                res.add(_Error(f"{path}.{k} in {_IN} is a forbidden property", "not_allowed", path, k))
    else:
        extra = nodes.additional_properties(s)[1]
        if extra is not None:
            for k, v in data.items():
                if k not in props:
                    res.merge(validate_node(extra, v, f"{path}.{k}"))
    for name, sub in props.items():
        if name in data:
            res.merge(validate_node(sub, data[name], f"{path}.{name}" if path else name))
    required = s.get("required")
    if isinstance(required, list):
        for k in required:
            if isinstance(k, str) and k not in data:
                res.add(_Error(_in(f"{path}.{k}", "is required"), "required", f"{path}.{k}"))
    return res


# ------------------------------------------------------------- entry points


def validate_node(s: Schema, data: Any, path: str) -> _Result:
    """``SchemaValidator.Validate`` for one schema node at ``path``."""
    types = nodes.types(s)
    declared = s.get("format")
    fmt = formats.effective_format(declared if isinstance(declared, str) else "", types)
    result = _Result()
    if data is None:
        result.merge(
            _type_validator(types, nodes.nullable(s), fmt, None, path), _enum_validator(s, None, path)
        )
        return result
    if isinstance(data, int | float) and not isinstance(data, bool):
        data = as_go_number(data)
    kind = go_kind(data)
    steps: list[_Result | None] = []
    if types or fmt:
        steps.append(_type_validator(types, nodes.nullable(s), fmt, data, path))
    steps.append(_schema_props_validator(s, data, path))
    if kind == "string":
        steps.append(_string_validator(s, data, path))
        check = formats.checker(fmt) if fmt else None
        if check is not None:
            steps.append(None if check(data) else _failed(_type_error(path, fmt, data)))
    if kind in ("int64", "float64"):
        steps.append(_number_validator(s, data, path))
    if kind == "slice":
        steps.append(_slice_validator(s, data, path))
    steps.append(_enum_validator(s, data, path))
    if kind == "map":
        steps.append(_object_validator(s, data, path))
    for step in steps:
        result.merge(step)
        result.matches += 1
    result.matches += 1
    return result


def _error_path(root_path: str, name: str) -> str:
    if not name or name == ".":
        return root_path or fe.NIL_PATH
    return fe.child(root_path, name.removeprefix("."))


def _supported_text(v: Any) -> str:
    return v if isinstance(v, str) else go_json(v)


def to_causes(result: _Result, root_path: str) -> list[Cause]:
    """``kubeOpenAPIResultToFieldErrors``."""
    causes: list[Cause] = []
    for err in result.errors:
        if err.code is None:
            causes.append(fe.invalid(root_path or fe.NIL_PATH, "", err.message))
            continue
        path = _error_path(root_path, err.name)
        value = "" if err.value is None and err.code not in ("enum",) else err.value
        if err.code == "required":
            causes.append(fe.required(path))
        elif err.code == "enum":
            causes.append(fe.not_supported(path, err.value, [_supported_text(v) for v in err.values]))
        elif err.code == "too_long":
            causes.append(fe.too_long(path, err.valid))
        elif err.code in ("max_items", "too_many_props"):
            causes.append(fe.too_many(path, err.value, err.valid))
        elif err.code == "type":
            causes.append(fe.type_invalid(path, value, err.message))
        else:
            causes.append(fe.invalid(path, value, err.message))
    return causes


def validate_openapi(obj: Any, schema: Schema, root_path: str = "") -> list[Cause]:
    """Validate a JSON value against a CRD schema node, with Kubernetes' causes."""
    return to_causes(validate_node(schema, obj, ""), root_path)
