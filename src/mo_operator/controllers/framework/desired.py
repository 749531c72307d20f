"""Deciding whether an object needs writing: the heart of "a reconcile of an
object already in its desired state makes zero API writes".

A controller computes the whole object it wants (its *desired* object) and
server-side applies it only when the cached object differs. "Differs" has
two sides, and each catches what the other cannot:

- the **applied hash**: an annotation carrying a hash of the desired object
  as last applied. When our intent changes (a field added, changed or, the
  case a plain comparison misses, *removed*) the hash changes and we apply;
  server-side apply then also removes the fields we stopped setting.
- the **subset check**: every field we set still has the value we set. This
  catches drift (someone edited a field we own) while ignoring everything
  the API server and other controllers add (defaults, clusterIP, status,
  other managers' labels).

Desired objects must be written the way the API server stores them
(canonical quantities, no empty lists) or the subset check never settles;
``matches`` treats an empty list, empty map or None we asked for as
matching an absent field, since the API server drops those.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from mo_operator.kube.meta.objects import annotations_of

APPLIED_HASH = "matrixorigin.io/applied-hash"

Obj = dict[str, Any]


def content_hash(value: Any) -> str:
    """A short stable hash of a JSON value (keys sorted)."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), default=_encodable)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _encodable(value: Any) -> Any:
    """What a value ``json`` cannot encode hashes as: a mapping (a cached, frozen
    part) as the object it is, anything else as its text."""
    return dict(value.items()) if isinstance(value, Mapping) else str(value)


def stamped(desired: Mapping[str, Any]) -> Obj:
    """``desired`` with the applied-hash annotation of its own content."""
    obj = dict(desired)
    meta = dict(obj.get("metadata") or {})
    annotations = {k: v for k, v in annotations_of(obj).items() if k != APPLIED_HASH}
    meta["annotations"] = annotations
    obj["metadata"] = meta
    annotations[APPLIED_HASH] = content_hash(obj)
    return obj


def _empty(value: Any) -> bool:
    return value is None or (isinstance(value, list | Mapping) and not value)


def matches(want: Any, have: Any) -> bool:
    """True when every field of ``want`` has the same value in ``have``.

    Maps: each key of ``want`` must match in ``have`` (extra keys in ``have``
    are fine). Lists: same length, element by element (for the kinds we
    apply, the API server adds fields inside list elements, e.g. a
    container's terminationMessagePath, but never elements; Pods, where
    ServiceAccount admission appends a token volume, mounts and tolerations,
    are created, never compared here). Scalars: equal, with ints and
    floats of the same value equal (JSON does not tell them apart).
    """
    kind = type(want)
    if kind is str:  # most leaves: no numeric or boolean rule applies
        return bool(want == have)
    if kind is dict or (kind is not list and isinstance(want, Mapping)):
        if type(have) is not dict and not isinstance(have, Mapping):
            return False
        found = have.get
        for key, value in want.items():
            got = found(key, _MISSING)
            if got is _MISSING:
                if _empty(value):
                    continue
                return False
            if value is not got and not matches(value, got):
                return False
        return True
    if kind is list or kind is tuple or isinstance(want, (list, tuple)):
        if not isinstance(have, (list, tuple)) or len(want) != len(have):
            return False
        return all(matches(w, h) for w, h in zip(want, have, strict=True))
    if kind is bool or isinstance(have, bool):
        return want is have
    if isinstance(want, (int, float)) and isinstance(have, (int, float)):
        return want == have
    return bool(want == have)


_MISSING = object()


def up_to_date(cached: Mapping[str, Any] | None, desired: Mapping[str, Any]) -> bool:
    """True when ``cached`` needs no write to become ``desired`` (a stamped object)."""
    if cached is None:
        return False
    want_hash = annotations_of(desired).get(APPLIED_HASH)
    have_hash = annotations_of(cached).get(APPLIED_HASH)
    if want_hash is not None and want_hash != have_hash:
        return False
    return matches(desired, cached)
