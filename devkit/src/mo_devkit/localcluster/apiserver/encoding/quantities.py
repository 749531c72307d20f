"""Quantity fields of built-in kinds, stored in canonical form.

kube-apiserver decodes every request body into its Go types, where a
``resource.Quantity`` field is parsed by ``Quantity.UnmarshalJSON``
(``ParseQuantity`` of the trimmed text; a JSON number is read as its text),
and every stored or returned object is written back by ``MarshalJSON`` in the
canonical form: ``cpu: "0.5"`` is stored and returned as ``500m``, ``1024Mi``
as ``1Gi``, ``1.5Gi`` as ``1536Mi``
(k8s.io/apimachinery/pkg/api/resource/quantity.go;
https://kubernetes.io/docs/reference/kubernetes-api/common-definitions/quantity/:
"Non-canonical values will still parse as long as they are well formed, but
will be re-emitted in their canonical form"). A value that does not parse
fails the decoding, so the request is refused.

Custom resources are not decoded into Go types: their quantity fields are
``x-kubernetes-int-or-string`` with a pattern and are stored as written, so
only built-in kinds go through here.

Which fields are quantities comes from the table the protobuf decoder uses
(:mod:`.protobuf.schema`, generated from the Go types of the kinds served):
a field of type ``resource.Quantity`` (singular, or the values of a map)
anywhere under the kind's message. Objects are rewritten copy-on-write: only
the dicts and lists on the path to a changed value are copied, so stored
objects shared with the caller are never mutated.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

from mo_operator.kube.meta.quantity import canonical_quantity

from ..protobuf import schema

__all__ = ["QuantityError", "canonicalize", "quantity_paths"]

_QUANTITY = "resource.Quantity"


class QuantityError(ValueError):
    """A quantity field holds a value ``ParseQuantity`` refuses."""

    def __init__(self, path: str, value: Any, message: str) -> None:
        super().__init__(message)
        self.path = path
        self.value = value
        self.message = message


@dataclass(eq=False)
class _Node:
    """The quantity-bearing part of one message: fields that are quantities,
    and fields (or list items, or map values) that lead to some."""

    quantity: bool = False
    fields: dict[str, _Node] = field(default_factory=dict)
    items: _Node | None = None  # elements of a list
    values: _Node | None = None  # values of a map with string keys


@functools.cache
def _reaching() -> frozenset[str]:
    """The messages that contain a Quantity somewhere below them."""
    found = {_QUANTITY}
    changed = True
    while changed:
        changed = False
        for name, fields in schema.MESSAGES.items():
            if name not in found and any(f[3] in found for f in fields if f[4] != "skip"):
                found.add(name)
                changed = True
    found.discard(_QUANTITY)
    return frozenset(found)


def _leaf() -> _Node:
    return _Node(quantity=True)


def _build(message: str, memo: dict[str, _Node]) -> _Node:
    node = memo.get(message)
    if node is not None:
        return node  # shared (and possibly recursive) sub-trees
    node = memo[message] = _Node()
    reaching = _reaching()
    for _number, json_name, label, type_, mode in schema.MESSAGES[message]:
        if mode == "skip" or (type_ != _QUANTITY and type_ not in reaching):
            continue
        child = _leaf() if type_ == _QUANTITY else _build(type_, memo)
        if mode == "inline":
            node.fields.update(child.fields)
        elif label == "rep":
            node.fields[json_name] = _Node(items=child)
        elif label == "map":
            node.fields[json_name] = _Node(values=child)
        else:
            node.fields[json_name] = child
    return node


@functools.cache
def _tree(api_version: str, kind: str) -> _Node | None:
    message = schema.KINDS.get((api_version, kind))
    if message is None or message not in _reaching():
        return None
    return _build(message, {})


def quantity_paths(api_version: str, kind: str) -> list[str]:
    """The quantity fields of a built-in kind as dotted paths, ``[]`` for a
    list item and ``*`` for a map value (``spec.containers[].resources.limits.*``)."""
    root = _tree(api_version, kind)
    out: list[str] = []

    def walk(node: _Node, path: str, seen: tuple[int, ...]) -> None:
        if id(node) in seen:
            return
        seen = (*seen, id(node))
        if node.quantity:
            out.append(path)
        for name, child in node.fields.items():
            walk(child, f"{path}.{name}" if path else name, seen)
        if node.items is not None:
            walk(node.items, f"{path}[]", seen)
        if node.values is not None:
            walk(node.values, f"{path}.*", seen)

    if root is not None:
        walk(root, "", ())
    return sorted(out)


def canonicalize(api_version: str, kind: str, obj: dict[str, Any]) -> dict[str, Any]:
    """``obj`` with every quantity of a built-in kind in canonical form: the
    same object when nothing changes, else a copy sharing the untouched parts.
    Custom resources and kinds without quantities are returned as they are.

    Raises :class:`QuantityError` for a value ``ParseQuantity`` refuses. A
    ``null`` is left alone (the zero Quantity or an absent pointer, which the
    rest of the server already treats as unset)."""
    root = _tree(api_version, kind)
    if root is None:
        return obj
    out = _walk(obj, root, "")
    assert isinstance(out, dict)
    return out


def _canonical(value: Any, path: str) -> Any:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        # UnmarshalJSON hands the raw JSON text to ParseQuantity, which refuses it.
        text = "true" if value is True else "false" if value is False else "{...}"
    else:
        text = value.strip() if isinstance(value, str) else str(value)
    try:
        result = _canonical_text(text)
    except ValueError as e:
        raise QuantityError(path, value, str(e)) from None
    return value if result == value else result


@functools.lru_cache(maxsize=4096)
def _canonical_text(text: str) -> str:
    return canonical_quantity(text)


def _walk(value: Any, node: _Node, path: str) -> Any:
    if node.quantity:
        return _canonical(value, path)
    if isinstance(value, dict):
        changed: dict[str, Any] | None = None
        if node.values is not None:
            for key, item in value.items():
                new = _walk(item, node.values, f"{path}[{key}]")
                if new is not item:
                    changed = changed if changed is not None else dict(value)
                    changed[key] = new
        for name, child in node.fields.items():
            item = value.get(name)
            if item is None:
                continue
            new = _walk(item, child, f"{path}.{name}" if path else name)
            if new is not item:
                changed = changed if changed is not None else dict(value)
                changed[name] = new
        return value if changed is None else changed
    if isinstance(value, list) and node.items is not None:
        items: list[Any] | None = None
        for i, item in enumerate(value):
            new = _walk(item, node.items, f"{path}[{i}]")
            if new is not item:
                items = items if items is not None else list(value)
                items[i] = new
        return value if items is None else items
    return value  # wrong shapes are for validation to report
