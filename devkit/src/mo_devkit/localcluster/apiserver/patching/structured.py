"""Typed walks over objects for server-side apply, after
sigs.k8s.io/structured-merge-diff ``typed``: the set of fields an object
sets (``ToFieldSet``), the difference between two objects (``Compare``), the
merge of an applied configuration into a live object (``Merge``) and the
removal of a set of fields (``RemoveItems``).

Each walk follows the object and its :class:`TypeNode` together. A value is
a *leaf* when it is a scalar, an atomic map or an atomic list; otherwise it
is a granular map (merged key by key) or an associative list (merged item by
item, items named by their key fields or, in a set, by their value).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..schema.goformat import go_json
from .fieldpath import FIELD, FieldSet, Path, PathElement, element_string, key_element, value_element
from .typeinfo import TypeNode
from .values import json_equal

MISSING: Any = type("Missing", (), {"__repr__": lambda self: "MISSING"})()


class ItemError(ValueError):
    """A list item that cannot be named (no key fields, a map in a set...)."""


def item_element(node: TypeNode, item: Any) -> PathElement:
    """The path element naming ``item`` of the associative list at ``node``."""
    lt = node.list_type
    if lt.kind == "map":
        if item is None:
            raise ItemError("associative list with keys may not have a null element")
        if not isinstance(item, dict):
            raise ItemError("associative list with keys may not have non-map elements")
        defaults = dict(node.rule.key_defaults)
        pairs = [(k, item[k] if k in item else defaults[k]) for k in lt.keys if k in item or k in defaults]
        if lt.keys and not pairs:
            keys = "[" + " ".join(go_json(k) for k in lt.keys) + "]"
            raise ItemError(
                f"associative list with keys has an element that omits all key fields {keys} "
                "(and doesn't have default values for any key fields)"
            )
        return key_element(pairs)
    if isinstance(item, dict):
        raise ItemError("associative list without keys has an element that's a map type")
    if isinstance(item, list):
        raise ItemError("not supported: associative list with lists as elements")
    if item is None:
        raise ItemError("associative list without keys has an element that's an explicit null")
    return value_element(item)


def _shape(value: Any, node: TypeNode) -> str:
    """``map``, ``list`` (associative), ``leaf`` or ``null``."""
    if value is None:
        return "null"
    if isinstance(value, dict):
        return "leaf" if node.atomic_map else "map"
    if isinstance(value, list):
        return "leaf" if node.list_type.kind == "atomic" else "list"
    return "leaf"


# ------------------------------------------------------------ ToFieldSet
def fields_of(value: Any, node: TypeNode) -> FieldSet:
    """The fields ``value`` sets: every leaf, every list item, every entry of
    a free-form map, and every field holding ``null`` or ``{}``. Items that
    cannot be named are skipped (live objects are never refused)."""
    out = FieldSet()
    _collect(value, node, out)
    return out


def _collect(value: Any, node: TypeNode, out: FieldSet) -> bool:
    """Fill ``out`` with the paths below ``value``; True when ``value``
    itself is a member (a leaf)."""
    shape = _shape(value, node)
    if shape == "map":
        for key, sub in value.items():
            child, declared = node.child(key)
            below = FieldSet()
            member = _collect(sub, child, below)
            pe = (FIELD, key)
            if member or sub is None or sub == {} or not declared:
                out.members.add(pe)
            if not below.is_empty():
                out.children[pe] = below
        return False
    if shape == "list":
        item_node = node.list_item()
        seen: set[PathElement] = set()
        named: list[tuple[PathElement, Any]] = []
        for item in value:
            try:
                pe = item_element(node, item)
            except ItemError:
                continue
            if pe in seen:
                out.members.add(pe)
            seen.add(pe)
            named.append((pe, item))
        duplicated = set(out.members)
        for pe, item in named:
            if pe in duplicated:
                continue
            out.members.add(pe)
            below = FieldSet()
            _collect(item, item_node, below)
            if not below.is_empty():
                out.children[pe] = below
        return False
    return True


# --------------------------------------------------------------- Compare
@dataclass
class Comparison:
    """Fields removed, changed and added going from one object to another."""

    removed: FieldSet = field(default_factory=FieldSet)
    modified: FieldSet = field(default_factory=FieldSet)
    added: FieldSet = field(default_factory=FieldSet)

    def is_same(self) -> bool:
        return self.removed.is_empty() and self.modified.is_empty() and self.added.is_empty()


def compare(lhs: Any, rhs: Any, node: TypeNode) -> Comparison:
    """What changed from ``lhs`` to ``rhs``. An item of ``rhs`` that cannot
    be named raises :class:`ItemError` (the new object cannot be typed);
    such items of ``lhs`` are passed over."""
    out = Comparison()
    _compare(lhs, rhs, node, (), out)
    return out


def _compare(lhs: Any, rhs: Any, node: TypeNode, path: Path, out: Comparison) -> None:
    ls = MISSING if lhs is MISSING else _shape(lhs, node)
    rs = MISSING if rhs is MISSING else _shape(rhs, node)
    shapes = {ls, rs} - {MISSING, "null"}
    if len(shapes) > 1:
        # The value changed kind (say, a map became a string): the old
        # container's fields go, the new one's come, the value is modified.
        if ls in ("map", "list"):
            _compare_container(ls, lhs, MISSING, node, path, out, track_self=False)
        if rs in ("map", "list"):
            _compare_container(rs, MISSING, rhs, node, path, out, track_self=False)
        if "leaf" in shapes:
            out.modified.insert(path)
        return
    shape = shapes.pop() if shapes else "leaf"
    if shape == "leaf":
        _leaf(lhs, rhs, path, out)
    else:
        _compare_container(shape, lhs, rhs, node, path, out, track_self=True)


def _leaf(lhs: Any, rhs: Any, path: Path, out: Comparison) -> None:
    if lhs is MISSING:
        out.added.insert(path)
    elif rhs is MISSING:
        out.removed.insert(path)
    elif not json_equal(lhs, rhs):
        out.modified.insert(path)


def _compare_container(
    shape: str, lhs: Any, rhs: Any, node: TypeNode, path: Path, out: Comparison, *, track_self: bool
) -> None:
    empty: Any = {} if shape == "map" else []
    lv = lhs if isinstance(lhs, type(empty)) else empty
    rv = rhs if isinstance(rhs, type(empty)) else empty
    if not lv and not rv:
        # Both empty or null: a leaf, so that {} and null stay distinct.
        if track_self:
            _leaf(lhs, rhs, path, out)
        return
    if shape == "map":
        for key in {**lv, **rv}:
            child, _ = node.child(key)
            _compare(lv.get(key, MISSING), rv.get(key, MISSING), child, (*path, (FIELD, key)), out)
    else:
        _compare_items(lv, rv, node, path, out)
    if track_self and path:
        if lhs is MISSING:
            out.added.insert(path)
        elif rhs is MISSING:
            out.removed.insert(path)


def _group(
    items: list[Any], node: TypeNode, order: dict[PathElement, None], *, strict: bool
) -> dict[PathElement, list[Any]]:
    groups: dict[PathElement, list[Any]] = {}
    for item in items:
        try:
            pe = item_element(node, item)
        except ItemError:
            if strict:
                raise
            continue
        if pe not in groups:
            groups[pe] = []
            order[pe] = None
        groups[pe].append(item)
    return groups


def _compare_items(lhs: list[Any], rhs: list[Any], node: TypeNode, path: Path, out: Comparison) -> None:
    order: dict[PathElement, None] = {}
    lg = _group(lhs, node, order, strict=False)
    rg = _group(rhs, node, order, strict=True)
    item_node = node.list_item()
    for pe in order:
        ll, rl = lg.get(pe, []), rg.get(pe, [])
        here = (*path, pe)
        if len(ll) <= 1 and len(rl) <= 1:
            _compare(ll[0] if ll else MISSING, rl[0] if rl else MISSING, item_node, here, out)
        elif len(ll) >= 2 and len(rl) >= 2:
            if not json_equal(ll, rl):
                out.modified.insert(here)
        elif len(ll) >= 2:
            if rl:
                _compare(MISSING, rl[0], item_node, here, out)
            out.removed.insert(here)
        else:
            if ll:
                _compare(ll[0], MISSING, item_node, here, out)
            out.added.insert(here)


# ----------------------------------------------------------------- Merge
def validate_applied(
    value: Any, node: TypeNode, path: Path = (), *, allow_duplicates: bool = False
) -> list[str]:
    """What stops ``value`` from being typed: list items that cannot be
    named and, in an apply configuration, duplicates. Messages read like
    structured-merge-diff's (``.spec.ports: element 0: ...``)."""
    errors: list[str] = []
    shape = _shape(value, node)
    if shape == "map":
        for key, sub in value.items():
            errors += validate_applied(
                sub, node.child(key)[0], (*path, (FIELD, key)), allow_duplicates=allow_duplicates
            )
    elif shape == "list":
        where = "".join(element_string(pe) for pe in path)
        seen: set[PathElement] = set()
        for i, item in enumerate(value):
            try:
                pe = item_element(node, item)
            except ItemError as e:
                errors.append(f"{where}: element {i}: {e}")
                continue
            if pe in seen and not allow_duplicates:
                errors.append(f"{where}: duplicate entries for key {element_string(pe)}")
                continue
            seen.add(pe)
            errors += validate_applied(item, node.list_item(), (*path, pe), allow_duplicates=allow_duplicates)
    return errors


def merge(lhs: Any, rhs: Any, node: TypeNode) -> Any:
    """``rhs`` (an apply configuration, already validated) merged over
    ``lhs``: leaves from ``rhs`` win, granular maps merge key by key and
    associative lists item by item. A ``null`` in ``rhs`` replaces a leaf
    (see :func:`drop_applied_nulls`) and leaves a non-empty map or list as it
    is. MISSING stands for an absent value on either side; an item of
    ``lhs`` that cannot be named raises :class:`ItemError`."""
    if rhs is MISSING:
        return lhs
    ls = MISSING if lhs is MISSING else _shape(lhs, node)
    rs = MISSING if rhs is MISSING else _shape(rhs, node)
    shape = rs if rs not in (MISSING, "null") else ls
    if shape in ("map", "list") and ls not in (shape, "null", MISSING):
        shape = "leaf"  # the value changed kind: the applied one replaces it
    if shape == "map":
        lv = lhs if isinstance(lhs, dict) else {}
        rv = rhs if isinstance(rhs, dict) else {}
        if lv or rv:
            out = {}
            for key in {**lv, **rv}:
                sub = merge(lv.get(key, MISSING), rv.get(key, MISSING), node.child(key)[0])
                if sub is not MISSING:
                    out[key] = sub
            return out
    elif shape == "list":
        litems = lhs if isinstance(lhs, list) else []
        ritems = rhs if isinstance(rhs, list) else []
        if litems or ritems:
            return _merge_items(litems, ritems, node)
    return rhs if rhs is not MISSING else lhs


def _merge_items(lhs: list[Any], rhs: list[Any], node: TypeNode) -> list[Any]:
    """Items in ``rhs`` order, with the items only ``lhs`` has kept where
    they stood relative to the shared ones (SMD ``mergingWalker``)."""
    item_node = node.list_item()
    rpes = [item_element(node, item) for item in rhs]
    robs = dict(zip(rpes, rhs, strict=True))
    lpes: list[PathElement] = []
    lobs: dict[PathElement, Any] = {}
    lpos: list[int] = []
    for i, item in enumerate(lhs):
        pe = item_element(node, item)
        lobs[pe] = None if pe in lobs else item  # a duplicated key merges as null
        lpes.append(pe)
        lpos.append(i)
    shared = [pe for pe in rpes if pe in lobs]
    next_shared = 0
    merged_r: set[PathElement] = set()
    out: list[Any] = []
    li = ri = 0
    while li < len(lpes) or ri < len(rpes):
        if li < len(lpes) and ri < len(rpes):
            pe = lpes[li]
            if pe == rpes[ri]:
                merged_r.add(pe)
                out.append(merge(lobs[pe], robs[pe], item_node))
                li += 1
                ri += 1
                next_shared += 1
                continue
            if pe in robs and next_shared < len(shared) and shared[next_shared] != pe:
                li += 1
                continue
        if li < len(lpes):
            pe = lpes[li]
            if pe not in robs:
                out.append(lhs[lpos[li]])
                li += 1
                continue
            if pe in merged_r:
                li += 1
        if ri < len(rpes):
            pe = rpes[ri]
            merged_r.add(pe)
            out.append(merge(lobs.get(pe, MISSING), robs[pe], item_node))
            ri += 1
            if next_shared < len(shared) and shared[next_shared] == pe:
                next_shared += 1
    return out


def drop_applied_nulls(merged: Any, applied: Any, node: TypeNode) -> None:
    """Remove, in place, the nulls ``applied`` put into ``merged``: once the
    merge and ownership are settled, kube-apiserver converts the object back
    to its type, where a null field is simply absent."""
    shape = _shape(merged, node)
    if shape == "map" and isinstance(applied, dict):
        for key, value in applied.items():
            if key not in merged:
                continue
            if value is None and merged[key] is None:
                del merged[key]
            else:
                drop_applied_nulls(merged[key], value, node.child(key)[0])
    elif shape == "list" and isinstance(applied, list):
        items = {}
        for item in merged:
            try:
                items[item_element(node, item)] = item
            except ItemError:
                continue
        for value in applied:
            target = items.get(item_element(node, value))
            if target is not None:
                drop_applied_nulls(target, value, node.list_item())


# ----------------------------------------------------------- RemoveItems
def remove_items(value: Any, to_remove: FieldSet, node: TypeNode) -> Any:
    """``value`` without the fields in ``to_remove``; a member removes the
    whole value at its path. A map or list left empty becomes MISSING, so its
    parent drops it."""
    shape = _shape(value, node)
    if shape == "map":
        out = {}
        for key, sub in value.items():
            pe = (FIELD, key)
            if pe in to_remove.members:
                continue
            below = to_remove.children.get(pe)
            if below is not None:
                sub = remove_items(sub, below, node.child(key)[0])
                if sub is MISSING:
                    continue
            out[key] = sub
        return out if out else MISSING
    if shape == "list":
        items = []
        item_node = node.list_item()
        for item in value:
            try:
                pe = item_element(node, item)
            except ItemError:
                items.append(item)
                continue
            if pe in to_remove.members:
                continue
            below = to_remove.children.get(pe)
            if below is not None:
                item = remove_items(item, below, item_node)
                if item is MISSING:
                    continue
            items.append(item)
        return items if items else MISSING
    return value


def with_named_fields(fields: FieldSet, node: TypeNode) -> FieldSet:
    """``fields`` plus, as members, every declared struct field on the way to
    them (SMD ``EnsureNamedFieldsAreMembers``): owning ``.spec.replicas``
    means owning ``.spec`` too when deciding what an applier may remove."""
    members = set(fields.members)
    children = {}
    for pe, sub in fields.children.items():
        if pe[0] == FIELD:
            child, declared = node.child(pe[1])
            if declared:
                members.add(pe)
        else:
            child = node.list_item()
        children[pe] = with_named_fields(sub, child)
    return FieldSet(members, children)
