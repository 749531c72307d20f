"""Options several commands share, declared once."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

F = TypeVar("F", bound=Callable[..., Any])


def output_option(command: F) -> F:
    """``-o/--output``: text for people, json for programs."""
    return click.option(
        "-o",
        "--output",
        "output",
        type=click.Choice(["text", "json"]),
        default="text",
        show_default=True,
        help="text for people, json for programs.",
    )(command)
