"""docs/crd-reference.md is what tools/gen_crd_reference.py generates from the
models today, and it documents every kind and every field of their specs."""

from __future__ import annotations

from types import ModuleType

from mo_operator.api.kinds import KINDS

from .tools import load_tool


def _tool() -> ModuleType:
    return load_tool("gen_crd_reference")


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
