"""Timestamps as the API writes them: ``metav1.Time`` (RFC 3339, UTC, whole
seconds) and ``metav1.MicroTime`` (microseconds), and back to epoch seconds.

One place, so that a condition's ``lastTransitionTime``, an Event's
``lastTimestamp`` and a status field a controller stamps all read alike.
"""

from __future__ import annotations

import datetime
import time

_SECONDS = "%Y-%m-%dT%H:%M:%SZ"
_MICROS = "%Y-%m-%dT%H:%M:%S.%fZ"


def _utc(moment: datetime.datetime | float) -> datetime.datetime:
    if isinstance(moment, datetime.datetime):
        if moment.tzinfo is None:
            raise ValueError("timestamps must be timezone-aware")
        return moment.astimezone(datetime.UTC)
    return datetime.datetime.fromtimestamp(moment, datetime.UTC)


def format_time(moment: datetime.datetime | float) -> str:
    """``metav1.Time``: an aware datetime or epoch seconds, RFC 3339 in UTC, whole seconds."""
    return _utc(moment).strftime(_SECONDS)


def format_micro_time(moment: datetime.datetime | float | None = None) -> str:
    """``metav1.MicroTime`` (a Lease's ``renewTime``); None: now."""
    return _utc(time.time() if moment is None else moment).strftime(_MICROS)


def now_time() -> str:
    """``metav1.Time`` of now."""
    return format_time(time.time())


def parse_time(value: object) -> float | None:
    """Epoch seconds of an RFC 3339 timestamp; None if absent or unreadable."""
    if not isinstance(value, str) or not value:
        return None
    try:
        return datetime.datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None
