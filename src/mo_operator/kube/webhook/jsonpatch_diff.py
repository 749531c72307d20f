"""The RFC 6902 JSON patch that turns one JSON document into another, as a
mutating webhook must answer. Lists that differ are replaced whole: simpler
than element diffs and never ambiguous when the server applies it."""

from __future__ import annotations

from typing import Any


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def diff(old: Any, new: Any, path: str = "") -> list[dict[str, Any]]:
    if old == new and type(old) is type(new):
        return []
    if isinstance(old, dict) and isinstance(new, dict):
        ops: list[dict[str, Any]] = []
        for key in old:
            if key not in new:
                ops.append({"op": "remove", "path": f"{path}/{_escape(key)}"})
        for key, value in new.items():
            sub = f"{path}/{_escape(key)}"
            if key not in old:
                ops.append({"op": "add", "path": sub, "value": value})
            else:
                ops.extend(diff(old[key], value, sub))
        return ops
    if path == "":
        return [{"op": "replace", "path": "", "value": new}]
    return [{"op": "replace", "path": path, "value": new}]
