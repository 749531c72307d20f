"""Example objects of every kind, written from upstream's examples (see the comment
at the top of each file under ``manifests/``)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

MANIFESTS = Path(__file__).parent / "manifests"


def load_manifests() -> dict[str, dict[str, Any]]:
    """Every example, by file stem."""
    return {p.stem: yaml.safe_load(p.read_text()) for p in sorted(MANIFESTS.glob("*.yaml"))}


EXAMPLES = load_manifests()


def example(name: str) -> dict[str, Any]:
    """A fresh copy of one example, by file stem."""
    return copy.deepcopy(EXAMPLES[name])


@pytest.fixture(params=sorted(EXAMPLES), ids=sorted(EXAMPLES))
def manifest(request: pytest.FixtureRequest) -> dict[str, Any]:
    return example(request.param)
