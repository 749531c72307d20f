"""The base of every model: JSON field names as aliases, strict types, closed schemas.

Objects arrive as JSON decoded by the API server, so validation is strict (``"3"`` is
not an integer, ``true`` is not a number) and reads only the JSON names
(:func:`parse`); Python code may build models with the snake_case names. Dumping
with :func:`dump` gives back exactly the fields that were written, under their
JSON names, so a parsed object re-serialises to what it was.
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

__all__ = ["APIModel", "OpenModel", "dump", "opt", "parse", "req"]

M = TypeVar("M", bound=BaseModel)


class APIModel(BaseModel):
    """A closed object: unknown fields are errors, as in upstream's typed schema.

    Validators are built on a model's first use, not at import: the operator
    validates only the kinds it meets, and starts without building the others."""

    model_config = ConfigDict(
        extra="forbid",
        strict=True,
        alias_generator=to_camel,
        validate_by_alias=True,
        validate_by_name=True,
        defer_build=True,
        frozen=True,
    )


class OpenModel(APIModel):
    """An object whose unknown fields are kept (``x-kubernetes-preserve-unknown-fields``)."""

    model_config = ConfigDict(extra="allow")


def req(description: str, **kwargs: Any) -> Any:
    """A required field with its ``kubectl explain`` text."""
    return Field(description=description, **kwargs)


def opt(description: str, **kwargs: Any) -> Any:
    """An optional field (absent means ``None``) with its ``kubectl explain`` text."""
    return Field(None, description=description, **kwargs)


def parse(model: type[M], obj: Any) -> M:
    """Validate JSON-shaped data by its JSON field names only; raises ValidationError."""
    return model.model_validate(obj, by_alias=True, by_name=False)


def dump(model: BaseModel) -> dict[str, Any]:
    """The JSON object of a model: JSON names, only the fields that were set."""
    return model.model_dump(by_alias=True, exclude_unset=True, mode="python")
