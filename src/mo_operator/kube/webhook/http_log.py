"""The logger handed to aiohttp's request handler by our HTTP servers (the webhook
server, the embedded API server).

aiohttp logs each request it cannot parse (a request line or header past its
limit, bytes that are not HTTP, a client gone mid-request) at ERROR with a full
traceback: anyone who can reach the port could fill the log with one connection.
Such a record becomes one WARNING line with the reason, at most one per
:data:`INTERVAL` (the next one counts those left out); a failure of our own code
keeps its traceback.
"""

from __future__ import annotations

import logging
import time
from typing import Final

from aiohttp import http_exceptions

__all__ = ["request_log"]

_CLIENT_ERRORS = (http_exceptions.HttpProcessingError, ConnectionError)
INTERVAL: Final = 10.0
"""Seconds between two lines about requests that could not be parsed."""


class _OneLine(logging.Filter):
    def __init__(self) -> None:
        super().__init__()
        self._next = 0.0
        self._skipped = 0

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        if isinstance(error, _CLIENT_ERRORS):
            now = time.monotonic()
            if now < self._next:
                self._skipped += 1
                return False
            more = f" ({self._skipped} more since the last line)" if self._skipped else ""
            self._next, self._skipped = now + INTERVAL, 0
            text = getattr(error, "message", None) or str(error) or type(error).__name__
            reason = " ".join(str(text).split())
            record.msg = f"{record.getMessage()}: {reason[:300]}{more}"
            record.args = None
            record.exc_info = None
            record.exc_text = None
            record.levelno, record.levelname = logging.WARNING, "WARNING"
        return True


def request_log(name: str) -> logging.Logger:
    """The logger ``name`` (e.g. ``mo_operator.kube.webhook.server.requests``) with the
    one-line rule; pass it as aiohttp's ``logger``."""
    logger = logging.getLogger(name)
    if not any(isinstance(f, _OneLine) for f in logger.filters):
        logger.addFilter(_OneLine())
    return logger
