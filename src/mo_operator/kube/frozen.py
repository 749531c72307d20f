"""Read-only JSON values for everything the informer cache hands out.

Cached objects are shared by every controller; one that edits an object it
got from the cache in place would silently corrupt what all the others see
(client-go's documentation warns against exactly this and relies on
discipline). We make it impossible by accident instead: the cache stores
``FrozenDict``/``FrozenList``, subclasses of ``dict``/``list`` whose mutating
methods raise ``TypeError``.

Why subclasses rather than ``MappingProxyType`` and tuples: reads cost
nothing extra (no copy per read, no wrapper per access), memory is the same
as plain containers (``__slots__ = ()``), ``json``/msgspec encode them as
they are, ``isinstance(x, dict)`` keeps working, and a frozen list still
compares equal to a plain list with the same items (a tuple would not, and
``desired == cached`` checks would then see differences that are not there
and cause writes). The price is one recursive copy when an object enters the
cache. ``thaw`` (or ``copy.deepcopy``) gives a plain mutable copy to edit.

That copy also **interns short strings** (keys, and values of at most
``INTERN_MAX`` characters): a decoder makes a new string for every label,
condition type, reason, image, port name... of every object, and across a
cache of thousands of similar objects most strings are repeats, which makes
strings about 40% of the cache's memory (``bench/operator_memory.py``: 6.8
KiB per object before, 4.1 KiB after). Long strings (config files,
certificates) rarely repeat and are kept as they are, so hashing them costs
nothing. Interned strings are mortal in CPython: they go when the last
object using them does.
"""

from __future__ import annotations

import sys
from typing import Any, NoReturn

INTERN_MAX = 64
"""Strings up to this length are interned when frozen."""
_intern = sys.intern

_MESSAGE = "cached objects are read-only; take a mutable copy with thaw() first"


def _read_only(self: object, *args: Any, **kwargs: Any) -> NoReturn:
    raise TypeError(_MESSAGE)


class FrozenDict(dict[str, Any]):
    """A JSON object that cannot be changed through its own methods."""

    __slots__ = ()

    __setitem__ = _read_only
    __delitem__ = _read_only
    __ior__ = _read_only
    clear = _read_only
    pop = _read_only
    popitem = _read_only
    setdefault = _read_only
    update = _read_only

    def __copy__(self) -> dict[str, Any]:
        return dict(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> Any:
        return thaw(self)

    def __reduce__(self) -> tuple[Any, ...]:
        return (thaw, (dict(self),))


class FrozenList(list[Any]):
    """A JSON array that cannot be changed through its own methods."""

    __slots__ = ()

    __setitem__ = _read_only
    __delitem__ = _read_only
    __iadd__ = _read_only
    __imul__ = _read_only
    append = _read_only
    extend = _read_only
    insert = _read_only
    pop = _read_only
    remove = _read_only
    clear = _read_only
    sort = _read_only
    reverse = _read_only

    def __copy__(self) -> list[Any]:
        return list(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> Any:
        return thaw(self)

    def __reduce__(self) -> tuple[Any, ...]:
        return (thaw, (list(self),))


def freeze(value: Any) -> Any:
    """A read-only deep copy of a JSON value.

    Written for speed (this runs once per object entering the cache): the
    type tests are inlined so that leaves, the bulk of a JSON tree, cost no
    function call. Frozen values are returned as they are.
    """
    t = type(value)
    if t is dict:
        return _freeze_dict(value)
    if t is list or t is tuple:
        return _freeze_list(value)
    if t is FrozenDict or t is FrozenList:
        return value  # built by freeze, so frozen all the way down
    if isinstance(value, dict):
        return _freeze_dict(value)
    if isinstance(value, list):
        return _freeze_list(value)
    return value


def _freeze_dict(d: dict[str, Any]) -> FrozenDict:
    return FrozenDict(
        {
            (_intern(k) if type(k) is str else k): v
            if (t := type(v)) is not dict and t is not list and t is not str
            else (_intern(v) if len(v) <= INTERN_MAX else v)
            if t is str
            else _freeze_dict(v)
            if t is dict
            else _freeze_list(v)
            for k, v in d.items()
        }
    )


def _freeze_list(items: list[Any] | tuple[Any, ...]) -> FrozenList:
    return FrozenList(
        [
            v
            if (t := type(v)) is not dict and t is not list and t is not str
            else (_intern(v) if len(v) <= INTERN_MAX else v)
            if t is str
            else _freeze_dict(v)
            if t is dict
            else _freeze_list(v)
            for v in items
        ]
    )


def thaw(value: Any) -> Any:
    """A plain, mutable deep copy of a JSON value (frozen or not)."""
    if isinstance(value, dict):
        return {k: thaw(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [thaw(v) for v in value]
    return value
