"""Remembering rendered configs: the same spec renders the same bytes, so render it once.

A set's controller renders its config on every reconcile to compare it with what
runs, and nearly every reconcile finds the spec unchanged. Rendering (merging TOML
tables, writing TOML) costs tens of times more than writing the inputs down as
canonical JSON, which is the key: equal inputs, equal key, equal output (the
renderers are pure functions of their arguments).
"""

from __future__ import annotations

import dataclasses
import enum
import functools
import json
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any, ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")

SIZE = 512
"""Rendered configs remembered per function (least recently used forgotten first)."""


class _Unkeyable(TypeError):
    """An argument with no canonical JSON form: the call is not remembered."""


def _plain(value: Any) -> Any:
    """The JSON form of a non-JSON argument (tagged with its type, so that it equals only its like)."""
    if isinstance(value, Mapping):
        return dict(value.items())  # a frozen part of a cached object is the JSON object it holds
    if isinstance(value, enum.Enum):
        return [type(value).__qualname__, value.name]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return [type(value).__qualname__, *(getattr(value, f.name) for f in dataclasses.fields(value))]
    if isinstance(value, range):
        return ["range", value.start, value.stop, value.step]
    raise _Unkeyable(f"{type(value).__name__} has no canonical form")


def key_of(args: tuple[Any, ...], kwargs: dict[str, Any]) -> str | None:
    """The canonical key of a call, or None when an argument cannot be written down."""
    try:
        return json.dumps([args, kwargs], sort_keys=True, separators=(",", ":"), default=_plain)
    except (TypeError, ValueError):  # _Unkeyable, a non-string key, a cycle
        return None


def memoized(copy: Callable[[R], R], size: int = SIZE) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Remember the results of a pure function by the canonical JSON of its arguments.

    Callers get ``copy(result)``, never the remembered object. Exceptions are not
    remembered (a config that fails to render fails again, the same way).
    """

    def decorate(fn: Callable[P, R]) -> Callable[P, R]:
        results: OrderedDict[str, R] = OrderedDict()

        @functools.wraps(fn)
        def call(*args: P.args, **kwargs: P.kwargs) -> R:
            key = key_of(args, kwargs)
            if key is None:
                return fn(*args, **kwargs)
            found = results.get(key)
            if found is None:
                found = results[key] = fn(*args, **kwargs)
                while len(results) > size:
                    results.popitem(last=False)
            else:
                results.move_to_end(key)
            return copy(found)

        call.cache_clear = results.clear  # type: ignore[attr-defined]
        call.cache_len = results.__len__  # type: ignore[attr-defined]
        return call

    return decorate


def copy_data(data: dict[str, str]) -> dict[str, str]:
    """A ConfigMap's data: a new dict (its values, strings, are immutable)."""
    return dict(data)
