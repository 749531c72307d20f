"""docs/crd-reference.md: every kind of the API, generated from the pydantic
models the CRDs are generated from (``mo_operator.api``), one section per
object type with each field's JSON name, type, whether it is required, and its
description (what ``kubectl explain`` shows).

    python tools/gen_crd_reference.py           # rewrite docs/crd-reference.md
    python tools/gen_crd_reference.py --check   # exit 1 when it is stale (a test does this)
"""

from __future__ import annotations

import argparse
import inspect
import sys
import types
import typing
from pathlib import Path
from typing import Any, get_args, get_origin

from pydantic import BaseModel

from mo_operator.api.kinds import GROUP, KINDS, VERSION
from mo_operator.api.schema import field_json_name

DOC = Path(__file__).resolve().parents[1] / "docs" / "crd-reference.md"
HEADER = f"""# API reference: `{GROUP}/{VERSION}`

Generated from the models in `src/mo_operator/api/` by `tools/gen_crd_reference.py`
(a test fails when this page is stale: run `python tools/gen_crd_reference.py`).
The CRDs in `deploy/crds/` come from the same models; `kubectl explain` shows the
same descriptions. Fields written for the Go operator keep their names and meaning.
"""


def _anchor(model: type[BaseModel]) -> str:
    return model.__name__.lower()


def _doc(model: type[BaseModel]) -> str:
    return " ".join(inspect.cleandoc(model.__doc__ or "").split())


def _type(annotation: Any, seen: list[type[BaseModel]]) -> str:
    """A field's type as a reader writes it, queuing the object types it names."""
    origin = get_origin(annotation)
    if origin is typing.Annotated:
        return _type(get_args(annotation)[0], seen)
    if origin in (typing.Union, types.UnionType):
        parts = [a for a in get_args(annotation) if a is not type(None)]
        return " or ".join(_type(a, seen) for a in parts)
    if origin is typing.Literal:
        return " \\| ".join(f"`{v}`" for v in get_args(annotation))
    if origin in (list, tuple):
        return f"[]{_type(get_args(annotation)[0], seen)}"
    if origin is dict:
        key, value = get_args(annotation)
        return f"map[{_type(key, seen)}]{_type(value, seen)}"
    if inspect.isclass(annotation) and issubclass(annotation, BaseModel):
        if annotation not in seen:
            seen.append(annotation)
        return f"[{annotation.__name__}](#{_anchor(annotation)})"
    names = {str: "string", int: "integer", bool: "boolean", float: "number"}
    if annotation in names:
        return names[annotation]
    name = getattr(annotation, "__name__", None) or str(annotation)
    return {"Any": "object"}.get(name, name)


def _section(model: type[BaseModel], seen: list[type[BaseModel]], title: str | None = None) -> list[str]:
    lines = [f"### {title or model.__name__}", "", _doc(model), ""]
    if not model.model_fields:
        return [*lines, "No fields.", ""]
    lines += ["| field | type | required | description |", "| --- | --- | --- | --- |"]
    for name, field in model.model_fields.items():
        required = "yes" if field.is_required() else ""
        description = " ".join((field.description or "").split()).replace("|", "\\|")
        lines.append(
            f"| `{field_json_name(name, field)}` | {_type(field.annotation, seen)} | {required} | {description} |"
        )
    return [*lines, ""]


def reference() -> str:
    lines = [HEADER, "## Kinds", ""]
    for info in KINDS.values():
        scope = "namespaced" if info.namespaced else "cluster-scoped"
        short = f", short names {', '.join(f'`{s}`' for s in info.short_names)}" if info.short_names else ""
        lines.append(f"- [{info.kind}](#{info.kind.lower()}) (`{info.plural}`, {scope}{short})")
    lines.append("")
    seen: list[type[BaseModel]] = []
    for info in KINDS.values():
        lines += _section(info.model, seen, info.kind)
        columns = ", ".join(
            f"`{c.name.upper()}`" + (" (-o wide)" if c.priority else "") for c in info.printer_columns
        )
        lines += [f"`kubectl get` columns: {columns}.", ""]
    lines += ["## Object types", ""]
    done: set[type[BaseModel]] = {info.model for info in KINDS.values()}
    while any(m not in done for m in seen):
        model = next(m for m in seen if m not in done)
        done.add(model)
        lines += _section(model, seen)
    return "\n".join(lines).rstrip() + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when docs/crd-reference.md is stale")
    args = parser.parse_args()
    fresh = reference()
    if args.check:
        if not DOC.exists() or DOC.read_text() != fresh:
            print("docs/crd-reference.md is stale; run python tools/gen_crd_reference.py", file=sys.stderr)
            return 1
        return 0
    DOC.write_text(fresh)
    return 0


if __name__ == "__main__":
    sys.exit(main())
