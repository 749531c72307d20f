"""What a command says when it cannot go on: one line through the logger (so
``--log-json`` keeps it one JSON record) and a non-zero exit, instead of a
traceback. A traceback is kept for what nobody foresaw, inside the record."""

from __future__ import annotations

import errno
import functools
import logging
import sys
from collections.abc import Callable
from typing import Any, TypeVar

log = logging.getLogger("mo_operator.cli")
F = TypeVar("F", bound=Callable[..., Any])


class CliError(Exception):
    """A reason to stop that the person running the command can act on; its
    message is the whole story, in one line."""


def address_in_use(error: OSError, flags: dict[int, str]) -> CliError | None:
    """``error`` as a CliError naming the flag whose port is taken (``flags`` maps
    ports to flag names), or None when it is not a port already in use."""
    if error.errno != errno.EADDRINUSE:
        return None
    text = str(error)
    named = [flag for port, flag in flags.items() if port and str(port) in text]
    which = f" ({', '.join(named)})" if named else ""
    return CliError(f"cannot listen: the port is already in use{which}: {text}")


def one_line_errors(command: F) -> F:
    """Run ``command``; a ``CliError`` ends it with its message and exit code 1,
    anything unforeseen with the traceback logged as one record and exit code 1."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except CliError as e:
            log.error("%s", e)
            sys.exit(1)
        except (SystemExit, KeyboardInterrupt):
            raise
        except Exception as e:
            log.critical("unexpected error: %s: %s", type(e).__name__, e, exc_info=True)
            sys.exit(1)

    return wrapper  # type: ignore[return-value]
