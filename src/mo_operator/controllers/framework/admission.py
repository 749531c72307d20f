"""The object as the webhooks would have admitted it, typed.

Objects may reach a controller without passing our webhooks (created while
the operator was down with ``failurePolicy: Ignore`` elsewhere, or before
the webhooks existed). Each reconcile therefore validates the object with
the same pure functions the validating webhook uses and defaults it with the
defaulting webhook's rules: a bad spec becomes a condition and an Event
naming the fields, never a crash or a half-built cluster.

What a controller gets (``admit``) is the kind's frozen pydantic model of the
defaulted body, so it reads ``cluster.spec.log_service.replicas`` where it
would otherwise walk dicts. The model carries the body only (``spec``,
``deps``...): the metadata and status are the live object's, read from it.

Validation, defaulting and parsing are pure functions of the object, and most
reconciles look at an object that has not changed since the last one (a
child changed, a poll came due, the operator wrote its status), so the
answer is remembered per object (``AdmissionCache``): a reconcile of an object
whose spec has not changed costs a comparison, not a validation, a defaulting
and a parse.

The answer is remembered for the object's *body*: every top-level field but
``metadata`` and ``status`` (``spec``, and ``deps``, ``overlay``... of the
kinds that have them). Nothing else decides it: of the metadata, validation
reads only the name, part of the cache's key; defaulting never writes there;
a status is what the operator itself wrote through the status subresource,
which the API server checks against the same schema.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import ValidationError

from mo_operator.api.base import APIModel, parse
from mo_operator.api.defaulting import default
from mo_operator.api.kinds import KINDS
from mo_operator.api.validation import validate_create
from mo_operator.kube.controller.outcome import TerminalError
from mo_operator.kube.meta.frozen import freeze, thaw
from mo_operator.kube.meta.objects import meta_of

Obj = dict[str, Any]
M = TypeVar("M", bound=APIModel)

KIND_OF_MODEL: dict[type[APIModel], str] = {info.model: kind for kind, info in KINDS.items()}

MAX_REPORTED = 5

CACHE_SIZE = 2048
"""Objects whose admission is remembered (the least recently admitted are forgotten first)."""


_LIVE = ("metadata", "status")
"""What the answer does not hold: a caller reads them from the object itself."""


def _body(obj: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in obj.items() if k not in _LIVE}


@dataclass(frozen=True)
class _Admission:
    body: Mapping[str, Any]
    """The body admitted (frozen: a caller's later edit of its own dict cannot match)."""
    model: APIModel | None
    """The defaulted body as the kind's frozen model."""
    invalid: str | None


def _admit(kind: str, obj: Mapping[str, Any]) -> _Admission:
    plain = thaw(obj)
    errors = validate_create(kind, plain)
    body = freeze(_body(obj))  # the parts of an object from the cache are frozen already: not copied
    if errors:
        shown = "; ".join(str(e) for e in errors[:MAX_REPORTED])
        more = len(errors) - MAX_REPORTED
        return _Admission(body, None, shown + (f" (and {more} more)" if more > 0 else ""))
    defaulted = _body(default(kind, plain))
    try:
        model = parse(KINDS[kind].model, defaulted)
    except ValidationError as e:  # the defaulting webhook's output breaks the schema: a bug, shown so
        return _Admission(body, None, f"the defaulted spec does not validate: {e.errors()[0]['msg']}")
    return _Admission(body, model, None)


class AdmissionCache:
    """``admit``'s answers by object, at most ``size`` of them, least recently used out first.

    One entry per object (kind, namespace, name, uid); it answers only for an object
    whose body is equal to the one it was computed from (parts shared with the cached
    object, as the informer cache shares a spec a status write left alone, compare by
    identity), so a changed spec is admitted again and a changed status is not.
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

    def _entry(self, kind: str, obj: Mapping[str, Any]) -> _Admission:
        meta = meta_of(obj)
        key = (kind, meta.namespace, meta.name, meta.uid)
        entry = self._entries.get(key)
        if entry is not None and entry.body == _body(obj):
            self._entries.move_to_end(key)
        else:
            self.misses += 1
            entry = self._entries[key] = _admit(kind, obj)
            self._entries.move_to_end(key)
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)
        if entry.invalid is not None:
            raise TerminalError("InvalidSpec", entry.invalid)
        return entry

    def admit(self, model: type[M], obj: Mapping[str, Any]) -> M:
        """The defaulted body of ``obj`` as its kind's frozen ``model``; ``TerminalError``
        (reason InvalidSpec) when invalid."""
        entry = self._entry(KIND_OF_MODEL[model], obj)
        assert isinstance(entry.model, model)
        return entry.model


CACHE = AdmissionCache()
"""The operator's: every controller of the process shares it (keys include the kind)."""


def admit(model: type[M], obj: Mapping[str, Any]) -> M:
    """The defaulted body of ``obj`` as its kind's frozen ``model`` (``spec``, ``deps``...;
    metadata and status are read from ``obj``); ``TerminalError`` (reason InvalidSpec) when invalid."""
    return CACHE.admit(model, obj)
