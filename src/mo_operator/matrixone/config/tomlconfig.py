"""TOML documents as plain nested dicts: parse, merge, edit by path, and write deterministically.

A spec's ``config`` is a TOML string (as in the upstream CRD) or, when built in code,
a mapping. Rendering merges it with our defaults and then sets the keys the operator
must own; output is written with sorted keys so the same input always gives the same
bytes, which the content-hashed ConfigMap name depends on.
"""

from __future__ import annotations

import copy
import tomllib
from collections.abc import Mapping, Sequence
from typing import Any

import tomli_w

Table = dict[str, Any]


class ConfigError(ValueError):
    """A config that cannot be rendered (invalid user TOML, missing dependency, bad field)."""


def parse_user_config(value: str | Mapping[str, Any] | None) -> Table:
    """The user's ``spec.config`` as a fresh dict; ``None`` or empty means no settings."""
    if value is None:
        return {}
    if isinstance(value, str):
        try:
            return tomllib.loads(value)
        except tomllib.TOMLDecodeError as e:
            raise ConfigError(f"spec.config is not valid TOML: {e}") from e
    if isinstance(value, Mapping):
        return copy.deepcopy(dict(value))
    raise ConfigError(f"spec.config must be a TOML string, got {type(value).__name__}")


def _named_tables(value: Any) -> list[Table] | None:
    """``value`` as a list of tables that have a ``name`` key (e.g. ``fileservice``), else None."""
    if not isinstance(value, list) or not value:
        return None
    if not all(isinstance(item, Mapping) and "name" in item for item in value):
        return None
    return value


def deep_merge(base: Mapping[str, Any], override: Mapping[str, Any]) -> Table:
    """A new dict: ``override`` merged into ``base``, ``override`` winning on conflicts.

    Tables merge key by key. Lists of named tables (``[[fileservice]]``) merge entry by
    entry on ``name``, so a user can change one setting of the S3 fileservice without
    restating it; base entries keep their order and unmatched override entries follow.
    Any other value in ``override`` replaces the base value. Inputs are not modified.
    """
    result: Table = copy.deepcopy(dict(base))
    for key, value in override.items():
        current = result.get(key)
        if isinstance(current, dict) and isinstance(value, Mapping):
            result[key] = deep_merge(current, value)
            continue
        base_list, override_list = _named_tables(current), _named_tables(value)
        if base_list is not None and override_list is not None:
            by_name = {str(entry["name"]): entry for entry in override_list}
            merged = [deep_merge(entry, by_name.pop(str(entry["name"]), {})) for entry in base_list]
            merged += [copy.deepcopy(e) for e in override_list if str(e["name"]) in by_name]
            result[key] = merged
            continue
        result[key] = copy.deepcopy(value)
    return result


def get_in(table: Mapping[str, Any], path: Sequence[str]) -> Any:
    """The value at ``path``, or None where the path does not lead to a value."""
    node: Any = table
    for key in path:
        if not isinstance(node, Mapping) or key not in node:
            return None
        node = node[key]
    return node


def set_in(table: Table, path: Sequence[str], value: Any) -> None:
    """Set the value at ``path``, creating tables (and replacing non-tables) on the way."""
    if not path:
        raise ValueError("path must not be empty")
    node = table
    for key in path[:-1]:
        child = node.get(key)
        if not isinstance(child, dict):
            child = {}
            node[key] = child
        node = child
    node[path[-1]] = value


def delete_in(table: Table, path: Sequence[str]) -> None:
    """Remove the value at ``path`` if there is one."""
    parent = get_in(table, path[:-1]) if len(path) > 1 else table
    if isinstance(parent, dict):
        parent.pop(path[-1], None)


def _sorted(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _sorted(value[k]) for k in sorted(value)}
    if isinstance(value, list | tuple):
        return [_sorted(v) for v in value]
    return value


def dumps(table: Mapping[str, Any]) -> str:
    """TOML text with keys sorted at every level (list order is kept, it is meaningful)."""
    try:
        return tomli_w.dumps(_sorted(table))
    except TypeError as e:
        raise ConfigError(f"config cannot be written as TOML: {e}") from e
