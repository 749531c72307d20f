"""Field paths and sets of them, in the ``fieldsV1`` form Kubernetes stores
in ``metadata.managedFields`` (sigs.k8s.io/structured-merge-diff
``fieldpath``).

A path element is one of: a field name (``f:spec``), the key of an item of
a keyed list (``k:{"name":"main"}``), the value of an item of a set list
(``v:"example.com/finalizer"``) or a list index (``i:0``). Elements are
tuples ``(rank, payload)`` whose natural order is structured-merge-diff's
(names, then keys, then values, then indices), so sorted sets serialise
exactly as kube-apiserver writes them.

Values inside keys and set items are *frozen*: ``(rank, payload)`` tuples
ordered like SMD's ``value.Compare`` (numbers < strings < booleans < lists
< maps < null), which keeps ``true`` distinct from ``1``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from functools import lru_cache
from typing import Any

from ..schema.goformat import go_json, go_quote, go_scalar_v

Frozen = tuple[Any, ...]
PathElement = tuple[int, Any]
Path = tuple[PathElement, ...]

FIELD, KEY, VALUE, INDEX = 0, 1, 2, 3


def freeze(value: Any) -> Frozen:
    if value is None:
        return (5,)
    if isinstance(value, bool):
        return (2, value)
    if isinstance(value, int | float):
        return (0, int(value) if isinstance(value, float) and value.is_integer() else value)
    if isinstance(value, str):
        return (1, value)
    if isinstance(value, list):
        return (3, tuple(freeze(v) for v in value))
    if isinstance(value, dict):
        return (4, tuple(sorted((k, freeze(v)) for k, v in value.items())))
    raise TypeError(f"not a JSON value: {value!r}")


def thaw(frozen: Frozen) -> Any:
    rank = frozen[0]
    if rank == 5:
        return None
    if rank == 3:
        return [thaw(v) for v in frozen[1]]
    if rank == 4:
        return {k: thaw(v) for k, v in frozen[1]}
    return frozen[1]


def field_element(name: str) -> PathElement:
    return (FIELD, name)


def key_element(pairs: Iterable[tuple[str, Any]]) -> PathElement:
    return (KEY, tuple(sorted((name, freeze(v)) for name, v in pairs)))


def value_element(value: Any) -> PathElement:
    return (VALUE, freeze(value))


def index_element(index: int) -> PathElement:
    return (INDEX, index)


def _to_string(frozen: Frozen) -> str:
    """SMD ``value.ToString``: Go ``%q`` for strings, ``%v`` otherwise."""
    rank, value = frozen[0], thaw(frozen)
    if rank == 5:
        return "null"
    if rank == 1:
        return go_quote(value)
    if rank == 3:
        return "[" + ",".join(_to_string(v) for v in frozen[1]) + "]"
    if rank == 4:
        return "".join(f"{k}={_to_string(v)}" for k, v in frozen[1])
    return go_scalar_v(value)


def element_string(pe: PathElement) -> str:
    """How a path element reads in messages: ``.name``, ``[name="main"]``,
    ``[="value"]``, ``[0]``."""
    rank, payload = pe
    if rank == FIELD:
        return f".{payload}"
    if rank == KEY:
        return "[" + ",".join(f"{name}={_to_string(v)}" for name, v in payload) + "]"
    if rank == VALUE:
        return f"[={_to_string(payload)}]"
    return f"[{payload}]"


def path_string(path: Path) -> str:
    return "".join(element_string(pe) for pe in path)


@lru_cache(maxsize=16384)
def serialize_element(pe: PathElement) -> str:
    rank, payload = pe
    if rank == FIELD:
        return f"f:{payload}"
    if rank == KEY:
        return "k:{" + ",".join(f"{go_json(name)}:{go_json(thaw(v))}" for name, v in payload) + "}"
    if rank == VALUE:
        return "v:" + go_json(thaw(payload))
    return f"i:{payload}"


@lru_cache(maxsize=16384)
def deserialize_element(text: str) -> PathElement | None:
    """The element a ``fieldsV1`` key names; None for an unknown kind of
    element (skipped, as kube-apiserver does); ValueError when malformed."""
    if len(text) < 2 or text[1] != ":":
        raise ValueError(f"invalid path element {text!r}")
    kind, body = text[0], text[2:]
    if kind == "f":
        return field_element(body)
    if kind == "k":
        pairs = json.loads(body)
        if not isinstance(pairs, dict):
            raise ValueError(f"invalid key path element {text!r}")
        return key_element(pairs.items())
    if kind == "v":
        return value_element(json.loads(body))
    if kind == "i":
        return index_element(int(body))
    return None


class FieldSet:
    """A set of field paths, stored as a trie: the elements that are members
    at this level and the sub-sets below each element. Operations return new
    sets and never leave an empty sub-set behind."""

    __slots__ = ("children", "members")

    def __init__(
        self, members: set[PathElement] | None = None, children: dict[PathElement, FieldSet] | None = None
    ) -> None:
        self.members: set[PathElement] = members if members is not None else set()
        self.children: dict[PathElement, FieldSet] = children if children is not None else {}

    @classmethod
    def of(cls, *paths: Path) -> FieldSet:
        out = cls()
        for p in paths:
            out.insert(p)
        return out

    def insert(self, path: Path) -> None:
        if not path:
            return
        node = self
        for pe in path[:-1]:
            child = node.children.get(pe)
            if child is None:
                child = node.children[pe] = FieldSet()
            node = child
        node.members.add(path[-1])

    def has(self, path: Path) -> bool:
        node: FieldSet | None = self
        for pe in path[:-1]:
            node = node.children.get(pe) if node else None
        return node is not None and bool(path) and path[-1] in node.members

    def child(self, pe: PathElement) -> FieldSet | None:
        """The paths below ``pe``, relative to it."""
        return self.children.get(pe)

    def is_empty(self) -> bool:
        return not self.members and not self.children

    def union(self, other: FieldSet) -> FieldSet:
        children = dict(self.children)
        for pe, sub in other.children.items():
            mine = children.get(pe)
            children[pe] = sub if mine is None else mine.union(sub)
        return FieldSet(self.members | other.members, children)

    def intersection(self, other: FieldSet) -> FieldSet:
        children = {}
        for pe, sub in self.children.items():
            theirs = other.children.get(pe)
            if theirs is not None:
                both = sub.intersection(theirs)
                if not both.is_empty():
                    children[pe] = both
        return FieldSet(self.members & other.members, children)

    def difference(self, other: FieldSet) -> FieldSet:
        """Paths of this set that are not paths of ``other`` (a member of
        ``other`` does not remove the paths below it)."""
        children = {}
        for pe, sub in self.children.items():
            theirs = other.children.get(pe)
            rest = sub if theirs is None else sub.difference(theirs)
            if not rest.is_empty():
                children[pe] = rest
        return FieldSet(self.members - other.members, children)

    def paths(self, prefix: Path = ()) -> Iterator[Path]:
        """Every path, members of a level before the levels below it, each in
        element order (the order of SMD's ``Set.Iterate``)."""
        for pe in sorted(self.members):
            yield (*prefix, pe)
        for pe in sorted(self.children):
            yield from self.children[pe].paths((*prefix, pe))

    def __len__(self) -> int:
        return len(self.members) + sum(len(c) for c in self.children.values())

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, FieldSet) and self.members == other.members and self.children == other.children
        )

    def __repr__(self) -> str:
        return "FieldSet(" + ", ".join(path_string(p) for p in self.paths()) + ")"

    def to_fields_v1(self) -> dict[str, Any]:
        """The ``fieldsV1`` object: one key per element in element order,
        ``{}`` for a member, a nested object (with ``"."`` when the element is
        a member too) for an element with paths below it."""
        return self._emit(include_self=False)

    def _emit(self, *, include_self: bool) -> dict[str, Any]:
        out: dict[str, Any] = {".": {}} if include_self else {}
        for pe in sorted(self.members | self.children.keys()):
            sub = self.children.get(pe)
            key = serialize_element(pe)
            out[key] = {} if sub is None else sub._emit(include_self=pe in self.members)
        return out


def from_fields_v1(data: Any) -> FieldSet:
    """The set a ``fieldsV1`` object encodes; ValueError when malformed."""
    if not isinstance(data, dict):
        raise ValueError("fieldsV1 must be an object")
    out = FieldSet()
    for text, sub in data.items():
        if text == ".":
            continue
        pe = deserialize_element(text)
        if pe is None:
            continue
        if not isinstance(sub, dict):
            raise ValueError(f"fieldsV1 entry {text!r} must be an object")
        below = from_fields_v1(sub)
        if below.is_empty() or "." in sub:
            out.members.add(pe)
        if not below.is_empty():
            out.children[pe] = below
    return out
