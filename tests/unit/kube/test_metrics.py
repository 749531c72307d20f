"""The operator's /metrics are what Prometheus users of Go operators expect:
process collectors, client-go's and controller-runtime's names and labels, no
``_created`` series, and the operator's build."""

from __future__ import annotations

from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

import mo_operator.controllers.operator  # noqa: F401  (registers the operator's collectors)
from mo_operator import __version__
from mo_operator.kube.metrics.metrics import REGISTRY, REST_CLIENT_REQUESTS


def _families() -> dict[str, object]:
    text = generate_latest(REGISTRY).decode()
    return {f.name: f for f in text_string_to_metric_families(text)}


def test_the_registry_carries_process_and_platform_collectors() -> None:
    families = _families()
    for name in ("process_cpu_seconds", "process_resident_memory_bytes", "process_start_time_seconds"):
        assert name in families, sorted(families)
    assert "python_info" in families


def test_no_series_is_a_created_timestamp() -> None:
    REST_CLIENT_REQUESTS.labels("200", "GET", "k8s.test").inc()
    text = generate_latest(REGISTRY).decode()
    assert "rest_client_requests_total{" in text
    assert [line for line in text.splitlines() if "_created" in line] == []


def test_rest_client_series_carry_client_gos_label_names() -> None:
    REST_CLIENT_REQUESTS.labels("200", "GET", "k8s.test").inc()
    samples = [
        s
        for s in _families()["rest_client_requests"].samples  # type: ignore[attr-defined]
        if s.name == "rest_client_requests_total"
    ]
    assert samples and {tuple(sorted(s.labels)) for s in samples} == {("code", "host", "method")}


def test_build_info_names_the_installed_version() -> None:
    assert __version__ not in ("", "unknown")
    value = REGISTRY.get_sample_value("mo_operator_build_info", {"version": __version__})
    assert value == 1.0
