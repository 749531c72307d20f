"""docs/troubleshooting.md's catalogue of condition and Event reasons is what
tools/gen_reasons.py harvests from the code today."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

TOOL = Path(__file__).parents[3] / "tools" / "gen_reasons.py"


def _tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_reasons", TOOL)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["gen_reasons"] = module
    spec.loader.exec_module(module)
    return module


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
