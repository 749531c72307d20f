"""Field errors: what is wrong, and where, as ``kubectl`` shows it.

Paths are written the way Kubernetes' ``field.Path`` prints them: fields joined by
dots, list indices and map keys in brackets (``spec.cnGroups[1].name``,
``spec.nodeSelector[zone]``).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ROOT", "FieldError", "child", "index", "key"]

ROOT = "<root>"
"""The path of an error about the object as a whole (e.g. it is not a JSON object)."""


@dataclass(frozen=True)
class FieldError:
    """One problem with one field of an object."""

    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


def child(path: str, name: str) -> str:
    """The path of a field of the object at ``path``."""
    return f"{path}.{name}" if path else name


def index(path: str, i: int) -> str:
    """The path of item ``i`` of the list at ``path``."""
    return f"{path}[{i}]"


def key(path: str, k: str) -> str:
    """The path of the value under key ``k`` of the map at ``path``."""
    return f"{path}[{k}]"
