"""Objects of our kinds read from the cache, typed.

A controller reads the object it reconciles through ``admission.admit``; the
objects of our kinds it only looks at (a child set's status, a RestoreJob's
phase) it reads here, as their kind's frozen model. The cache keeps compact
frozen JSON (its memory is a goal); a model is built on first read of a given
status and remembered by identity, so the many reconciles that see the same
cached status parse it once.

What the API server stored went through the CRD's schema, so it parses; a
status that does not (a field of another operator's version) reads as empty
rather than failing the reconcile that only looks at it, and is logged once.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any, TypeVar

from pydantic import ValidationError

from mo_operator.api.base import APIModel, parse
from mo_operator.kube.controller.outcome import TerminalError
from mo_operator.kube.meta.frozen import thaw

from .admission import admit

__all__ = ["parse_status", "read", "status_of", "why_invalid"]

S = TypeVar("S", bound=APIModel)
M = TypeVar("M", bound=APIModel)

log = logging.getLogger(__name__)

CACHE_SIZE = 4096
"""Statuses remembered (the least recently read are forgotten first)."""

_read: OrderedDict[tuple[int, type[APIModel]], tuple[Any, APIModel]] = OrderedDict()


def status_of(model: type[S], obj: Mapping[str, Any] | None) -> S:
    """The ``status`` of ``obj`` as ``model``; an empty ``model()`` when it has none."""
    raw = obj.get("status") if obj is not None else None
    if not raw:
        return model()
    key = (id(raw), model)
    found = _read.get(key)
    if found is not None and found[0] is raw:
        _read.move_to_end(key)
        typed = found[1]
    else:
        try:
            typed = parse(model, thaw(raw))
        except ValidationError as e:
            log.warning("%s: status does not parse as %s, read as empty: %s", _name(obj), model.__name__, e)
            typed = model()
        _read[key] = (raw, typed)
        while len(_read) > CACHE_SIZE:
            _read.popitem(last=False)
    assert isinstance(typed, model)
    return typed


def _name(obj: Mapping[str, Any] | None) -> str:
    meta = (obj or {}).get("metadata") or {}
    return f"{obj.get('kind') if obj else '?'} {meta.get('namespace', '')}/{meta.get('name', '')}"


def read(model: type[M], obj: Mapping[str, Any]) -> M | None:
    """Another object of our kinds, as admitted (``admission.admit``): its defaulted body
    as ``model``, or None when it is invalid (its own controller reports that; a
    reconcile that only looks at it must not fail for it)."""
    try:
        return admit(model, obj)
    except TerminalError:
        return None


def why_invalid(model: type[M], obj: Mapping[str, Any]) -> str:
    """What admission says of an object ``read`` found invalid."""
    try:
        admit(model, obj)
    except TerminalError as e:
        return e.message
    return "valid"


def parse_status(model: type[S], status: Mapping[str, Any]) -> S:
    """A status draft (``ctx.status``: as last written, or as this reconcile set it) as
    ``model``; empty when it does not parse (a field another version wrote)."""
    try:
        return parse(model, thaw(status))
    except ValidationError as e:
        log.warning("a status draft does not parse as %s, read as empty: %s", model.__name__, e)
        return model()
