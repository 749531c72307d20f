"""docs/troubleshooting.md's catalogue of condition and Event reasons is what
tools/gen_reasons.py harvests from the code today."""

from __future__ import annotations

from types import ModuleType

from .tools import load_tool


def _tool() -> ModuleType:
    return load_tool("gen_reasons")


def test_the_catalogue_in_the_troubleshooting_guide_is_current() -> None:
    tool = _tool()
    text = tool.DOC.read_text()
    assert tool.updated(text) == text, "the reason catalogue is stale: run python tools/gen_reasons.py"


def test_the_harvest_finds_reasons_of_every_kind_of_site() -> None:
    reasons = _tool().Harvest().run()
    assert reasons["RolloutStalled"].conditions >= {"Ready", "UpToDate"}  # set_condition
    assert reasons["NotStarted"].conditions == {"UpToDate"}  # a (reason, message) pair spread
    assert "Warning" in reasons["DrainTimeout"].events  # ctx.event
    assert reasons["LogServiceNotReady"].conditions == {"Ready"}  # a *_REASONS table
    assert reasons["InvalidSpec"].conditions == {"Synced"}  # TerminalError
    assert reasons["AllStoresReady"].conditions == {"Ready"}  # Readiness(all_ready=...)
