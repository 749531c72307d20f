"""JSON patch (RFC 6902) as kube-apiserver applies it.

kube-apiserver uses github.com/evanphx/json-patch (v4), whose behaviour is
a little looser than the RFC in two places kept here on purpose: ``replace``
of a missing object member adds it, and array indices may carry leading
zeros. Error messages follow that library, since clients print them.
"""

from __future__ import annotations

import copy
import re
from typing import Any

from .errors import PatchError
from .values import json_equal

__all__ = ["PatchError", "apply_json_patch"]

_MISSING = object()


def _unescape(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")


def _locate(doc: Any, path: str) -> tuple[Any, str] | None:
    """The container holding the last token of ``path`` and that token, or
    None when a parent on the way does not exist."""
    tokens = path.split("/")
    if len(tokens) < 2:
        return None
    node = doc
    for raw in tokens[1:-1]:
        token = _unescape(raw)
        if isinstance(node, dict):
            node = node.get(token, _MISSING)
        elif isinstance(node, list):
            try:
                node = node[_existing_index(node, token)]
            except PatchError:
                return None
        else:
            return None
        if node is _MISSING or not isinstance(node, dict | list):
            return None
    return node, _unescape(tokens[-1])


_INT = re.compile(r"[+-]?[0-9]+")


def _index(token: str) -> int | None:
    """``strconv.Atoi``: optional sign and decimal digits, nothing else."""
    return int(token) if _INT.fullmatch(token) else None


def _existing_index(container: list[Any], key: str) -> int:
    """The position ``key`` names in ``container``; negative indices count
    from the end, as the library allows (``SupportNegativeIndices``)."""
    index = _index(key)
    if index is None:
        raise PatchError(f'strconv.Atoi: parsing "{key}": invalid syntax')
    if index >= len(container) or index < -len(container):
        raise _bad_index(index)
    return index + len(container) if index < 0 else index


def _bad_index(index: int | str) -> PatchError:
    return PatchError(f"Unable to access invalid index: {index}: invalid index referenced")


def _get(container: Any, key: str) -> Any:
    if isinstance(container, dict):
        return container.get(key, _MISSING)
    return container[_existing_index(container, key)]


def _add(container: Any, key: str, value: Any) -> None:
    if isinstance(container, dict):
        container[key] = value
        return
    if key == "-":
        container.append(value)
        return
    index = _index(key)
    if index is None:
        raise PatchError(f"value was not a proper array index: '{key}'")
    size = len(container) + 1
    if index >= size or index < -size:
        raise _bad_index(index)
    container.insert(index + size if index < 0 else index, value)


def _remove(container: Any, key: str) -> None:
    if isinstance(container, dict):
        if key not in container:
            raise PatchError(f"Unable to remove nonexistent key: {key}: missing value")
        del container[key]
        return
    del container[_existing_index(container, key)]


def _field(op: dict[str, Any], name: str, what: str) -> str:
    value = op.get(name)
    if not isinstance(value, str):
        raise PatchError(f"{what} operation failed to decode {name}: missing value")
    return value


def _apply_op(doc: Any, op: Any) -> Any:
    if not isinstance(op, dict):
        raise PatchError("Unexpected kind: unknown")
    kind = op.get("op", "unknown")
    if kind == "add":
        path = _field(op, "path", "add")
        found = _locate(doc, path)
        if found is None:
            raise PatchError(f'add operation does not apply: doc is missing path: "{path}": missing value')
        try:
            _add(*found, copy.deepcopy(op.get("value")))
        except PatchError as e:
            raise PatchError(f"error in add for path: '{path}': {e}") from e
    elif kind == "remove":
        path = _field(op, "path", "remove")
        found = _locate(doc, path)
        if found is None:
            raise PatchError(f'remove operation does not apply: doc is missing path: "{path}": missing value')
        try:
            _remove(*found)
        except PatchError as e:
            raise PatchError(f"error in remove for path: '{path}': {e}") from e
    elif kind == "replace":
        path = _field(op, "path", "replace")
        value = copy.deepcopy(op.get("value"))
        if path == "":
            if not isinstance(value, dict | list):
                raise PatchError("replace operation value must be object or array")
            return value
        found = _locate(doc, path)
        if found is None:
            raise PatchError(f"replace operation does not apply: doc is missing path: {path}: missing value")
        container, key = found
        if isinstance(container, list):
            try:
                index = _existing_index(container, key)
            except PatchError as e:
                raise PatchError(
                    f"replace operation does not apply: doc is missing key: {path}: missing value"
                ) from e
            container[index] = value
        else:
            container[key] = value
    elif kind in ("move", "copy"):
        return _move_or_copy(doc, op, kind)
    elif kind == "test":
        _test(doc, op)
    else:
        raise PatchError(f"Unexpected kind: {kind}")
    return doc


def _move_or_copy(doc: Any, op: dict[str, Any], kind: str) -> Any:
    source = _field(op, "from", kind)
    found = _locate(doc, source)
    if found is None:
        raise PatchError(
            f"{kind} operation does not apply: doc is missing from path: {source}: missing value"
        )
    container, key = found
    try:
        value = _get(container, key)
    except PatchError as e:
        raise PatchError(f"error in {kind} for path: '{key}': {e}") from e
    if value is _MISSING:
        value = None
    if kind == "move":
        try:
            _remove(container, key)
        except PatchError as e:
            raise PatchError(f"error in move for path: '{key}': {e}") from e
    else:
        value = copy.deepcopy(value)
    path = _field(op, "path", kind)
    found = _locate(doc, path)
    if found is None:
        raise PatchError(
            f"{kind} operation does not apply: doc is missing destination path: {path}: missing value"
        )
    try:
        _add(*found, value)
    except PatchError as e:
        where = (
            f"error in move for path: '{path}'" if kind == "move" else "error while adding value during copy"
        )
        raise PatchError(f"{where}: {e}") from e
    return doc


def _test(doc: Any, op: dict[str, Any]) -> None:
    path = _field(op, "path", "test")
    expected = op.get("value")
    if path == "":
        if json_equal(doc, expected):
            return
        raise PatchError(f"testing value {path} failed: test failed")
    found = _locate(doc, path)
    if found is None:
        raise PatchError(f"test operation does not apply: is missing path: {path}: missing value")
    try:
        actual = _get(*found)
    except PatchError as e:
        raise PatchError(f"error in test for path: '{path}': {e}") from e
    if actual is _MISSING:
        if expected is None:
            return
        raise PatchError(f"testing value {path} failed: test failed")
    if not json_equal(actual, expected):
        raise PatchError(f"testing value {path} failed: test failed")


def apply_json_patch(doc: Any, operations: Any) -> Any:
    """``doc`` after the operations, applied in order; ``doc`` itself is
    changed and returned (pass a copy to keep the original). Raises
    :class:`PatchError` with evanphx/json-patch's message when one fails."""
    if not isinstance(operations, list):
        raise PatchError("json patch must be a list of operations", code=400)
    for op in operations:
        doc = _apply_op(doc, op)
    return doc
