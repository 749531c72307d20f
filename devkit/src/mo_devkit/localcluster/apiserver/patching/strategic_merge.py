"""Strategic merge patch, as kube-apiserver applies it to built-in kinds
(k8s.io/apimachinery ``pkg/util/strategicpatch``, server side: parallel
lists merged, unmatched nulls ignored).

Like a JSON merge patch, but lists whose field carries
``patchStrategy:"merge"`` merge item by item (maps by their
``patchMergeKey``, scalars as a set), and directives steer the rest:

- ``$patch: replace`` / ``delete`` in a map; ``$patch: delete`` (with the
  merge key) or ``replace`` as an item of a merged list;
- ``$retainKeys: [...]``: clear the keys of the live map not listed;
- ``$deleteFromPrimitiveList/<field>: [...]``: remove scalars from a list;
- ``$setElementOrder/<field>: [...]``: the order of the merged list.

kube-apiserver then decodes the result into the Go type, which drops nulls
and unknown keys; the directives left in values copied verbatim are removed
here for the same end state.
"""

from __future__ import annotations

from typing import Any

from ..schema.goformat import go_deep_equal, go_kind
from .errors import PatchError
from .typeinfo import TypeInfo, TypeNode
from .values import clone, go_type, go_v

DIRECTIVE = "$patch"
DELETE_FROM_PRIMITIVE_LIST = "$deleteFromPrimitiveList"
RETAIN_KEYS = "$retainKeys"
SET_ELEMENT_ORDER = "$setElementOrder"

_DROP = object()
_MISSING = object()


def _bad_request(message: str) -> PatchError:
    return PatchError(message, code=400)


def _no_merge_key(item: Any, key: str) -> PatchError:
    return PatchError(f"map: {go_v(item)} does not contain declared merge key: {key}", code=500)


def _bad_arg(expected: str, actual: Any) -> PatchError:
    return PatchError(f"expected a {expected}, but received a {go_type(actual)}", code=500)


_MAP, _SLICE = "map[string]interface {}", "[]interface {}"


def apply_strategic_merge_patch(original: Any, patch: Any, type_info: TypeInfo) -> Any:
    """``original`` with ``patch`` applied, following ``type_info``'s
    ``patchStrategy``/``patchMergeKey`` rules. Neither argument is changed."""
    if patch is None:
        return clone(original)
    if not isinstance(patch, dict):
        what = {"slice": "array", "string": "string", "bool": "bool"}.get(go_kind(patch), "number")
        raise _bad_request(f"json: cannot unmarshal {what} into Go value of type map[string]interface {{}}")
    if not isinstance(original, dict):
        raise _bad_request("invalid JSON document")
    return _merge_map(clone(original), clone(patch), type_info.root)


# ------------------------------------------------------------------ maps
def _merge_map(original: dict[str, Any], patch: dict[str, Any], node: TypeNode) -> dict[str, Any]:
    if DIRECTIVE in patch:
        directive = patch[DIRECTIVE]
        if directive == "replace":
            replaced: dict[str, Any] = _strip(patch)
            return replaced
        if directive == "delete":
            return {}
        raise PatchError(f"unknown patch type: {go_v(directive)} in map: {go_v(patch)}", code=500)
    _apply_retain_keys(original, patch)
    _merge_ordered_lists(original, patch, node)
    for key, value in list(patch.items()):
        delete_list = key.startswith(DELETE_FROM_PRIMITIVE_LIST)
        if delete_list:
            key = _extract_key(key, DELETE_FROM_PRIMITIVE_LIST)
        if value is None:
            original.pop(key, None)
            continue
        current = original.get(key, _MISSING)
        if current is _MISSING or go_kind(current) != go_kind(value):
            if not delete_list:
                _store(original, key, _clean(value))
            continue
        child = node.child(key)[0]
        if isinstance(current, dict):
            if child.rule.patch.strategy == "replace":
                original[key] = _strip(value)
            else:
                original[key] = _merge_map(current, value, child)
        elif isinstance(current, list):
            original[key] = _merge_list_field(current, value, child, key, delete_list)
        else:
            original[key] = value
    return original


def _store(target: dict[str, Any], key: str, value: Any) -> None:
    if value is _DROP:
        target.pop(key, None)
    else:
        target[key] = value


def _is_directive_key(key: str) -> bool:
    return key in (DIRECTIVE, RETAIN_KEYS) or key.startswith((SET_ELEMENT_ORDER, DELETE_FROM_PRIMITIVE_LIST))


def _strip(value: Any) -> Any:
    """A patch value stored as sent, as decoding into the Go type leaves it:
    without null members and directive keys."""
    if isinstance(value, dict):
        return {k: _strip(v) for k, v in value.items() if v is not None and not _is_directive_key(k)}
    if isinstance(value, list):
        return [_strip(v) for v in value]
    return value


def _clean(value: Any) -> Any:
    """A patch value placed where the live object has nothing comparable:
    maps that are themselves directives go (_DROP at the top), then as
    :func:`_strip` (strategicpatch ``discardNullValuesFromPatch`` and
    ``removeDirectives``)."""
    if isinstance(value, dict):
        if DIRECTIVE in value:
            return _DROP
        out = {}
        for k, v in value.items():
            if v is None or _is_directive_key(k):
                continue
            v = _clean(v)
            if v is not _DROP:
                out[k] = v
        return out
    if isinstance(value, list):
        return [c for c in (_clean(v) for v in value) if c is not _DROP]
    return value


def _extract_key(key: str, prefix: str) -> str:
    head, sep, rest = key.partition("/")
    if not sep or head != prefix:
        what = "primitive list" if prefix == DELETE_FROM_PRIMITIVE_LIST else "setElementOrder list"
        raise _bad_request(f"invalid patch format of {what}")
    return rest


def _apply_retain_keys(original: dict[str, Any], patch: dict[str, Any]) -> None:
    if RETAIN_KEYS not in patch:
        return
    retain = patch.pop(RETAIN_KEYS)
    if not isinstance(retain, list):
        raise _bad_request("invalid patch format of retainKeys")
    keep = {k for k in retain if isinstance(k, str)}
    for key, value in patch.items():
        if value is None or key.startswith((DELETE_FROM_PRIMITIVE_LIST, SET_ELEMENT_ORDER)):
            continue
        if key not in keep:
            raise _bad_request("invalid patch format of retainKeys")
    for key in [k for k in original if k not in keep]:
        del original[key]


# ----------------------------------------------------------------- lists
def _merge_list_field(
    original: list[Any], patch: list[Any], node: TypeNode, name: str, delete_list: bool
) -> list[Any]:
    meta = node.rule.patch
    if meta.strategy == "merge" or delete_list:
        return _merge_list(original, patch, node, meta.merge_key, name, delete_list)
    replaced: list[Any] = _strip(patch)
    return replaced


def _element_kind(*lists: list[Any]) -> str:
    kinds = {go_kind(v) for items in lists for v in items}
    if "slice" in kinds:
        raise PatchError("lists of lists are not supported", code=422)
    if len(kinds) > 1:
        raise PatchError(
            "list element types are not identical: [" + " ".join(go_v(items) for items in lists) + "]",
            code=500,
        )
    if not kinds:
        raise PatchError("no elements in any of the given slices", code=500)
    return kinds.pop()


def _merge_list(
    original: list[Any], patch: list[Any], node: TypeNode, merge_key: str, name: str, delete_list: bool
) -> list[Any]:
    if not original and not patch:
        return original
    kind = _element_kind(original, patch)
    if kind != "map":
        if delete_list:
            return [v for v in original if not any(go_deep_equal(v, d) for d in patch)]
        merged = _dedupe(original + patch)
    else:
        if not merge_key:
            raise PatchError(f"cannot merge lists without merge key for {name}", code=500)
        original, patch = _special_items(original, patch, merge_key)
        merged = _merge_items(list(original), patch, merge_key, node.list_item())
    patch_items, server_only = _partition(merged, patch, merge_key if kind == "map" else "")
    return _normalize_order(patch_items, server_only, patch, original, merge_key, kind)


def _dedupe(items: list[Any]) -> list[Any]:
    out: list[Any] = []
    for v in items:
        if not any(go_deep_equal(v, o) for o in out):
            out.append(v)
    return out


def _special_items(original: list[Any], patch: list[Any], key: str) -> tuple[list[Any], list[Any]]:
    """Apply the ``$patch`` items of a merged list: deletions by merge key,
    and ``replace``, which makes the rest of the patch the whole list."""
    plain = []
    replace = False
    for item in patch:
        directive = item.get(DIRECTIVE, _MISSING)
        if directive is _MISSING:
            plain.append(item)
        elif directive == "delete":
            if key not in item:
                raise _no_merge_key(item, key)
            original = [o for o in original if not _key_matches(o, key, item[key])]
        elif directive == "replace":
            replace = True
        elif directive == "merge":
            raise PatchError("merging lists cannot yet be specified in the patch", code=500)
        else:
            raise PatchError(f"unknown patch type: {go_v(directive)} in map: {go_v(item)}", code=500)
    return (plain, []) if replace else (original, plain)


def _key_matches(item: Any, key: str, value: Any) -> bool:
    if not isinstance(item, dict):
        raise PatchError("value for key is not a map", code=500)
    return key in item and go_deep_equal(item[key], value)


def _merge_items(original: list[Any], patch: list[Any], key: str, item_node: TypeNode) -> list[Any]:
    for item in patch:
        if key not in item:
            raise _no_merge_key(item, key)
        at = next((i for i, o in enumerate(original) if _key_matches(o, key, item[key])), -1)
        if at >= 0:
            original[at] = _merge_map(original[at], item, item_node)
        else:
            original.append(_strip(item))
    return original


def _partition(items: list[Any], by: list[Any], key: str) -> tuple[list[Any], list[Any]]:
    """The items present in ``by`` (by merge key for maps) and the others."""
    inside: list[Any] = []
    outside: list[Any] = []
    for item in items:
        if key:
            if not isinstance(item, dict):
                raise _bad_arg(_MAP, item)
            if key not in item:
                raise _no_merge_key(item, key)
            found = any(_key_matches(b, key, item[key]) for b in by)
        else:
            found = any(go_deep_equal(item, b) for b in by)
        (inside if found else outside).append(item)
    return inside, outside


def _index(items: list[Any], item: Any, key: str, kind: str) -> int:
    if kind == "map":
        wanted = item.get(key) if isinstance(item, dict) else None
        return next(
            (
                i
                for i, o in enumerate(items)
                if go_deep_equal(o.get(key) if isinstance(o, dict) else None, wanted)
            ),
            -1,
        )
    return next((i for i, o in enumerate(items) if go_deep_equal(o, item)), -1)


def _sort_by(items: list[Any], order: list[Any], key: str, kind: str) -> list[Any]:
    """``items`` in the order of ``order`` (items it lacks last, stable);
    deletion markers go to the end."""
    deletions: list[Any] = []
    if kind == "map":
        for item in [*items, *order]:
            if not isinstance(item, dict):
                raise _bad_arg(_MAP, item)
            if key not in item:
                raise _no_merge_key(item, key)
        deletions = [i for i in items if i.get(DIRECTIVE) == "delete"]
        items = [i for i in items if i.get(DIRECTIVE) != "delete"]

    def position(item: Any) -> int:
        at = _index(order, item, key, kind)
        return at if at >= 0 else len(order)

    return sorted(items, key=position) + deletions


def _normalize_order(
    patch_items: list[Any],
    server_only: list[Any],
    patch_order: list[Any],
    server_order: list[Any],
    key: str,
    kind: str,
) -> list[Any]:
    """Patch items in the patch's order, live-only items in the live order,
    interleaved so each live-only item stays before the patch items that
    followed it in the live list (strategicpatch ``mergeSortedSlice``)."""
    right = _sort_by(patch_items, patch_order, key, kind)
    left = _sort_by(server_only, server_order, key, kind)
    out: list[Any] = []
    i = j = 0
    while i < len(left) or j < len(right):
        if j >= len(right):
            out.append(left[i])
            i += 1
        elif i >= len(left):
            out.append(right[j])
            j += 1
        else:
            li, ri = _index(server_order, left[i], key, kind), _index(server_order, right[j], key, kind)
            if li >= 0 and ri >= 0 and li < ri:
                out.append(left[i])
                i += 1
            else:
                out.append(right[j])
                j += 1
    return out


def _merge_ordered_lists(original: dict[str, Any], patch: dict[str, Any], node: TypeNode) -> None:
    """Handle each ``$setElementOrder/<field>`` with its list: merge the
    list, then order it as the directive says (strategicpatch
    ``mergePatchIntoOriginal``). The list is removed from ``patch``."""
    for directive in [k for k in patch if k.startswith(SET_ELEMENT_ORDER)]:
        order = patch.pop(directive)
        if not isinstance(order, list):
            raise _bad_arg(_SLICE, order)
        name = _extract_key(directive, SET_ELEMENT_ORDER)
        current, incoming = original.get(name, _MISSING), patch.get(name, _MISSING)
        for value in (current, incoming):
            if value is not _MISSING and not isinstance(value, list):
                raise _bad_arg(_SLICE, value)
        child = node.child(name)[0]
        key = child.rule.patch.merge_key
        _check_order(incoming if incoming is not _MISSING else [], order, key)
        if current is _MISSING and incoming is _MISSING:
            continue
        if incoming is _MISSING:
            merged = current
        elif current is _MISSING:
            merged = _clean(incoming)
        else:
            merged = _merge_list_field(current, incoming, child, name, False)
        patch.pop(name, None)
        elements = [
            *(current if current is not _MISSING else []),
            *(incoming if incoming is not _MISSING else []),
        ]
        if not elements:
            original[name] = merged
            continue
        kind = _element_kind(elements)
        inside, outside = _partition(merged, order, key)
        original[name] = _normalize_order(
            inside, outside, order, current if current is not _MISSING else [], key, kind
        )


def _check_order(patch_list: list[Any], order: list[Any], key: str) -> None:
    """The patch list must follow the relative order of the directive."""
    if not order or not patch_list:
        return
    items = patch_list
    if key:
        for item in patch_list:
            if not isinstance(item, dict):
                raise _bad_arg(_MAP, item)
        items = [i for i in patch_list if i.get(DIRECTIVE) != "delete"]
    pi = oi = 0
    while pi < len(items) and oi < len(order):
        if isinstance(items[pi], dict) and DIRECTIVE in items[pi]:
            pi += 1
            continue
        if _order_key_equal(items[pi], order[oi], key):
            pi += 1
        oi += 1
    if pi < len(items) and oi >= len(order):
        raise PatchError(
            f"The order in patch list:\n{go_v(patch_list)}\n doesn't match {SET_ELEMENT_ORDER} list:\n{go_v(order)}\n",
            code=500,
        )


def _order_key_equal(left: Any, right: Any, key: str) -> bool:
    if not key:
        return go_deep_equal(left, right)
    for item in (left, right):
        if not isinstance(item, dict):
            raise _bad_arg(_MAP, item)
        if key not in item:
            raise _no_merge_key(item, key)
    return go_deep_equal(left[key], right[key])
