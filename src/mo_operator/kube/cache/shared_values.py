"""Frozen JSON values whose equal parts are stored once across the cache.

An operator's cache holds thousands of objects stamped from a few templates:
every pod of every cluster has the same probes, tolerations, resource
requests, security context, ports, volume mounts and condition shapes; a
pod's containers repeat its StatefulSet's template. Stored as decoded, each
of these is its own set of dicts and lists, and Python containers cost far
more than the JSON they came from (a 2 KiB pod is about 12 KiB of dicts).

``SharedValues.freeze`` makes the same read-only copy as ``frozen.freeze``
and, building it bottom-up, hands out an already stored container whenever
an equal one (same keys in the same order, the same values of the same JSON
types) was stored before: ``bench/operator_memory.py`` measures the cache at
half its former size. Sharing is safe only because cached values are frozen:
nobody can change a part that another object also holds.

Strings are interned whatever their length: unlike ``frozen.freeze``, which
keeps long strings as they are, this sees every object of a fleet, and its
long strings repeat too (the start script of every ConfigMap of a kind is
the same text, 4.5 MiB of 1,000 clusters' cache when each kept its own).
Hashing a string once to intern it is cheap next to decoding it. What no
other object has, an object's uid and resourceVersion, is not interned: each
would cost an entry of the interpreter's table of interned strings for
nothing.

The memo finds equal containers by a hash of their contents, children taken
by identity (they were made unique first), and checks a hit for equality, so
a hash collision costs a miss, never a wrong value. It keeps two
generations of ``generation_size`` entries each: a container not asked for
during a whole generation is dropped from it (objects still holding it keep
it), so what deleted and updated objects leave behind stops costing memory
after two generations. Metadata (it carries the object's uid and
resourceVersion) and the object itself are never shared, so the memo spends
no entries on them.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any

from ..meta.frozen import FrozenDict, FrozenList

_intern = sys.intern

GENERATION_SIZE = 1 << 12
"""Memo entries a generation holds (two generations: at most about 1 MiB of memo).
The parts that repeat are asked for again with every object of their kind, so a
generation far smaller than the cache keeps them (1,000 clusters share as much
with 4,096 as with 131,072)."""

_UNIQUE_KEY = "resourceVersion"
"""A dict with this key is an object's metadata: never equal to another one."""

_UNIQUE_VALUES = frozenset({"uid", "resourceVersion"})
"""Metadata fields whose values no other object has: not worth interning."""


class SharedValues:
    """A freezer that stores equal parts of the objects it freezes once."""

    def __init__(self, generation_size: int = GENERATION_SIZE) -> None:
        self.generation_size = generation_size
        self._young: dict[int, Any] = {}
        self._old: dict[int, Any] = {}
        self.hits = 0
        """How many containers were found already stored (for tests and benchmarks)."""

    @property
    def entries(self) -> int:
        """Containers the memo holds. Not ``__len__``: a freezer with an empty memo
        must still be truthy, or ``shared_values or SharedValues()`` would give
        each informer a freezer of its own and nothing would be shared across kinds."""
        return len(self._young) + len(self._old)

    def freeze(self, obj: Any) -> Any:
        """A read-only deep copy of the JSON value ``obj``, sharing every part
        equal to one stored before; the value itself is a new container."""
        if isinstance(obj, Mapping):
            meta = obj.get("metadata")
            if not isinstance(meta, Mapping):
                fields, frozen, _ = self._dict_items(obj)
                return FrozenDict.of(fields, frozen)
            keys: list[str] = []
            values: list[Any] = []
            for k, v in obj.items():
                keys.append(_intern(k))
                values.append(self._metadata(v) if k == "metadata" else self._value(v)[0])
            return FrozenDict.of(tuple(keys), tuple(values))
        if isinstance(obj, list | tuple):
            return FrozenList(self._list_items(obj)[0])
        return obj

    def _metadata(self, meta: Mapping[str, Any]) -> FrozenDict:
        """An object's metadata: never shared, and its uid and resourceVersion
        (unique to the object) kept as they are rather than interned, which would
        cost an entry of the interpreter's table of interned strings each."""
        keys: list[str] = []
        values: list[Any] = []
        for k, v in meta.items():
            keys.append(_intern(k))
            values.append(v if k in _UNIQUE_VALUES else self._value(v)[0])
        return FrozenDict.of(tuple(keys), tuple(values))

    # ---------------------------------------------------------------- memo
    def _found(self, digest: int) -> Any:
        """The container stored under ``digest`` (None if none): a candidate, to be
        checked for equality, since different contents may share a digest."""
        found = self._young.get(digest)
        if found is None:
            found = self._old.get(digest)
            if found is not None:
                self._young[digest] = found  # still in use: keep it a generation longer
        return found

    def _store(self, digest: int, value: Any) -> Any:
        if len(self._young) >= self.generation_size:
            self._old, self._young = self._young, {}
        self._young[digest] = value
        return value

    # ------------------------------------------------------------ building
    def _value(self, v: Any) -> tuple[Any, Any]:
        """The frozen, shared ``v`` and what stands for it in its parent's hash.

        A stored container is checked against the parts before one is built: most
        parts are found, and their children, already shared, compare by identity."""
        t = type(v)
        if t is str:
            v = _intern(v)
            return v, v
        if t is dict:
            return self._object(v)
        if t is list or t is tuple or t is FrozenList:
            elements, digest = self._list_items(v)
            found = self._found(digest)
            if type(found) is FrozenList and found == elements:
                self.hits += 1
                return found, id(found)
            made = self._store(digest, FrozenList(elements))
            return made, id(made)
        if t is bool or t is float:
            return v, (t, v)  # True == 1 == 1.0, but they are different JSON values
        if t is int or v is None:
            return v, v
        if isinstance(v, Mapping):
            return self._object(v)
        if isinstance(v, list):
            return self._value(list(v))
        return v, v

    def _object(self, d: Mapping[str, Any]) -> tuple[FrozenDict, int]:
        keys, values, digest = self._dict_items(d)
        if digest is None:
            made = FrozenDict.of(keys, values)
            return made, id(made)
        found = self._found(digest)
        if found is not None and type(found) is not FrozenList and found.same(keys, values):
            self.hits += 1
            return found, id(found)
        made = self._store(digest, FrozenDict.of(keys, values))
        return made, id(made)

    def _dict_items(self, d: Mapping[str, Any]) -> tuple[tuple[str, ...], tuple[Any, ...], int | None]:
        """The keys of ``d``, their frozen values and their hash (None: not to be shared)."""
        keys: list[str] = []
        values: list[Any] = []
        parts: list[Any] = []
        for k, v in d.items():
            if type(k) is str:
                k = _intern(k)
            frozen, part = self._value(v)
            keys.append(k)
            values.append(frozen)
            parts.append(k)
            parts.append(part)
        if _UNIQUE_KEY in keys:
            return tuple(keys), tuple(values), None
        return tuple(keys), tuple(values), hash(tuple(parts))

    def _list_items(self, values: list[Any] | tuple[Any, ...]) -> tuple[list[Any], int]:
        elements: list[Any] = []
        parts: list[Any] = [FrozenList]
        for v in values:
            frozen, part = self._value(v)
            elements.append(frozen)
            parts.append(part)
        return elements, hash(tuple(parts))
