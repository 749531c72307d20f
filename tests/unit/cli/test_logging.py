"""Log records as collectors read them: RFC 3339 UTC timestamps with
milliseconds, and under --log-json a traceback inside its one JSON record."""

from __future__ import annotations

import json
import logging

import pytest

from mo_operator.cli.errors import CliError, one_line_errors
from mo_operator.cli.logging_setup import JsonFormatter, TextFormatter, rfc3339


def _record(exc: bool = False) -> logging.LogRecord:
    exc_info = None
    if exc:
        try:
            raise ValueError("boom")
        except ValueError:
            import sys

            exc_info = sys.exc_info()
    record = logging.LogRecord("mo_operator.x", logging.ERROR, __file__, 1, "it %s", ("failed",), exc_info)
    record.created = 1_795_833_035.0456
    return record


def test_timestamps_are_rfc3339_utc_with_milliseconds() -> None:
    assert rfc3339(1_795_833_035.0456) == "2026-11-28T02:30:35.045Z"
    assert rfc3339(0.999) == "1970-01-01T00:00:00.999Z"
    assert (
        TextFormatter()
        .format(_record())
        .startswith("2026-11-28T02:30:35.045Z ERROR mo_operator.x: it failed")
    )


def test_a_traceback_stays_inside_its_json_record() -> None:
    line = JsonFormatter().format(_record(exc=True))
    assert "\n" not in line
    record = json.loads(line)
    assert record["ts"] == "2026-11-28T02:30:35.045Z" and record["msg"] == "it failed"
    assert "Traceback" in record["error"] and "ValueError: boom" in record["error"]


def test_a_command_ends_with_one_line_for_a_known_cause_and_a_logged_traceback_otherwise(
    caplog: pytest.LogCaptureFixture,
) -> None:
    @one_line_errors
    def refused() -> None:
        raise CliError("the reason, in one line")

    @one_line_errors
    def broken() -> None:
        raise RuntimeError("a bug")

    with pytest.raises(SystemExit) as ended:
        refused()
    assert ended.value.code == 1
    assert [(r.levelname, r.getMessage(), r.exc_info) for r in caplog.records] == [
        ("ERROR", "the reason, in one line", None)
    ]
    caplog.clear()
    with pytest.raises(SystemExit) as ended:
        broken()
    assert ended.value.code == 1
    [record] = caplog.records
    assert record.levelname == "CRITICAL" and "RuntimeError: a bug" in record.getMessage()
    assert record.exc_info is not None
