"""The status writes of a convergence beyond the least a correct operator makes.

Each object needs a first status (the object was seen) and the one that says
it is Ready; every other status write is progress, and the question for each
is whether anyone waits on what it changed. This module replays the status
bodies the operator's write hook recorded, object by object, and says for
each extra write which leaf paths of the status it changed against the one
written before it (conditions named by type: ``conditions[UpToDate].reason``)
and how long after the object's first write it came.
"""

from __future__ import annotations

import collections
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mo_devkit.testing import Write

IGNORED = frozenset({"lastTransitionTime", "observedGeneration"})
"""Leaves that move only with a change already counted (a condition's status, the
object's generation)."""


@dataclass(frozen=True)
class ExtraWrite:
    """A status write that is neither an object's first nor the one turning it Ready."""

    kind: str
    namespace: str
    name: str
    after_seconds: float
    """Since the operator's first write of the object (its create, or for a user's
    object, the first patch)."""
    changed: tuple[str, ...]
    moves: tuple[tuple[str, Any, Any], ...]
    """Each changed path with its value before and after (None: absent)."""


def leaves(value: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    """Every leaf of a status, conditions keyed by type, other lists whole."""
    if isinstance(value, Mapping):
        for key, item in value.items():
            if key in IGNORED:
                continue
            if key == "conditions" and isinstance(item, list):
                for condition in item:
                    yield from leaves(condition, f"{path}conditions[{condition.get('type')}].")
                continue
            yield from leaves(item, f"{path}{key}.")
    else:
        yield path.rstrip("."), value


def moves(before: Mapping[str, Any], after: Mapping[str, Any]) -> tuple[tuple[str, Any, Any], ...]:
    """Leaf paths whose value differs (appeared, went or moved), with both values."""
    old, new = dict(leaves(before)), dict(leaves(after))
    return tuple(
        (p, old.get(p), new.get(p)) for p in sorted(old.keys() | new.keys()) if old.get(p) != new.get(p)
    )


def _ready(status: Mapping[str, Any]) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in status.get("conditions") or ())


def extra_status_writes(writes: Sequence[Write]) -> list[ExtraWrite]:
    """The status writes beyond each object's first and its first Ready one, in order."""
    born: dict[tuple[str, str, str], float] = {}
    last: dict[tuple[str, str, str], Mapping[str, Any]] = {}
    was_ready: set[tuple[str, str, str]] = set()
    extra = []
    for w in sorted(writes, key=lambda w: w.issued):
        key = (w.kind, w.namespace, w.name)
        born.setdefault(key, w.issued)
        if w.subresource != "status" or not isinstance(w.body, Mapping):
            continue
        status = w.body.get("status") or {}
        before = last.get(key)
        last[key] = status
        turned_ready = _ready(status) and key not in was_ready
        if turned_ready:
            was_ready.add(key)
        if before is None or turned_ready:
            continue
        moved = moves(before, status)
        extra.append(
            ExtraWrite(w.kind, w.namespace, w.name, w.issued - born[key], tuple(m[0] for m in moved), moved)
        )
    return extra


def status_write_diffs(writes: Sequence[Write], clusters: int) -> dict[str, Any]:
    """The figure: extra status writes per cluster, counted by kind and by changed path."""
    extra = extra_status_writes(writes)
    by_kind = collections.Counter(e.kind for e in extra)
    by_path = collections.Counter(f"{e.kind} {p}" for e in extra for p in e.changed)
    return {
        "figure": "status_write_diffs",
        "value": round(len(extra) / max(1, clusters), 2),
        "unit": "writes",
        "note": "status writes per cluster beyond each object's first and Ready ones; "
        "by_path: how many of them changed each status leaf",
        "by_kind": dict(by_kind.most_common()),
        "by_path": dict(by_path.most_common()),
        "after_seconds_p50": _median([e.after_seconds for e in extra]),
    }


def _median(values: Sequence[float]) -> float | None:
    ordered = sorted(values)
    return round(ordered[len(ordered) // 2], 2) if ordered else None
