"""``status.conditions`` helpers for metav1.Condition lists.

Pure functions over plain dicts that return new lists, so a reconcile can
build the status it wants and compare it with the cached one to decide
whether a ``/status`` write is needed at all. The rules follow apimachinery's
``meta.SetStatusCondition``: ``lastTransitionTime`` moves only when
``status`` changes, so ``kubectl describe`` tells how long a condition has
held rather than when the controller last looked.
"""

from __future__ import annotations

import datetime
import re
from collections.abc import Mapping, Sequence
from typing import Any

from .times import format_time as format_time

Condition = dict[str, Any]

TRUE = "True"
FALSE = "False"
UNKNOWN = "Unknown"
_STATUSES = (TRUE, FALSE, UNKNOWN)

#: Stands in for an empty reason. metav1.Condition requires one, and Cluster
#: API uses the same word, so users recognise "the controller gave none".
DEFAULT_REASON = "NoReasonReported"

# Reasons are CamelCase words by API convention (api-conventions.md,
# "Typical status properties"); this is stricter than the schema pattern
# ``^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$`` so our reasons read alike.
_REASON = re.compile(r"^[A-Z][A-Za-z0-9]*$")
_REASON_MAX = 1024
# metav1.Condition's schema pattern and limit for ``type``.
_TYPE = re.compile(
    r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
    r"(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$"
)
_TYPE_MAX = 316
_MESSAGE_MAX = 32768
_TRUNCATED = "..."


def _validated(new: Mapping[str, Any]) -> Condition:
    ctype = str(new.get("type") or "")
    if len(ctype) > _TYPE_MAX or not _TYPE.match(ctype):
        raise ValueError(f"invalid condition type {ctype!r}")
    status = new.get("status")
    if status not in _STATUSES:
        raise ValueError(f"condition {ctype}: status must be one of {_STATUSES}, not {status!r}")
    reason = str(new.get("reason") or "") or DEFAULT_REASON
    if len(reason) > _REASON_MAX or not _REASON.match(reason):
        raise ValueError(f"condition {ctype}: reason {reason!r} is not a CamelCase word")
    message = str(new.get("message") or "")
    if len(message) > _MESSAGE_MAX:
        # Messages often carry error text from elsewhere; the API server
        # would reject the whole status write over one long message.
        message = message[: _MESSAGE_MAX - len(_TRUNCATED)] + _TRUNCATED
    cond: Condition = {"type": ctype, "status": status, "reason": reason, "message": message}
    if new.get("observedGeneration") is not None:
        cond["observedGeneration"] = int(new["observedGeneration"])
    if new.get("lastTransitionTime"):
        cond["lastTransitionTime"] = str(new["lastTransitionTime"])
    return cond


def set_condition(
    conditions: Sequence[Mapping[str, Any]] | None,
    new: Mapping[str, Any],
    now: datetime.datetime | str,
) -> list[Condition]:
    """Return ``conditions`` with ``new`` set (replacing the one of its type,
    in place, or appended).

    ``new`` needs ``type`` and ``status``; an empty ``reason`` becomes
    ``DEFAULT_REASON`` and a non-CamelCase one raises ``ValueError``.
    ``lastTransitionTime`` is kept from the existing condition when the
    status did not change, else taken from ``new`` if given, else ``now``.
    """
    cond = _validated(new)
    stamp = now if isinstance(now, str) else format_time(now)
    result: list[Condition] = []
    found = False
    for old in conditions or ():
        if old.get("type") != cond["type"]:
            result.append(dict(old))
            continue
        found = True
        if old.get("status") == cond["status"] and old.get("lastTransitionTime"):
            cond["lastTransitionTime"] = old["lastTransitionTime"]
        result.append(_with_time(cond, stamp))
    if not found:
        result.append(_with_time(cond, stamp))
    return result


def _with_time(cond: Condition, stamp: str) -> Condition:
    out = {**cond, "lastTransitionTime": cond.get("lastTransitionTime") or stamp}
    # A stable key order keeps status diffs (and tests) readable.
    order = ("type", "status", "observedGeneration", "lastTransitionTime", "reason", "message")
    return {k: out[k] for k in order if k in out}


def lead_with(conditions: Sequence[Mapping[str, Any]], types: Sequence[str]) -> list[Condition]:
    """``conditions`` with those of ``types`` first, in that order, and the others
    after them in their own order: a kind whose clients read ``conditions[0]``
    (as some read another controller's single condition) keep reading the one
    they expect however many conditions follow."""
    rank = {ctype: i for i, ctype in enumerate(types)}
    ordered = sorted(
        enumerate(conditions), key=lambda ic: (rank.get(str(ic[1].get("type")), len(rank)), ic[0])
    )
    return [dict(c) for _, c in ordered]


def get_condition(conditions: Sequence[Mapping[str, Any]] | None, ctype: str) -> Condition | None:
    """A copy of the condition of ``ctype``, or None."""
    for cond in conditions or ():
        if cond.get("type") == ctype:
            return dict(cond)
    return None


def is_true(conditions: Sequence[Mapping[str, Any]] | None, ctype: str) -> bool:
    cond = get_condition(conditions, ctype)
    return cond is not None and cond.get("status") == TRUE
