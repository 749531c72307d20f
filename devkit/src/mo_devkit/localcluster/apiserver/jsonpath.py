"""The Kubernetes JSONPath subset that CRD printer columns are written in
(``additionalPrinterColumns[].jsonPath``), evaluated the way kube-apiserver
evaluates them with client-go's ``util/jsonpath`` and missing keys allowed.

Supported: ``.field`` and ``['field']``, ``..field`` (recursive descent),
``.*`` and ``[*]``, array indices (negative counts from the end), slices
``[start:end:step]``, and filters ``[?(@.path)]`` / ``[?(@.path OP value)]``
with ``== != < > <= >=`` against a quoted string, a number, ``true``/``false``
or another ``@`` path. The expression may be wrapped in ``{}`` and start with
``$``.

A path that reaches no value yields no results; type mismatches (a field of a
list, an index of an object) are the same as missing, as with
``AllowMissingKeys(true)``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from .schema.goformat import go_json, go_scalar_v


class JSONPathError(ValueError):
    """The expression is not valid JSONPath."""


@dataclass(frozen=True)
class _Field:
    name: str  # "*" for every value of an object


@dataclass(frozen=True)
class _Descend:
    """``..``: the value itself and every value nested in it."""


@dataclass(frozen=True)
class _Slice:
    start: int | None
    stop: int | None
    step: int | None
    single: bool  # ``[n]`` rather than a range


@dataclass(frozen=True)
class _All:
    """``[*]``: every element of a list or value of an object."""


@dataclass(frozen=True)
class _Filter:
    left: tuple[Any, ...]
    op: str  # "" for an existence test
    right: Any  # a literal, or a tuple of steps for an ``@`` path


_OPERATOR = re.compile(r"(==|!=|<=|>=|<|>)")
_NUMBER = re.compile(r"^-?\d+(\.\d+)?([eE][-+]?\d+)?$")
_INDEX = re.compile(r"^\s*-?\d+\s*$")


@dataclass(frozen=True)
class JSONPath:
    expression: str
    steps: tuple[Any, ...]

    def find(self, obj: Any) -> list[Any]:
        """Every value the path reaches in ``obj``, in document order."""
        return _evaluate(self.steps, [obj])


@functools.lru_cache(maxsize=512)
def compile_path(expression: str) -> JSONPath:
    text = expression.strip()
    if text.startswith("{") and text.endswith("}"):
        text = text[1:-1].strip()
    if text.startswith("$"):
        text = text[1:]
    return JSONPath(expression, _parse_steps(text, expression))


def find(expression: str, obj: Any) -> list[Any]:
    return compile_path(expression).find(obj)


def format_value(value: Any) -> str | None:
    """A result as client-go's ``PrintResults`` prints it: strings as they
    are, numbers and booleans as Go's ``%v``, objects and lists as JSON. A
    JSON null has no printed form (None)."""
    if value is None:
        return None
    if isinstance(value, str):
        return value
    if isinstance(value, dict | list):
        return go_json(value)
    return go_scalar_v(value)


def _parse_steps(text: str, expression: str) -> tuple[Any, ...]:
    steps: list[Any] = []
    i = 0
    while i < len(text):
        if text.startswith("..", i):
            steps.append(_Descend())
            i += 2
            name, i = _read_name(text, i)
            if name:
                steps.append(_Field(name))
        elif text[i] == ".":
            name, i = _read_name(text, i + 1)
            if name:
                steps.append(_Field(name))
        elif text[i] == "[":
            end = _closing_bracket(text, i, expression)
            steps.append(_parse_bracket(text[i + 1 : end].strip(), expression))
            i = end + 1
        elif not steps and i == 0:
            name, i = _read_name(text, 0)
            steps.append(_Field(name))
        else:
            raise JSONPathError(f"unexpected {text[i]!r} in {expression!r}")
    return tuple(steps)


def _read_name(text: str, i: int) -> tuple[str, int]:
    j = i
    while j < len(text) and text[j] not in ".[":
        j += 1
    return text[i:j].strip(), j


def _closing_bracket(text: str, start: int, expression: str) -> int:
    depth, quote = 0, ""
    for j in range(start, len(text)):
        c = text[j]
        if quote:
            if c == quote:
                quote = ""
        elif c in "'\"":
            quote = c
        elif c in "[(":
            depth += 1
        elif c in "])":
            depth -= 1
            if depth == 0:
                return j
    raise JSONPathError(f"unclosed [ in {expression!r}")


def _parse_bracket(inner: str, expression: str) -> Any:
    if inner == "*":
        return _All()
    if inner.startswith("?"):
        body = inner[1:].strip()
        if not (body.startswith("(") and body.endswith(")")):
            raise JSONPathError(f"a filter must be ?(...) in {expression!r}")
        return _parse_filter(body[1:-1].strip(), expression)
    if len(inner) >= 2 and inner[0] == inner[-1] and inner[0] in "'\"":
        return _Field(inner[1:-1])
    if _INDEX.match(inner):
        return _Slice(int(inner), None, None, single=True)
    if ":" in inner:
        parts = [p.strip() for p in inner.split(":")]
        if len(parts) > 3 or not all(p == "" or _INDEX.match(p) for p in parts):
            raise JSONPathError(f"invalid array slice [{inner}] in {expression!r}")
        nums = [int(p) if p else None for p in parts] + [None] * (3 - len(parts))
        return _Slice(nums[0], nums[1], nums[2], single=False)
    raise JSONPathError(f"unsupported [{inner}] in {expression!r}")


def _parse_filter(body: str, expression: str) -> _Filter:
    m = _find_operator(body)
    if m is None:
        return _Filter(_parse_operand_path(body, expression), "", None)
    left, op, right = body[: m.start()].strip(), m.group(1), body[m.end() :].strip()
    return _Filter(_parse_operand_path(left, expression), op, _parse_operand(right, expression))


def _find_operator(body: str) -> re.Match[str] | None:
    quote = ""
    for i, c in enumerate(body):
        if quote:
            if c == quote:
                quote = ""
        elif c in "'\"":
            quote = c
        else:
            m = _OPERATOR.match(body, i)
            if m:
                return m
    return None


def _parse_operand_path(text: str, expression: str) -> tuple[Any, ...]:
    if not text.startswith("@"):
        raise JSONPathError(f"a filter compares a path starting with @ in {expression!r}")
    return _parse_steps(text[1:], expression)


def _parse_operand(text: str, expression: str) -> Any:
    if text.startswith("@"):
        return _parse_operand_path(text, expression)
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    if text in ("true", "false"):
        return text == "true"
    if _NUMBER.match(text):
        return float(text) if any(c in text for c in ".eE") else int(text)
    raise JSONPathError(f"unsupported filter value {text!r} in {expression!r}")


def _evaluate(steps: tuple[Any, ...], values: list[Any]) -> list[Any]:
    for step in steps:
        values = [out for value in values for out in _apply(step, value)]
        if not values:
            break
    return values


def _apply(step: Any, value: Any) -> Iterator[Any]:
    if isinstance(step, _Field):
        if isinstance(value, dict):
            if step.name == "*":
                yield from value.values()
            elif step.name in value:
                yield value[step.name]
    elif isinstance(step, _All):
        if isinstance(value, dict):
            yield from value.values()
        elif isinstance(value, list):
            yield from value
    elif isinstance(step, _Descend):
        yield from _descendants(value)
    elif isinstance(step, _Slice):
        if isinstance(value, list):
            yield from _slice(step, value)
    elif isinstance(step, _Filter) and isinstance(value, list):
        yield from (item for item in value if _matches(step, item))


def _descendants(value: Any) -> Iterator[Any]:
    yield value
    children = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    for child in children:
        yield from _descendants(child)


def _slice(step: _Slice, items: list[Any]) -> list[Any]:
    if step.single:
        index = step.start if step.start is not None else 0
        if index < 0:
            index += len(items)
        return [items[index]] if 0 <= index < len(items) else []
    if step.step == 0:
        return []
    return items[step.start : step.stop : step.step]


def _matches(f: _Filter, item: Any) -> bool:
    lefts = _evaluate(f.left, [item])
    if not f.op:
        return bool(lefts)
    rights = _evaluate(f.right, [item]) if isinstance(f.right, tuple) else [f.right]
    return any(_compare(left, f.op, right) for left in lefts for right in rights)


def _compare(left: Any, op: str, right: Any) -> bool:
    numbers = all(isinstance(v, int | float) and not isinstance(v, bool) for v in (left, right))
    if op == "==":
        return left == right and (numbers or type(left) is type(right))
    if op == "!=":
        return not _compare(left, "==", right)
    if not numbers and not (isinstance(left, str) and isinstance(right, str)):
        return False
    if op == "<":
        return bool(left < right)
    if op == ">":
        return bool(left > right)
    if op == "<=":
        return bool(left <= right)
    return bool(left >= right)
