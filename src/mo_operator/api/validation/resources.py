"""Quantities and compute resources: sizes that must be positive, requests within
limits, resource names Kubernetes accepts for containers
(``ValidateResourceRequirements`` in ``pkg/apis/core/validation``)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from mo_operator.kube.meta.quantity import Quantity, parse_quantity

from ..limits import MAX_VOLUME_SIZE
from .errors import FieldError, child, key
from .names import dns1123_subdomain, qualified_name

__all__ = ["amount", "non_negative", "resources_errors", "size_errors", "volume_errors"]

_MAX_SIZE = parse_quantity(MAX_VOLUME_SIZE)

_STANDARD_CONTAINER_RESOURCES = frozenset({"cpu", "memory", "ephemeral-storage"})


def amount(q: int | str) -> Decimal:
    """The value of a schema-valid quantity (an int or a quantity string)."""
    return Decimal(q) if isinstance(q, int) else parse_quantity(q)


def non_negative(q: int | str | None, path: str) -> list[FieldError]:
    if q is not None and amount(q) < 0:
        return [FieldError(path, "must be greater than or equal to 0")]
    return []


def size_errors(q: int | str | None, path: str) -> list[FieldError]:
    """A size of storage or memory: not negative, at most :data:`~..limits.MAX_VOLUME_SIZE`."""
    if q is not None and amount(q) > _MAX_SIZE:
        return [FieldError(path, f"must be less than or equal to {MAX_VOLUME_SIZE}")]
    return non_negative(q, path)


def _resource_name(name: str, path: str) -> list[FieldError]:
    errs = [FieldError(path, f'Invalid value: "{name}": {m}') for m in qualified_name(name)]
    if (
        not errs
        and "/" not in name
        and name not in _STANDARD_CONTAINER_RESOURCES
        and not name.startswith("hugepages-")
    ):
        errs.append(FieldError(path, f'Invalid value: "{name}": must be a standard resource for containers'))
    return errs


def resources_errors(resources: dict[str, Any] | None, path: str) -> list[FieldError]:
    """Names valid, amounts not negative, every request at most its limit."""
    if not resources:
        return []
    errs: list[FieldError] = []
    limits: dict[str, Any] = resources.get("limits") or {}
    requests: dict[str, Any] = resources.get("requests") or {}
    for part, values in (("limits", limits), ("requests", requests)):
        for name, q in values.items():
            at = key(child(path, part), name)
            errs += _resource_name(name, at)
            errs += non_negative(q, at)
    for name, q in requests.items():
        if name in limits and amount(q) > amount(limits[name]):
            limit = Quantity.parse(str(limits[name]))  # printed in the limit's own format, as Go does
            errs.append(
                FieldError(
                    key(child(path, "requests"), name),
                    f"must be less than or equal to {name} limit of {limit}",
                )
            )
    return errs


def volume_errors(volume: dict[str, Any] | None, path: str) -> list[FieldError]:
    """A volume needs a positive size (upstream: "size must not be zero")."""
    if volume is None:
        return []
    size = amount(volume["size"])
    errs = size_errors(volume.get("memoryCacheSize"), child(path, "memoryCacheSize"))
    storage_class = volume.get("storageClassName")
    if storage_class:
        errs += [
            FieldError(child(path, "storageClassName"), f'Invalid value: "{storage_class}": {m}')
            for m in dns1123_subdomain(storage_class)
        ]
    if size == 0:
        return [FieldError(child(path, "size"), "size must not be zero"), *errs]
    if size < 0:
        return [FieldError(child(path, "size"), "size must not be negative"), *errs]
    return size_errors(volume["size"], child(path, "size")) + errs
