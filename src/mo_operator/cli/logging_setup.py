"""Logging: human-readable lines by default, one JSON object per line when
asked (for log collectors), with any context fields a log call carries.

Timestamps are RFC 3339 in UTC with milliseconds (``2026-11-28T02:29:46.123Z``),
what log collectors parse without a format of their own; a traceback stays
inside its JSON record (``error``), never spread over lines of its own."""

from __future__ import annotations

import json
import logging
import sys
import time
from typing import Any, TextIO

from mo_operator.kube.controller.outcome import ReconcileIdFilter

_STANDARD = set(vars(logging.makeLogRecord({})))
LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


def rfc3339(created: float) -> str:
    """``created`` (seconds since the epoch) as RFC 3339 UTC with milliseconds."""
    seconds = int(created)
    millis = int((created - seconds) * 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{millis:03d}Z"


class TextFormatter(logging.Formatter):
    """``time LEVEL logger [reconcileID]: message``; the id only on lines written
    during a reconcile."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s%(reconcile)s: %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        rid = getattr(record, "reconcileID", None)
        record.reconcile = f" [{rid}]" if rid else ""
        return super().format(record)

    def formatTime(self, record: logging.LogRecord, datefmt: str | None = None) -> str:
        return rfc3339(record.created)


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "ts": rfc3339(record.created),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        for k, v in vars(record).items():
            if k not in _STANDARD and not k.startswith("_"):
                out[k] = v
        if record.exc_info:
            out["error"] = self.formatException(record.exc_info)
        if record.stack_info:
            out["stack"] = self.formatStack(record.stack_info)
        return json.dumps(out, default=str)


class _StderrHandler(logging.StreamHandler[TextIO]):
    """Writes to whatever ``sys.stderr`` is at the time of each record, so that a
    live display which takes stderr over (rich's ``Live``) prints the lines above
    itself instead of being torn by them."""

    @property
    def stream(self) -> TextIO:
        return sys.stderr

    @stream.setter
    def stream(self, _: TextIO) -> None:
        pass


def known_level(level: str) -> bool:
    return level.upper() in LEVELS


def setup_logging(level: str = "INFO", *, json_format: bool = False) -> None:
    """``level`` must be one of ``LEVELS`` (any case)."""
    handler = _StderrHandler()
    handler.addFilter(ReconcileIdFilter())
    handler.setFormatter(JsonFormatter() if json_format else TextFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    logging.getLogger("aiohttp.access").setLevel(logging.WARNING)
    for noisy in ("httpx", "httpx2"):  # lightkube 1.x uses httpx2; one INFO line per request
        logging.getLogger(noisy).setLevel(logging.WARNING)
