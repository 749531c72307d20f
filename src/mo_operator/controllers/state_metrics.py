"""Gauges of what the operator records in status, for the dashboard and alerts
(docs/metrics.md), read from the operator's caches at scrape time as the
condition gauges are:

- ``mo_operator_set_replicas`` and ``mo_operator_set_ready_replicas`` per set;
- ``mo_operator_set_stores{state}``: a set's stores by state as recorded in its
  status (log and TN stores ``Up``/``Down`` from ``availableStores`` and
  ``failedStores``; CN stores ``Up``/``Draining``/``Unknown`` as HAKeeper sees
  them), so log quorum and CN drains can be watched;
- ``mo_operator_rollout_halted``: 1 while a set's or a cluster's roll is stopped
  on a pod that does not come up (``UpToDate`` reason ``RolloutStalled`` or
  ``RolloutHalted``);
- ``mo_operator_backup_jobs{phase}`` and
  ``mo_operator_backup_last_completion_timestamp_seconds`` per source cluster;
- ``mo_operator_backup_schedule_failing{reason}`` per BackupSchedule: 1 while its last
  run failed (``LastRunSucceeded`` False, reason ``BackupFailed``) or its retention
  cannot delete an expired backup (``RetentionApplied`` reason ``DeletionFailed``),
  each reason a series; and
  ``mo_operator_backup_schedule_last_success_timestamp_seconds``
  (``status.lastSuccessfulTime``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping
from typing import Any

from prometheus_client.core import GaugeMetricFamily

from mo_operator.kube.client.resource import Resource
from mo_operator.kube.meta.objects import mapping_at, view
from mo_operator.kube.meta.times import parse_time
from mo_operator.kube.metrics.metrics import REGISTRY

from .condition_metrics import CachedCollector
from .framework import resources as r

SETS: tuple[Resource, ...] = (r.LOGSETS, r.DNSETS, r.TNSETS, r.CNSETS, r.PROXYSETS)
SET_LABELS = ["namespace", "kind", "name"]
HALTED_REASONS = frozenset({"RolloutStalled", "RolloutHalted"})
PREFIX = "mo_operator"


def _families() -> dict[str, GaugeMetricFamily]:
    return {
        "replicas": GaugeMetricFamily(f"{PREFIX}_set_replicas", "Pods a set asks for.", labels=SET_LABELS),
        "ready": GaugeMetricFamily(
            f"{PREFIX}_set_ready_replicas",
            "Pods of a set that are ready (status.readiness).",
            labels=SET_LABELS,
        ),
        "stores": GaugeMetricFamily(
            f"{PREFIX}_set_stores",
            "A set's stores by state, as its status records them (Up, Down, Draining, Unknown).",
            labels=[*SET_LABELS, "state"],
        ),
        "halted": GaugeMetricFamily(
            f"{PREFIX}_rollout_halted",
            "1 while the object's roll is stopped on a pod that does not come up, else 0.",
            labels=SET_LABELS,
        ),
        "jobs": GaugeMetricFamily(
            f"{PREFIX}_backup_jobs", "BackupJobs by phase.", labels=["namespace", "phase"]
        ),
        "last": GaugeMetricFamily(
            f"{PREFIX}_backup_last_completion_timestamp_seconds",
            "When the newest Backup of a cluster completed (Unix time).",
            labels=["namespace", "name"],
        ),
        "schedule_failing": GaugeMetricFamily(
            f"{PREFIX}_backup_schedule_failing",
            "1 while a BackupSchedule's last run failed (reason BackupFailed) or its retention cannot "
            "delete an expired Backup (reason DeletionFailed), else 0.",
            labels=["namespace", "name", "reason"],
        ),
        "schedule_success": GaugeMetricFamily(
            f"{PREFIX}_backup_schedule_last_success_timestamp_seconds",
            "When the last BackupJob of a BackupSchedule completed (Unix time).",
            labels=["namespace", "name"],
        ),
    }


def _schedule_failing(obj: Any) -> dict[str, float]:
    body = view(obj)
    last_run = body.condition("LastRunSucceeded") or {}
    retention = body.condition("RetentionApplied") or {}
    return {
        "BackupFailed": 1.0 if last_run.get("status") == "False" else 0.0,
        "DeletionFailed": 1.0 if retention.get("reason") == "DeletionFailed" else 0.0,
    }


def _ready(status: Mapping[str, Any]) -> float | None:
    text = str(status.get("readiness") or "")
    ready, _, _ = text.partition("/")
    return float(ready) if ready.isdigit() else None


def _store_states(kind: str, status: Mapping[str, Any]) -> Counter[str]:
    if kind == "CNSet":
        return Counter(str(s.get("state") or "Unknown") for s in status.get("stores") or ())
    return Counter(
        {"Up": len(status.get("availableStores") or ()), "Down": len(status.get("failedStores") or ())}
    )


def _halted(obj: Any) -> float:
    current = view(obj).condition("UpToDate")
    return 1.0 if current is not None and current.get("reason") in HALTED_REASONS else 0.0


class StateCollector(CachedCollector):
    def describe(self) -> Iterator[GaugeMetricFamily]:
        yield from _families().values()

    def collect(self) -> Iterator[GaugeMetricFamily]:
        families = _families()
        for res in SETS:
            for obj in self.cached(res):
                body = view(obj)
                key = [body.meta.namespace, res.kind, body.meta.name]
                families["replicas"].add_metric(key, float(body.spec.get("replicas") or 0))
                ready = _ready(body.status)
                if ready is not None:
                    families["ready"].add_metric(key, ready)
                if res.kind != "ProxySet":
                    for state, count in sorted(_store_states(res.kind, body.status).items()):
                        families["stores"].add_metric([*key, state], float(count))
                families["halted"].add_metric(key, _halted(obj))
        for obj in self.cached(r.MATRIXONE_CLUSTERS):
            body = view(obj)
            families["halted"].add_metric(
                [body.meta.namespace, "MatrixOneCluster", body.meta.name], _halted(obj)
            )
        phases: Counter[tuple[str, str]] = Counter(
            (view(job).meta.namespace, str(view(job).status.get("phase") or "Pending"))
            for job in self.cached(r.BACKUPJOBS)
        )
        for (namespace, phase), count in sorted(phases.items()):
            families["jobs"].add_metric([namespace, phase], float(count))
        newest: dict[tuple[str, str], float] = {}
        for backup in self.cached(r.BACKUPS):
            meta = mapping_at(backup, "meta")
            kind, _, rest = str(meta.get("sourceRef") or "").partition("/")
            namespace, _, name = rest.partition("/")
            done = parse_time(meta.get("completeTime"))
            if kind == "matrixonecluster" and name and done is not None:
                newest[(namespace, name)] = max(done, newest.get((namespace, name), 0.0))
        for (namespace, name), done in sorted(newest.items()):
            families["last"].add_metric([namespace, name], done)
        for obj in self.cached(r.BACKUPSCHEDULES):
            body = view(obj)
            key = [body.meta.namespace, body.meta.name]
            for reason, failing in _schedule_failing(obj).items():
                families["schedule_failing"].add_metric([*key, reason], failing)
            succeeded = parse_time(body.status.get("lastSuccessfulTime"))
            if succeeded is not None:
                families["schedule_success"].add_metric(key, succeeded)
        yield from families.values()


STATE = StateCollector()
REGISTRY.register(STATE)
