"""The spec as the webhooks would have admitted it.

Objects may reach a controller without passing our webhooks (created while
the operator was down with ``failurePolicy: Ignore`` elsewhere, or before
the webhooks existed). Each reconcile therefore validates the object with
the same pure functions the validating webhook uses and defaults a copy
with the defaulting webhook's rules: a bad spec becomes a condition and an
Event naming the fields, never a crash or a half-built cluster.

Validation and defaulting are pure functions of the object, and most
reconciles look at an object that has not changed since the last one (a
child changed, a poll came due), so the answer is remembered per object
(``AdmissionCache``): a reconcile of an unchanged object costs one copy of
the remembered answer instead of a pydantic validation and a defaulting.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mo_operator.api.defaulting import default
from mo_operator.api.validation import validate_create
from mo_operator.kube.actor import TerminalError
from mo_operator.kube.frozen import freeze, thaw
from mo_operator.kube.objects import meta_of

Obj = dict[str, Any]

MAX_REPORTED = 5

CACHE_SIZE = 2048
"""Objects whose admission is remembered (the least recently admitted are forgotten first)."""


@dataclass(frozen=True)
class _Admission:
    source: Mapping[str, Any]
    """The object as it was admitted (frozen: a caller's later edit of its own dict cannot match)."""
    defaulted: Mapping[str, Any] | None
    """Frozen (its short strings interned, as in the informer cache); callers get a mutable copy."""
    invalid: str | None


def _admit(kind: str, obj: Mapping[str, Any]) -> _Admission:
    plain = thaw(obj)
    errors = validate_create(kind, plain)
    source = freeze(obj)  # no copy for an object from the cache: it is frozen already
    if errors:
        shown = "; ".join(str(e) for e in errors[:MAX_REPORTED])
        more = len(errors) - MAX_REPORTED
        return _Admission(source, None, shown + (f" (and {more} more)" if more > 0 else ""))
    return _Admission(source, freeze(default(kind, plain)), None)


class AdmissionCache:
    """``admitted`` answers by object, at most ``size`` of them, least recently used out first.

    One entry per object (kind, namespace, name, uid); it answers only for an object
    equal to the one it was computed from (the same cached object, by identity, or
    equal content), so a changed object (a new resourceVersion) is admitted again.
    """

    def __init__(self, size: int = CACHE_SIZE) -> None:
        self.size = size
        self._entries: OrderedDict[tuple[str, str, str, str], _Admission] = OrderedDict()
        self.misses = 0
        """How many objects were validated and defaulted (not answered from memory)."""

    def __len__(self) -> int:
        return len(self._entries)

    def clear(self) -> None:
        self._entries.clear()

    def admitted(self, kind: str, obj: Mapping[str, Any]) -> Obj:
        """A defaulted, mutable copy of ``obj``; ``TerminalError`` (reason InvalidSpec) when invalid."""
        meta = meta_of(obj)
        key = (kind, meta.namespace, meta.name, meta.uid)
        entry = self._entries.get(key)
        if entry is not None and (entry.source is obj or entry.source == obj):
            self._entries.move_to_end(key)
        else:
            self.misses += 1
            entry = self._entries[key] = _admit(kind, obj)
            self._entries.move_to_end(key)
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)
        if entry.invalid is not None:
            raise TerminalError("InvalidSpec", entry.invalid)
        assert entry.defaulted is not None
        copy: Obj = thaw(entry.defaulted)
        return copy


CACHE = AdmissionCache()
"""The operator's: every controller of the process shares it (keys include the kind)."""


def admitted(kind: str, obj: Mapping[str, Any]) -> Obj:
    """A defaulted, mutable copy of ``obj``; ``TerminalError`` (reason InvalidSpec) when invalid."""
    return CACHE.admitted(kind, obj)
