"""Cron schedules as a CronJob reads them: five fields or a macro, in a time zone.

croniter does the parsing and the arithmetic; this module only narrows what it accepts
to what ``kube-controller-manager`` accepts (robfig/cron's standard parser: no seconds
or years field, no ``TZ=`` prefix, the zone being ``spec.timeZone``) and turns its
answers into Unix times.
"""

from __future__ import annotations

import datetime
import zoneinfo
from dataclasses import dataclass
from typing import Final

from croniter import croniter

__all__ = ["MACROS", "Schedule", "schedule_error", "time_zone_error"]

MACROS: Final = frozenset({"@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly"})
_EPSILON = datetime.timedelta(microseconds=1)


def schedule_error(text: str) -> str | None:
    """Why ``text`` is not a schedule a CronJob would take, None when it is one."""
    words = text.split()
    if not words:
        return "must not be empty"
    if words[0].upper().startswith(("TZ=", "CRON_TZ=")):
        return "cannot name a time zone (TZ= or CRON_TZ=): set spec.timeZone instead"
    if words[0].startswith("@"):
        if len(words) != 1 or words[0].lower() not in MACROS:
            return f"unknown macro {words[0]!r}: one of {', '.join(sorted(MACROS))}"
        return None
    if len(words) != 5:
        return f"must have 5 fields (minute hour day-of-month month day-of-week), not {len(words)}"
    try:
        croniter(text)
    except (ValueError, KeyError, IndexError, OverflowError, TypeError) as e:
        return f"not a cron schedule: {e}"
    return None


def time_zone_error(name: str) -> str | None:
    """Why ``name`` is not an IANA time zone this operator knows, None when it is one."""
    try:
        zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError):
        return f"unknown time zone {name!r}: an IANA name such as Europe/Paris or UTC"
    return None


@dataclass(frozen=True)
class Schedule:
    """A valid cron schedule in a time zone (UTC when None)."""

    text: str
    time_zone: str | None = None

    def _at(self, when: float) -> datetime.datetime:
        zone: datetime.tzinfo = zoneinfo.ZoneInfo(self.time_zone) if self.time_zone else datetime.UTC
        return datetime.datetime.fromtimestamp(when, zone)

    @property
    def _expression(self) -> str:
        text = self.text.strip()
        return text.lower() if text.startswith("@") else text

    def next_after(self, when: float) -> float:
        """The first scheduled time strictly after ``when``."""
        return croniter(self._expression, self._at(when)).get_next(datetime.datetime).timestamp()

    def latest_at_or_before(self, when: float) -> float:
        """The last scheduled time at or before ``when``."""
        start = self._at(when) + _EPSILON
        return croniter(self._expression, start).get_prev(datetime.datetime).timestamp()
