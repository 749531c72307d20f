"""Server-side printing: the ``meta.k8s.io/v1`` Table kubectl asks for with
``Accept: application/json;as=Table;v=v1;g=meta.k8s.io`` and prints as
``kubectl get`` output.

Built-in kinds use their kube-apiserver printers (``printers.builtin``); kinds
without one get kube-apiserver's default table (Name, Created At). Custom
resources are printed as the apiextensions-apiserver prints them
(``pkg/registry/customresource/tableconvertor``): Name, then the CRD's
``additionalPrinterColumns`` evaluated as JSONPath, or a single Age column
when the CRD declares none (``pkg/apiserver/helpers.go``).
"""

from __future__ import annotations

import datetime
from typing import Any

from .errors import bad_request
from .jsonpath import JSONPathError, compile_path, format_value
from .printers.base import (
    AGE,
    CREATED_AT,
    NAME,
    Obj,
    Printer,
    column,
    created_at,
    human_duration,
    meta,
    name,
    parse_time,
)
from .printers.builtin import BUILTIN_PRINTERS
from .resources import PrinterColumn, ResourceType

_INCLUDE = ("None", "Metadata", "Object")
_DEFAULT_PRINTER = Printer((NAME, CREATED_AT), lambda obj, now: [name(obj), created_at(obj)])
# What a CRD without printer columns shows (the Age column is of type date).
_DEFAULT_CUSTOM_COLUMNS = (
    PrinterColumn(
        name="Age", type="date", json_path=".metadata.creationTimestamp", description=AGE["description"]
    ),
)


def to_table(
    rt: ResourceType, objects: list[Obj], *, include_object: str = "Metadata", now: datetime.datetime
) -> dict[str, Any]:
    """The Table of ``objects`` of type ``rt``. Its ``metadata`` (the list's
    resourceVersion and continue token) is left empty for the caller to fill.

    ``include_object`` is the request's ``includeObject``: each row carries the
    object's metadata as a PartialObjectMetadata (the default), the whole
    object, or nothing."""
    include = include_object or "Metadata"
    if include not in _INCLUDE:
        raise bad_request(
            f'includeObject: Unsupported value: "{include}": supported values: "None", "Metadata", "Object"'
        )
    printer = printer_for(rt)
    rows = []
    for obj in objects:
        row: dict[str, Any] = {"cells": printer.cells(obj, now), "object": _row_object(obj, include)}
        if printer.conditions is not None and (conditions := printer.conditions(obj)):
            row["conditions"] = conditions
        rows.append(row)
    return {
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": {},
        "columnDefinitions": [dict(c) for c in printer.columns],
        "rows": rows,
    }


def printer_for(rt: ResourceType) -> Printer:
    if rt.is_custom:
        try:
            return custom_printer(rt.printer_columns or _DEFAULT_CUSTOM_COLUMNS)
        except JSONPathError:  # kube-apiserver falls back to its default table too
            return _DEFAULT_PRINTER
    return BUILTIN_PRINTERS.get((rt.group, rt.kind), _DEFAULT_PRINTER)


def custom_printer(columns: tuple[PrinterColumn, ...]) -> Printer:
    """Name, then one column per printer column of the CRD version."""
    definitions = [NAME]
    paths = []
    for c in columns:
        description = (
            c.description or f"Custom resource definition column (in JSONPath format): {c.json_path}"
        )
        definitions.append(column(c.name, c.type, description, priority=c.priority, format_=c.format))
        paths.append(compile_path(c.json_path))

    def cells(obj: Obj, now: datetime.datetime) -> list[Any]:
        out: list[Any] = [name(obj)]
        for c, path in zip(columns, paths, strict=True):
            results = path.find(obj)
            out.append(_cell(c.type, results[0], now) if results else None)
        return out

    return Printer(tuple(definitions), cells)


def _cell(type_: str, value: Any, now: datetime.datetime) -> Any:
    """A column's cell from the first value its path reached, typed as the
    column says; None when the value does not fit the type."""
    if value is None:
        return None
    if type_ == "string":
        return format_value(value)
    if type_ == "integer":
        return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
    if type_ == "number":
        return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
    if type_ == "boolean":
        return value if isinstance(value, bool) else None
    if type_ == "date":
        if not isinstance(value, str):
            return None
        if value in ("", "null"):  # the zero time
            return "<unknown>"
        t = parse_time(value)
        return "<invalid>" if t is None else human_duration(now - t)
    return None


def _row_object(obj: Obj, include: str) -> Obj | None:
    if include == "Object":
        return obj
    if include == "None":
        return None
    return {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": meta(obj)}
