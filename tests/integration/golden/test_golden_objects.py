"""Golden files: operator upgrades roll nothing.

A new operator release that renders a pod template, a Service or a TOML differently
rolls every MatrixOne pod of that shape in every cluster it manages, on its first
reconcile. The files in ``tests/golden/`` hold what the operator renders for the
representative clusters of ``cases.py``, captured from the real operator on the
embedded control plane (not from its builders, so a rewrite of the builders is
held to the same output); this test fails on any difference and prints it.

Approving a change: regenerate the files with

    MO_UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/integration/golden

commit them with the change, and add a line to CHANGELOG.md saying which pods users
will see rolled on upgrade and why (a reviewer refuses a golden change without one).
"""

from __future__ import annotations

import difflib
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from mo_devkit.testing.runner import OperatorRunner
from mo_devkit.testing.world import World, open_world

from .cases import CASES, GOLDEN_DIR, UPDATE, capture, create_cases, golden_path, render, wait_settled


@pytest.fixture
async def world(tmp_path: Path) -> AsyncIterator[World]:
    async with open_world(tmp_path, None) as w:
        yield w


@pytest.mark.timeout(240)
async def test_the_operator_renders_exactly_the_golden_objects(world: World) -> None:
    runner = OperatorRunner(world)
    await runner.start()
    try:
        await create_cases(world.client)
        await wait_settled(world.client)
        await runner.quiet()  # settled for a user; done writing for the operator too
        rendered = {case: render(case, await capture(world.client, case)) for case in CASES}
    finally:
        await runner.stop()

    if UPDATE:
        GOLDEN_DIR.mkdir(exist_ok=True)
        for stale in set(GOLDEN_DIR.glob("*.yaml")) - {golden_path(case) for case in CASES}:
            stale.unlink()
        for case, text in rendered.items():
            golden_path(case).write_text(text)
    committed = {p.stem for p in GOLDEN_DIR.glob("*.yaml")}
    assert committed == set(CASES), (
        f"golden files without a case, or cases without one: {committed ^ set(CASES)}"
    )
    diffs = []
    for case, text in rendered.items():
        path = golden_path(case)
        want = path.read_text()
        if want != text:
            lines = difflib.unified_diff(
                want.splitlines(),
                text.splitlines(),
                f"{path.name} (golden)",
                f"{path.name} (rendered)",
                lineterm="",
            )
            diffs.append("\n".join(list(lines)[:200]))
    assert not diffs, (
        "the operator renders other objects than the golden files hold: every cluster it manages would see"
        " these pods rolled on upgrade. If intended, regenerate with MO_UPDATE_GOLDEN=1 and add a CHANGELOG.md"
        " line saying which pods roll and why.\n" + "\n".join(diffs)
    )
