"""The operator benchmarks (``bench/operator_*.py``) at a tiny size, so they
cannot rot: each runs as a user would run it (its own process, its own
control plane), prints one JSON line per figure, and the figures hold
what they claim. The resync of converged clusters must write nothing.

They run on the embedded control plane whatever the session's (the variables
naming a real one are not passed on): what they prove, that each benchmark
runs and its figures add up, does not depend on the server, and each would
start a real control plane of its own.

The operator polls faster than its defaults here (``--poll-seconds 1
--busy-poll-seconds 0.2``) to keep the run short.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"
FAST = ("--poll-seconds", "1", "--busy-poll-seconds", "0.2")
REAL_CONTROL_PLANE = ("KUBEBUILDER_ASSETS", "MO_TEST_KUBECONFIG")


def run_bench(script: str, *args: str, timeout: float = 160) -> dict[str, dict[str, Any]]:
    """Run a benchmark; its figures by name (every JSON line must parse)."""
    proc = subprocess.run(
        [sys.executable, str(BENCH / script), *args],
        cwd=BENCH,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        env={k: v for k, v in os.environ.items() if k not in REAL_CONTROL_PLANE},
    )
    assert proc.returncode == 0, f"{script} failed:\n{proc.stderr[-4000:]}"
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    figures = [json.loads(line) for line in lines]
    assert figures, f"{script} printed no figure:\n{proc.stdout}"
    for f in figures:
        assert {"figure", "value", "unit"} <= set(f), f
        assert f["figure"] in proc.stdout.split("\n\n", 1)[1], "the table lacks a figure"
    return {f["figure"]: f for f in figures}


@pytest.mark.timeout(120)
def test_resync_of_ready_clusters_writes_nothing() -> None:
    figures = run_bench("operator_resync.py", "--clusters", "2", "--settle", "1", *FAST)
    resync = figures["resync_writes"]
    assert resync["keys_enqueued"] >= 2 * 5, resync  # each cluster and its four sets at least
    assert resync["reconciles"] >= resync["keys_enqueued"], resync
    assert resync["value"] == 0, f"a no-op resync wrote: {resync['writes']}"
    assert figures["resync_reconcile_throughput"]["value"] > 0


@pytest.mark.timeout(180)
def test_converge_ratio_compares_the_operator_with_a_plain_loop() -> None:
    figures = run_bench("operator_converge.py", "--clusters", "2", *FAST)
    ratio, base = figures["converge_ratio"], figures["baseline_seconds"]
    assert ratio["value"] == pytest.approx(ratio["converge_seconds"] / ratio["baseline_seconds"], rel=0.05)
    ideal = figures["converge_ideal_ratio"]
    assert ideal["value"] == pytest.approx(ideal["converge_seconds"] / ideal["ideal_seconds"], rel=0.05)
    assert ideal["ideal_seconds"] > base["value"] * 0.5, "the ideal waits for pods, the baseline does not"
    kinds = base["by_kind"]
    assert kinds["MatrixOneCluster"] == 2 and kinds["CNSet"] == 2 and kinds["Pod"] >= 2, kinds
    assert figures["operator_writes_per_object"]["value"] >= 1
    assert figures["cluster_status_writes_per_cluster"]["value"] >= 1, "at least the Ready one"
    events = figures["event_writes_per_cluster"]
    assert events["value"] >= 1 and "MatrixOneCluster AllSetsReady" in events["created_by_reason"], events
    assert figures["events_dropped"]["value"] == 0
    cpu, process = figures["operator_cpu_seconds_per_cluster"], figures["converge_seconds"]
    assert cpu["value"] == pytest.approx(cpu["operator_cpu_seconds"] / 2, abs=0.005), cpu
    assert 0 < cpu["operator_cpu_seconds"] < process["process_cpu_seconds"], "the operator's thread alone"


@pytest.mark.timeout(120)
def test_memory_per_cached_object() -> None:
    figures = run_bench("operator_memory.py", "--clusters", "3", "--per-namespace", "2")
    rss = figures["operator_rss"]
    assert rss["cached_objects"] == rss["objects_created"] == 3 * rss["objects_per_cluster"], rss
    assert rss["value"] > rss["rss_before_sync_mib"] > 0
    assert figures["bytes_per_cached_object_traced"]["value"] > 500


@pytest.mark.timeout(120)
def test_cold_start_to_first_reconcile() -> None:
    figures = run_bench("operator_cold_start.py", "--objects", "60", "--runs", "1")
    first = figures["cold_start_to_first_reconcile"]
    assert first["cached_objects"] == first["objects"] >= 60, first
    assert first["value"] >= figures["cold_start_imports"]["value"] > 0
    assert figures["cold_start_kit_import"]["value"] > 0  # timed apart, not in the figures above
    # each controller starts once its own caches synced: the first may reconcile before the last starts
    assert figures["cold_start_all_controllers_started"]["value"] >= figures["cold_start_imports"]["value"]
    assert len(first["first_controller"]) == 1


@pytest.mark.timeout(120)
def test_latency_of_a_spec_change_to_its_first_write() -> None:
    figures = run_bench("operator_latency.py", "--clusters", "2", "--changes", "4", "--settle", "1", *FAST)
    p50, p99 = figures["spec_change_to_first_write_p50"], figures["spec_change_to_first_write_p99"]
    assert p50["changes"] == 4
    assert 0 < p50["value"] <= p99["value"] <= p99["max"]
    assert p50["issued"] <= p50["value"]
    parts = figures["spec_change_breakdown"]
    assert 0 < parts["value"] <= 4
    assert (
        0 <= parts["queue_p50"] <= parts["queue_p99"] and 0 < parts["reconcile_p50"] <= parts["reconcile_p99"]
    )


@pytest.mark.timeout(120)
def test_timeline_puts_each_dependent_after_the_logset_discovery() -> None:
    figures = run_bench("operator_timeline.py", "--clusters", "1", *FAST)
    step = {name.removeprefix("step "): f["value"] for name, f in figures.items() if name.startswith("step ")}
    for kind in ("DNSet", "CNSet", "ProxySet"):
        assert step["LogSet_discovery_written"] <= step[f"{kind}_workload_applied"], kind
        assert step[f"{kind}_workload_applied"] < step[f"pod_{kind}_ready"], kind
    assert step["LogSet_workload_applied"] < step["pod_LogSet_ready"]
    assert all(t < step["cluster_ready_seen"] for name, t in step.items() if name.startswith("pod_"))
    assert 1.0 <= figures["floor_ratio"]["value"] <= 2.0
