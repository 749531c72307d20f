"""The chart's Grafana dashboard, PrometheusRule and PodMonitor (off by default):
every PromQL expression parses (promql-parser, Prometheus's grammar) and names
only series the operator registers, MatrixOne exports or Prometheus makes, and
every alert has a runbook_url into a section of docs/troubleshooting.md."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import helm_python as helm
import promql_parser
import pytest
import yaml

import mo_operator.cli.run  # noqa: F401  (registers every collector of the operator process)
from install_manifests import CHART_DIR, REPO
from mo_operator.kube.metrics.metrics import REGISTRY

TEMPLATES = CHART_DIR / "templates"
DASHBOARD = CHART_DIR / "files" / "dashboards" / "mo-operator.json"
TROUBLESHOOTING = REPO / "docs" / "troubleshooting.md"

MATRIXONE_SERIES = {
    "mo_txn_total",
    "mo_txn_commit_duration_seconds_bucket",
    "mo_proxy_connect_counter",
    "mo_proxy_connection_transfer_counter",
}
"""MatrixOne's own series the dashboard reads (matrixorigin/matrixone pkg/util/metric/v2:
txn.go, proxy.go; its counters carry no _total suffix)."""
PROMETHEUS_SERIES = {"up"}
"""Series Prometheus makes for every target."""
_SUFFIXES = {
    "counter": ("_total",),
    "histogram": ("_bucket", "_sum", "_count"),
    "summary": ("_sum", "_count", ""),
    "info": ("_info",),
}


def registered_series() -> set[str]:
    """Every series name the operator's registry can expose."""
    names: set[str] = set()
    for collector in list(REGISTRY._collector_to_names):
        families = collector.describe() if hasattr(collector, "describe") else collector.collect()
        for family in families:
            names.update(family.name + s for s in _SUFFIXES.get(family.type, ("",)))
    return names


KNOWN = registered_series() | MATRIXONE_SERIES | PROMETHEUS_SERIES


def series_in(expr: str) -> set[str]:
    """The metric names an expression selects (parsing it, which fails on bad PromQL)."""
    found: set[str] = set()

    def visit(node: Any) -> None:
        if isinstance(node, promql_parser.VectorSelector):
            name = node.name or next((m.value for m in node.matchers.matchers if m.name == "__name__"), None)
            assert name, f"a selector without a metric name in {expr!r}"
            found.add(name)

    promql_parser.walk(promql_parser.parse(expr), visit)
    return found


# ---------------------------------------------------------------- dashboard
@pytest.fixture(scope="module")
def dashboard() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(DASHBOARD.read_text())
    return loaded


def _panels(dashboard: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for panel in dashboard["panels"]:
        yield panel
        yield from panel.get("panels") or ()


def _grafana_to_promql(expr: str) -> str:
    """Grafana's variables and macros replaced by what Prometheus receives."""
    expr = expr.replace("$__rate_interval", "5m").replace("$__interval", "1m")
    return re.sub(r"\$\{?\w+\}?", "x", expr)


def test_the_dashboard_covers_the_operator_and_each_cluster(dashboard: dict[str, Any]) -> None:
    titles = {p["title"] for p in _panels(dashboard)}
    for wanted in (
        "Reconciles",
        "Reconcile errors",
        "Queue depth",
        "API latency p99",
        "Replicas leading",
        "MatrixOne RPC",
        "Sets ready",
        "Rollouts in progress",
        "Store states",
        "CN drains",
        "Backups",
    ):
        assert wanted in titles, sorted(titles)
    ids = [p["id"] for p in _panels(dashboard)]
    assert len(ids) == len(set(ids)), "panel ids are unique"
    variables = {v["name"] for v in dashboard["templating"]["list"]}
    assert {"datasource", "namespace", "cluster"} <= variables


def test_every_dashboard_query_parses_and_names_a_series_we_or_matrixone_export(
    dashboard: dict[str, Any],
) -> None:
    queries = [t["expr"] for p in _panels(dashboard) for t in p.get("targets") or ()]
    queries += [
        re.sub(r"^label_values\(([^,]+),.*\)$", r"\1", v["query"]["query"])
        for v in dashboard["templating"]["list"]
        if v["type"] == "query"
    ]
    assert len(queries) > 30
    unknown = {name: q for q in queries for name in series_in(_grafana_to_promql(q)) if name not in KNOWN}
    assert unknown == {}, f"queries name series nobody exports: {unknown}"


def test_the_dashboard_ships_in_a_configmap_for_grafanas_sidecar_off_by_default() -> None:
    values = yaml.safe_load((CHART_DIR / "values.yaml").read_text())
    assert values["grafana"]["dashboard"] == {
        "enabled": False,
        "label": "grafana_dashboard",
        "labelValue": "1",
        "namespace": "",
        "annotations": {},
    }
    template = (TEMPLATES / "grafana-dashboard.yaml").read_text()
    assert "{{- if .Values.grafana.dashboard.enabled }}" in template
    assert '.Files.Get "files/dashboards/mo-operator.json"' in template
    assert (
        "{{ .Values.grafana.dashboard.label }}: {{ .Values.grafana.dashboard.labelValue | quote }}"
        in template
    )
    assert values["podMonitor"]["enabled"] is False and values["prometheusRule"]["enabled"] is False


# ---------------------------------------------------------------- alerts
@pytest.fixture(scope="module")
def alerts() -> list[dict[str, Any]]:
    """The PrometheusRule as Helm renders it with the chart's defaults."""
    with helm.Chart.load(CHART_DIR) as chart:
        rendered = chart.render(
            {"prometheusRule": {"enabled": True}}, name="mo-operator", namespace="mo-system"
        )
    rule = yaml.safe_load(rendered["mo-operator/templates/prometheusrule.yaml"])
    assert rule["kind"] == "PrometheusRule"
    return [r for group in rule["spec"]["groups"] for r in group["rules"]]


def test_the_alerts_the_issue_asks_for_exist(alerts: list[dict[str, Any]]) -> None:
    assert {a["alert"] for a in alerts} == {
        "MatrixOneClusterNotReady",
        "MatrixOneRolloutHalted",
        "MatrixOneLogQuorumAtRisk",
        "MatrixOneBackupScheduleFailing",
        "MOOperatorDown",
        "MOOperatorNotLeading",
        "MOOperatorWebhookFailing",
    }


def test_every_alert_expression_parses_and_names_known_series(alerts: list[dict[str, Any]]) -> None:
    for alert in alerts:
        names = series_in(alert["expr"])
        assert names and names <= KNOWN, f"{alert['alert']}: {names - KNOWN}"
        assert alert["labels"]["severity"] in ("warning", "critical")
        assert alert["annotations"]["summary"] and alert["annotations"]["description"]


def _anchors(markdown: str) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation gone, spaces as dashes."""
    return {
        re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        for heading in re.findall(r"^#+ (.+)$", markdown, re.M)
    }


def test_every_alert_has_a_runbook_in_the_troubleshooting_guide(alerts: list[dict[str, Any]]) -> None:
    anchors = _anchors(TROUBLESHOOTING.read_text())
    for alert in alerts:
        url = alert["annotations"]["runbook_url"]
        page, _, anchor = url.partition("#")
        assert page.endswith("troubleshooting.md") and anchor in anchors, f"{alert['alert']}: {url}"


def test_the_podmonitor_scrapes_matrixone_pods_on_their_metrics_port() -> None:
    template = (TEMPLATES / "podmonitor.yaml").read_text()
    assert "{{- if .Values.podMonitor.enabled }}" in template
    assert "values: [LogSet, DNSet, CNSet, ProxySet]" in template
    assert "replacement: $1:7001" in template and "regex: main" in template
