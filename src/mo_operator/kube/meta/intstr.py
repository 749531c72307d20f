"""``intstr.IntOrString`` values that count pods: a count, or a percentage of a total
(apimachinery's ``GetScaledValueFromIntOrPercent``), which rolling updates and
disruption budgets both read."""

from __future__ import annotations

__all__ = ["scaled_value"]


def scaled_value(value: int | str, total: int, *, round_up: bool) -> int | None:
    """``value`` as a count: an int as it is, ``"N%"`` as N percent of ``total`` rounded
    up (as a surge or a budget's unavailable pods) or down; None for any other string,
    which apimachinery refuses."""
    if isinstance(value, int):
        return value
    if not (value.endswith("%") and value[:-1].isdigit()):
        return None
    scaled = int(value[:-1]) * total
    return -(-scaled // 100) if round_up else scaled // 100
