"""``kubectl mo status`` as a person reads it: coloured tables on a terminal, the
same text without colour when piped (rich leaves styles out when its output is
not a terminal)."""

from __future__ import annotations

import datetime

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from mo_operator.kube.meta.times import parse_time

from .view import ClusterView

PHASE_STYLE = {"Ready": "green", "Upgrading": "yellow", "NotReady": "red"}


def _age(stamp: str, now: float) -> str:
    moment = parse_time(stamp)
    if moment is None:
        return stamp or "-"
    seconds = max(0, int(now - moment))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit} ago"
    return f"{seconds}s ago"


def _table(*columns: str) -> Table:
    table = Table(box=None, pad_edge=False, show_edge=False, header_style="bold")
    for column in columns:
        table.add_column(column, overflow="fold")
    return table


def _version(desired: str, running: str) -> Text:
    if not running:
        return Text(f"{desired} (no pod runs yet)", style="yellow")
    if running == desired:
        return Text(running, style="green")
    return Text(f"{running} → {desired}", style="yellow")


def render(cluster: ClusterView, now: float | None = None) -> RenderableType:
    now = datetime.datetime.now(datetime.UTC).timestamp() if now is None else now
    title = Text.assemble(
        ("MatrixOneCluster ", "bold"),
        (f"{cluster.namespace}/{cluster.name}", "bold cyan"),
        "  phase ",
        (cluster.phase, PHASE_STYLE.get(cluster.phase, "red")),
        "  version ",
        _version(cluster.desired_version, cluster.running_version),
        f"  sets ready {cluster.ready or '?'}",
    )
    parts: list[RenderableType] = [title]
    if cluster.paused:
        parts.append(
            Text("PAUSED: the operator does not reconcile this cluster (kubectl mo resume)", "bold red")
        )
    if cluster.message:
        parts.append(Text(cluster.message, style="yellow"))

    sets = _table("SET", "KIND", "READY", "DESIRED", "RUNNING", "ROLLOUT")
    for s in cluster.sets:
        ready_style = "green" if s.ready == f"{s.replicas}/{s.replicas}" else "yellow"
        sets.add_row(
            s.name + (" (paused)" if s.paused else ""),
            s.kind,
            Text(s.ready, style=ready_style),
            s.desired_version,
            Text(
                s.running_version or "-",
                style="green" if s.running_version == s.desired_version else "yellow",
            ),
            Text(s.progress, style="green" if s.updated == s.replicas else "yellow"),
        )
    parts += [Text(""), sets]

    if cluster.stores:
        stores = _table("STORE (HAKeeper, as the operator records it)", "SET", "STATE", "SINCE", "UUID")
        for st in cluster.stores:
            stores.add_row(
                st.pod,
                st.set,
                Text(st.state, style="green" if st.state == "Up" else "yellow"),
                _age(st.since, now) if st.since else "",
                st.uuid,
            )
        parts += [Text(""), stores]

    parts.append(Text(""))
    if cluster.conditions:
        conditions = _table("CONDITION NOT FINE", "OBJECT", "REASON", "MESSAGE")
        for c in cluster.conditions:
            conditions.add_row(Text(f"{c.type}={c.status}", style="red"), c.object, c.reason, c.message)
        parts.append(conditions)
    else:
        parts.append(Text("Every condition is fine.", style="green"))

    parts.append(Text(""))
    if cluster.warnings:
        warnings = _table("LAST WARNING", "OBJECT", "REASON", "MESSAGE")
        for e in cluster.warnings:
            count = f" (x{e.count})" if e.count > 1 else ""
            warnings.add_row(Text(_age(e.time, now) + count, style="red"), e.object, e.reason, e.message)
        parts.append(warnings)
    else:
        parts.append(Text("No Warning Events.", style="green"))
    return Group(*parts)
