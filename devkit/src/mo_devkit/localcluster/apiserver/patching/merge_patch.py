"""JSON merge patch (RFC 7386) as kube-apiserver applies it, and the diff
that produces one.

kube-apiserver uses evanphx/json-patch's ``MergePatch``: objects merge key
by key, ``null`` deletes a key, and anything else (lists included) replaces
the old value. A value placed where nothing was before, or over a
non-object, is stored with its ``null`` members pruned, since they would
mean "delete" inside a fresh subtree.
"""

from __future__ import annotations

import copy
from typing import Any

from .errors import PatchError
from .values import json_equal

_ABSENT = object()


def _prune_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _prune_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_prune_nulls(v) for v in value]
    return value


def _merge(current: Any, patch: Any) -> Any:
    if not isinstance(current, dict):
        return _prune_nulls(patch)
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    for key, value in patch.items():
        if value is None:
            current.pop(key, None)
        elif current.get(key) is None:
            current[key] = _prune_nulls(value)
        else:
            current[key] = _merge(current[key], value)
    return current


def apply_merge_patch(doc: Any, patch: Any) -> Any:
    """``doc`` merged with ``patch``; ``doc`` itself is changed and returned.

    A ``null`` or scalar patch is not a merge patch (kube-apiserver answers
    400 "Invalid JSON Patch"); a list patch replaces the document.
    """
    if isinstance(patch, list):
        return _prune_nulls(patch)
    if not isinstance(patch, dict):
        raise PatchError("Invalid JSON Patch", code=400)
    if not isinstance(doc, dict):
        return _prune_nulls(patch)
    return _merge(doc, patch)


def create_merge_patch(original: Any, modified: Any) -> Any:
    """The merge patch that turns ``original`` into ``modified``: changed and
    added keys with their new values, removed keys as ``null``. Like any
    merge patch it cannot set a value to ``null``, nor patch inside lists."""
    if not isinstance(original, dict) or not isinstance(modified, dict):
        return copy.deepcopy(modified)
    patch: dict[str, Any] = {}
    for key in original:
        if key not in modified:
            patch[key] = None
    for key, value in modified.items():
        old = original.get(key, _ABSENT)
        if old is _ABSENT:
            patch[key] = copy.deepcopy(value)
        elif isinstance(old, dict) and isinstance(value, dict):
            sub = create_merge_patch(old, value)
            if sub:
                patch[key] = sub
        elif not json_equal(old, value):
            patch[key] = copy.deepcopy(value)
    return patch
