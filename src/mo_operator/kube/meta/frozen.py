"""Read-only JSON values for everything the informer cache hands out.

Cached objects are shared by every controller; one that edits an object it
got from the cache in place would silently corrupt what all the others see
(client-go's documentation warns against exactly this and relies on
discipline). We make it impossible by accident instead: the cache stores
``FrozenDict``/``FrozenList``, which have no mutating methods (those a
``dict`` or ``list`` has raise ``TypeError``).

``FrozenDict`` is a ``Mapping``, not a ``dict``: a cache of 27,000 objects
holds about 170,000 JSON objects, most with one to five keys, and a ``dict``
of that size costs about 200 bytes however few keys it has. A frozen object
keeps its values in slots of its own and shares its keys with every other
object of the same shape, at a third of that. It compares equal to a plain
``dict`` with the same items (``desired == cached`` checks see no difference
that is not there). Readers test ``isinstance(x, Mapping)``; the encoders
that write cached parts take ``as_json`` as their hook for it (``json`` and
msgspec refuse a mapping they do not know, loudly, rather than write
something else). ``FrozenList`` stays a ``list`` subclass: lists are few
and rarely unique, and a tuple would not equal a plain list. The price is
one recursive copy when an object enters the cache. ``thaw`` (or
``copy.deepcopy``) gives a plain mutable copy to edit.

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

import functools
import operator
import sys
import weakref
from collections.abc import Callable, ItemsView, Iterable, Iterator, KeysView, Mapping, ValuesView
from typing import Any, NoReturn

INTERN_MAX = 64
"""Strings up to this length are interned when frozen."""
_intern = sys.intern

_MESSAGE = "cached objects are read-only; take a mutable copy with thaw() first"


def _read_only(self: object, *args: Any, **kwargs: Any) -> NoReturn:
    raise TypeError(_MESSAGE)


class _Shape:
    """The keys, in order, of every ``FrozenDict`` that has exactly those keys,
    and where each key's value sits: stored once for all of them."""

    __slots__ = ("__weakref__", "index", "keys")

    def __init__(self, keys: tuple[str, ...]) -> None:
        self.keys = keys
        self.index = {k: i for i, k in enumerate(keys)}


_shapes: dict[tuple[str, ...], weakref.ref[_Shape]] = {}
"""Each shape in use by its keys, held weakly: a shape goes with the last object of it."""


def _shape_of(keys: tuple[str, ...]) -> _Shape:
    ref = _shapes.get(keys)
    shape = ref() if ref is not None else None
    if shape is None:
        shape = _Shape(keys)
        _shapes[keys] = weakref.ref(shape, functools.partial(_forget_shape, keys))
    return shape


def _forget_shape(keys: tuple[str, ...], gone: weakref.ref[_Shape]) -> None:
    if _shapes.get(keys) is gone:
        del _shapes[keys]


class _Items(ItemsView[str, Any]):
    __slots__ = ()
    _mapping: FrozenDict

    def __iter__(self) -> Iterator[tuple[str, Any]]:
        return zip(self._mapping._shape.keys, self._mapping._values, strict=True)


class _Values(ValuesView[Any]):
    __slots__ = ()
    _mapping: FrozenDict

    def __iter__(self) -> Iterator[Any]:
        return iter(self._mapping._values)


class FrozenDict(Mapping[str, Any]):
    """A JSON object that cannot be changed, at a third of a ``dict``'s memory.

    Its keys are shared with every other frozen object that has the same keys in
    the same order (the labels, conditions, ports and owner references of a
    fleet come in a few shapes), and its values sit in the object itself: each
    ``FrozenDict`` is an instance of the subclass for its number of keys, whose
    slots hold the values (``_Layout``). A ``dict`` of up to five keys is about
    200 bytes; this is 40 bytes and 8 per key.
    """

    __slots__ = ("_shape",)

    _shape: _Shape
    _get: tuple[Callable[[FrozenDict], Any], ...] = ()
    """Per layout: the reader of each value slot, by position."""
    _get_all: Callable[[FrozenDict], tuple[Any, ...]]
    """Per layout: every value, in order."""

    def __new__(cls, items: Mapping[str, Any] | Iterable[tuple[str, Any]] = ()) -> FrozenDict:
        plain = dict(items)
        return FrozenDict.of(tuple(plain), tuple(plain.values()))

    @staticmethod
    def of(keys: tuple[str, ...], values: tuple[Any, ...]) -> FrozenDict:
        """A frozen object of ``keys`` (distinct) and their ``values``, without a ``dict`` built first."""
        layout = _layouts.get(len(values)) or _new_layout(len(values))
        made: FrozenDict = layout.make(_shape_of(keys), *values)
        return made

    @property
    def _values(self) -> tuple[Any, ...]:
        return self._get_all(self)

    def same(self, keys: tuple[str, ...], values: tuple[Any, ...]) -> bool:
        """Whether this object is ``keys`` and ``values``, in that order."""
        return self._shape.keys == keys and self._get_all(self) == values

    # ------------------------------------------------------------ reading
    def __getitem__(self, key: str) -> Any:
        return self._get[self._shape.index[key]](self)

    def get(self, key: str, default: Any = None) -> Any:
        i = self._shape.index.get(key)
        return default if i is None else self._get[i](self)

    def __contains__(self, key: object) -> bool:
        return key in self._shape.index

    def __iter__(self) -> Iterator[str]:
        return iter(self._shape.keys)

    def __len__(self) -> int:
        return len(self._get)

    def keys(self) -> KeysView[str]:
        return KeysView(self)

    def items(self) -> ItemsView[str, Any]:
        return _Items(self)

    def values(self) -> ValuesView[Any]:
        return _Values(self)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, FrozenDict) and other._shape is self._shape:
            return self._values == other._values
        if isinstance(other, Mapping):
            return self.copy() == (other if type(other) is dict else dict(other.items()))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return repr(self.copy())

    def __or__(self, other: Mapping[str, Any]) -> dict[str, Any]:
        return {**self.copy(), **other}

    def __ror__(self, other: Mapping[str, Any]) -> dict[str, Any]:
        return {**other, **self.copy()}

    # ------------------------------------------------------------ copying
    def copy(self) -> dict[str, Any]:
        """A plain ``dict`` of the same items (its values still frozen)."""
        return dict(zip(self._shape.keys, self._values, strict=True))

    def __copy__(self) -> dict[str, Any]:
        return self.copy()

    def __deepcopy__(self, memo: dict[int, Any]) -> Any:
        return thaw(self)

    def __reduce__(self) -> tuple[Any, ...]:
        return (thaw, (self.copy(),))

    # ----------------------------------------------------------- refusing
    __setitem__ = _read_only
    __delitem__ = _read_only
    __ior__ = _read_only
    clear = _read_only
    pop = _read_only
    popitem = _read_only
    setdefault = _read_only
    update = _read_only


class _Layout:
    """The ``FrozenDict`` subclass for one number of keys: its values in slots
    ``_0``, ``_1``..., with a maker that fills them (generated, as ``dataclasses``
    and ``namedtuple`` generate theirs: a loop of slot setters takes twice as long,
    and an informer freezes every object it lists)."""

    __slots__ = ("make",)

    def __init__(self, size: int) -> None:
        slots = tuple(f"_{i}" for i in range(size))
        cls: Any = type(f"FrozenDict{size}", (FrozenDict,), {"__slots__": slots, "__module__": __name__})
        cls._get = tuple(operator.attrgetter(name) for name in slots)
        params = "".join(f", {name}" for name in slots)
        stores = "".join(f"    made.{name} = {name}\n" for name in slots)
        reads = "".join(f"made.{name}, " for name in slots)
        namespace: dict[str, Any] = {"new": object.__new__, "cls": cls}
        exec(
            f"def make(shape{params}):\n    made = new(cls)\n    made._shape = shape\n{stores}    return made\n"
            f"def get_all(made):\n    return ({reads})\n",
            namespace,
        )
        cls._get_all = staticmethod(namespace["get_all"])
        self.make: Callable[..., FrozenDict] = namespace["make"]


_layouts: dict[int, _Layout] = {}


def _new_layout(size: int) -> _Layout:
    """The layout for ``size`` keys, made the first time a frozen object has that many."""
    made = _layouts[size] = _Layout(size)
    return made


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
    if t is FrozenList or isinstance(value, FrozenDict):
        return value  # built by freeze, so frozen all the way down
    if isinstance(value, Mapping):
        return _freeze_dict(value)
    if isinstance(value, list):
        return _freeze_list(value)
    return value


def _freeze_dict(d: Mapping[str, Any]) -> FrozenDict:
    return FrozenDict.of(
        tuple(_intern(k) if type(k) is str else k for k in d),
        tuple(
            v
            if (t := type(v)) is not dict and t is not list and t is not str
            else (_intern(v) if len(v) <= INTERN_MAX else v)
            if t is str
            else _freeze_dict(v)
            if t is dict
            else _freeze_list(v)
            for v in d.values()
        ),
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


def as_json(value: Any) -> Any:
    """The JSON form of a frozen object, for the encoders that take a hook for
    types they do not know (``json.dumps(default=)``, msgspec's ``enc_hook``):
    a plain ``dict`` of the same items, its frozen values encoded in turn."""
    if isinstance(value, Mapping):
        return dict(value.items())
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def thaw(value: Any) -> Any:
    """A plain, mutable deep copy of a JSON value (frozen or not)."""
    if isinstance(value, Mapping):
        return {k: thaw(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [thaw(v) for v in value]
    return value
