"""Fields of built-in kinds that kube-apiserver always returns, zero or not.

kube-apiserver decodes every object into its Go type and encodes it back
with ``encoding/json``, which writes every field without ``omitempty`` even
when it holds the zero value: a new StatefulSet comes back with
``status: {replicas: 0, availableReplicas: 0}``, every container with
``resources: {}``, a PodDisruptionBudget with all four counters (and
``omitempty`` never omits a struct, only a pointer to one). Clients
rely on it: lightkube's typed models, for one, require
``StatefulSetStatus.replicas``. So the embedded server fills the same
fields on every write of a built-in kind.

Which fields those are comes from the table the protobuf decoder uses
(:mod:`.protobuf.schema`, generated from the Go types): mode ``keep`` means
"no omitempty, not a pointer". Filled are scalars (numbers 0, strings "",
booleans false), quantities ("0") and structs, which are recursed into;
lists and maps are left alone (Go writes a nil one as ``null``, which clients
treat as absent anyway), as are times (Go writes a zero one as ``null``).
Empty ``omitempty`` lists and maps are removed, as Go omits them: a merge
patch that removes the last label leaves no ``labels: {}``.
Objects are rewritten copy-on-write, never mutated.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..protobuf import schema

__all__ = ["with_zero_values", "zero_object"]

_NUMBERS = frozenset(
    {"int32", "int64", "uint32", "uint64", "sint32", "sint64", "fixed32", "fixed64", "double", "float"}
)
_SCALAR_ZEROS: Mapping[str, Any] = {
    **dict.fromkeys(_NUMBERS, 0),
    "string": "",
    "bool": False,
    "resource.Quantity": "0",
}
_OPAQUE = frozenset({"meta.v1.Time", "meta.v1.MicroTime", "intstr.IntOrString", "runtime.RawExtension"})


@dataclass(eq=False)
class _Plan:
    """What to fill in one message: zero scalars, and where to recurse."""

    zeros: dict[str, Any] = field(default_factory=dict)
    structs: dict[str, tuple[str, bool]] = field(default_factory=dict)
    """json name -> (message, always present) of singular struct fields."""
    lists: dict[str, str] = field(default_factory=dict)
    """json name -> message of the elements (repeated) or values (map) of message fields."""
    omit_empty: set[str] = field(default_factory=set)
    """json names of ``omitempty`` lists and maps, which Go omits when empty."""
    null_collections: set[str] = field(default_factory=set)
    """json names of lists and maps without ``omitempty``: a nil one is ``null``."""


@functools.cache
def _plan(message: str) -> _Plan:
    plan = _Plan()
    for _number, name, label, type_, mode in schema.MESSAGES.get(message, ()):
        if mode == "skip" or type_ in _OPAQUE:
            continue
        if mode == "inline":  # an embedded struct: its fields are the parent's
            inner = _plan(type_)
            plan.zeros.update(inner.zeros)
            plan.structs.update(inner.structs)
            plan.lists.update(inner.lists)
            plan.omit_empty.update(inner.omit_empty)
            plan.null_collections.update(inner.null_collections)
            continue
        if label in ("rep", "map") and mode == "omit":
            plan.omit_empty.add(name)
        if label in ("rep", "map") and mode == "keep":
            plan.null_collections.add(name)
        if label == "" and type_ in _SCALAR_ZEROS:
            if mode == "keep":
                plan.zeros[name] = _SCALAR_ZEROS[type_]
        elif type_ in schema.MESSAGES:
            if label == "":
                # omitempty never omits a struct in Go: only a pointer may be absent
                plan.structs[name] = (type_, mode != "ptr")
            else:
                plan.lists[name] = type_
    return plan


def _fill(message: str, obj: Mapping[str, Any]) -> Mapping[str, Any]:
    plan = _plan(message)
    changed: dict[str, Any] = {k: v for k, v in plan.zeros.items() if k not in obj}
    dropped = [k for k in plan.omit_empty if k in obj and obj[k] in ([], {}, None)]
    for name, (sub, always) in plan.structs.items():
        value = obj.get(name)
        if isinstance(value, Mapping):
            filled = _fill(sub, value)
            if filled is not value:
                changed[name] = filled
        elif value is None and always and name not in obj:
            changed[name] = _fill(sub, {})
    for name, sub in plan.lists.items():
        value = obj.get(name)
        if isinstance(value, list):
            items = [_fill(sub, v) if isinstance(v, Mapping) else v for v in value]
            if any(a is not b for a, b in zip(items, value, strict=True)):
                changed[name] = items
        elif isinstance(value, Mapping):
            entries = {k: _fill(sub, v) if isinstance(v, Mapping) else v for k, v in value.items()}
            if any(entries[k] is not value[k] for k in value):
                changed[name] = entries
    if not changed and not dropped:
        return obj
    return {**{k: v for k, v in obj.items() if k not in dropped}, **changed}


def _zero(message: str) -> dict[str, Any]:
    plan = _plan(message)
    out: dict[str, Any] = {**plan.zeros, **dict.fromkeys(plan.null_collections)}
    out.update((name, _zero(sub)) for name, (sub, always) in plan.structs.items() if always)
    return out


def zero_object(api_version: str, kind: str) -> dict[str, Any] | None:
    """A new, empty Go object of a built-in kind as Go's encoder writes it
    (structs present, nil lists ``null``); None for other kinds. It is what
    kube-apiserver's field manager compares a created object with, so
    fields present in it are not "added" by the creator."""
    message = schema.KINDS.get((api_version, kind))
    return None if message is None else _zero(message)


def with_zero_values(api_version: str, kind: str, obj: dict[str, Any]) -> dict[str, Any]:
    """``obj`` (a built-in kind) with the fields Go always writes; ``obj`` itself when
    nothing was missing, a copy otherwise."""
    message = schema.KINDS.get((api_version, kind))
    if message is None:
        return obj
    filled = _fill(message, obj)
    return obj if filled is obj else dict(filled)
