"""How a kind is printed as table rows: the column definitions and, per
object, the cells kube-apiserver's printers compute
(``pkg/printers/internalversion/printers.go``), plus the time formatting they
share (``k8s.io/apimachinery/pkg/util/duration.HumanDuration``).

The server prints in wide form, every column of every priority; kubectl hides
the columns of priority above 0 unless asked for ``-o wide``.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from lightkube.models import meta_v1

from mo_operator.kube.meta.times import format_time

from ..openapi.models import parse_docstring
from ..selectors import label_selector_string

Obj = dict[str, Any]
Cells = Callable[[Obj, datetime.datetime], list[Any]]


@dataclass(frozen=True)
class Printer:
    columns: tuple[Obj, ...]
    cells: Cells
    conditions: Callable[[Obj], list[Obj]] | None = field(default=None)


def column(name: str, type_: str, description: str, *, priority: int = 0, format_: str = "") -> Obj:
    return {"name": name, "type": type_, "format": format_, "description": description, "priority": priority}


def doc(model: type, field_name: str) -> str:
    """A field's description, as Go's ``SwaggerDoc()[field]`` gives it."""
    return parse_docstring(model.__doc__ or "")[1].get(field_name, "")


NAME = column("Name", "string", doc(meta_v1.ObjectMeta, "name"), format_="name")
AGE = column("Age", "string", doc(meta_v1.ObjectMeta, "creationTimestamp"))
CREATED_AT = column("Created At", "date", doc(meta_v1.ObjectMeta, "creationTimestamp"))


# ---------------------------------------------------------------- time
def parse_time(value: Any) -> datetime.datetime | None:
    """An RFC 3339 timestamp (Time or MicroTime) as an aware datetime."""
    if not isinstance(value, str) or not value:
        return None
    try:
        parsed = datetime.datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=datetime.UTC)


def human_duration(d: datetime.timedelta) -> str:
    """kubectl's approximate age: ``5s``, ``3m20s``, ``7h``, ``2d5h``, ``3y``."""
    seconds = int(d.total_seconds())  # truncates toward zero, as Go's int()
    if seconds < -1:
        return "<invalid>"
    if seconds < 0:
        return "0s"
    if seconds < 120:
        return f"{seconds}s"
    minutes = seconds // 60
    if minutes < 10:
        s = seconds % 60
        return f"{minutes}m" if s == 0 else f"{minutes}m{s}s"
    if minutes < 180:
        return f"{minutes}m"
    hours = seconds // 3600
    if hours < 8:
        m = minutes % 60
        return f"{hours}h" if m == 0 else f"{hours}h{m}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        h = hours % 24
        return f"{hours // 24}d" if h == 0 else f"{hours // 24}d{h}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        dy = (hours // 24) % 365
        return f"{hours // 24 // 365}y" if dy == 0 else f"{hours // 24 // 365}y{dy}d"
    return f"{hours // 24 // 365}y"


def since(value: Any, now: datetime.datetime) -> str:
    """The age of a timestamp, ``<unknown>`` when there is none."""
    t = parse_time(value)
    return "<unknown>" if t is None else human_duration(now - t)


def age(obj: Obj, now: datetime.datetime) -> str:
    return since(meta(obj).get("creationTimestamp"), now)


def created_at(obj: Obj) -> str:
    t = parse_time(meta(obj).get("creationTimestamp"))
    return "" if t is None else format_time(t)


# ---------------------------------------------------------------- object access
def meta(obj: Obj) -> Obj:
    return obj.get("metadata") or {}


def name(obj: Obj) -> str:
    return str(meta(obj).get("name", ""))


def spec(obj: Obj) -> Obj:
    return obj.get("spec") or {}


def status(obj: Obj) -> Obj:
    return obj.get("status") or {}


def dig(obj: Any, *path: str, default: Any = None) -> Any:
    for key in path:
        if not isinstance(obj, dict):
            return default
        obj = obj.get(key)
    return default if obj is None else obj


# ---------------------------------------------------------------- formatting
def format_labels(labels: Any) -> str:
    """``labels.FormatLabels``: ``k=v,k2=v2`` sorted by key, ``<none>`` when empty."""
    if not isinstance(labels, dict) or not labels:
        return "<none>"
    return ",".join(f"{k}={labels[k]}" for k in sorted(labels))


def format_label_selector(selector: Any) -> str:
    """``metav1.FormatLabelSelector``: as ``label_selector_string``, ``<none>`` when empty."""
    return label_selector_string(selector) or "<none>"


def container_cells(pod_spec: Any) -> tuple[str, str]:
    """The Containers and Images cells: names and images joined by commas."""
    containers = dig(pod_spec, "containers", default=[])
    return (
        ",".join(str(c.get("name", "")) for c in containers),
        ",".join(str(c.get("image", "")) for c in containers),
    )


def simple(columns: list[Obj], cells: Callable[[Obj], list[Any]]) -> Printer:
    """A printer whose cells are Name, the given cells, then Age."""

    def row(obj: Obj, now: datetime.datetime) -> list[Any]:
        return [name(obj), *cells(obj), age(obj, now)]

    return Printer((NAME, *columns, AGE), row)
