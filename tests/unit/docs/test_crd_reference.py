"""docs/crd-reference.md is what tools/gen_crd_reference.py generates from the
models today, and it documents every kind and every field of their specs."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from mo_operator.api.kinds import KINDS

TOOL = Path(__file__).parents[3] / "tools" / "gen_crd_reference.py"


def _tool() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_crd_reference", TOOL)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["gen_crd_reference"] = module
    spec.loader.exec_module(module)
    return module


def test_the_crd_reference_is_current() -> None:
    tool = _tool()
    assert tool.DOC.read_text() == tool.reference(), "stale: run python tools/gen_crd_reference.py"


def test_every_kind_and_spec_field_has_a_line() -> None:
    text = _tool().reference()
    for info in KINDS.values():
        assert f"### {info.kind}\n" in text
        spec = info.model.model_fields.get("spec")
        if spec is None or spec.annotation is None:
            continue
        spec_model = next(
            a for a in getattr(spec.annotation, "__args__", (spec.annotation,)) if a is not type(None)
        )
        assert f"### {spec_model.__name__}\n" in text
        for name, field in spec_model.model_fields.items():
            assert f"| `{field.alias or name}` |" in text, f"{info.kind}: {name}"
