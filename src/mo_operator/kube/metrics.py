"""Prometheus metrics of the runtime, with controller-runtime's names so that
existing dashboards and alerts work unchanged.

One registry per process (``REGISTRY``); tests read values from it.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

REGISTRY = CollectorRegistry(auto_describe=True)

_LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)

# Work queue (client-go names, label "name" is the queue/controller name).
WORKQUEUE_DEPTH = Gauge("workqueue_depth", "Current depth of the work queue.", ["name"], registry=REGISTRY)
WORKQUEUE_ADDS = Counter(
    "workqueue_adds", "Total adds handled by the work queue.", ["name"], registry=REGISTRY
)
WORKQUEUE_QUEUE_DURATION = Histogram(
    "workqueue_queue_duration_seconds",
    "How long an item stays in the work queue before being processed.",
    ["name"],
    buckets=_LATENCY_BUCKETS,
    registry=REGISTRY,
)
WORKQUEUE_WORK_DURATION = Histogram(
    "workqueue_work_duration_seconds",
    "How long processing an item from the work queue takes.",
    ["name"],
    buckets=_LATENCY_BUCKETS,
    registry=REGISTRY,
)
WORKQUEUE_RETRIES = Counter(
    "workqueue_retries", "Total retries handled by the work queue.", ["name"], registry=REGISTRY
)
WORKQUEUE_UNFINISHED_WORK = Gauge(
    "workqueue_unfinished_work_seconds",
    "Seconds of work in progress not yet observed by work_duration.",
    ["name"],
    registry=REGISTRY,
)

# Reconciles (controller-runtime names).
RECONCILE_TOTAL = Counter(
    "controller_runtime_reconcile",
    "Total reconciles per controller and result.",
    ["controller", "result"],
    registry=REGISTRY,
)
RECONCILE_ERRORS = Counter(
    "controller_runtime_reconcile_errors",
    "Total reconcile errors per controller.",
    ["controller"],
    registry=REGISTRY,
)
RECONCILE_TIME = Histogram(
    "controller_runtime_reconcile_time_seconds",
    "Length of time per reconcile per controller.",
    ["controller"],
    buckets=_LATENCY_BUCKETS,
    registry=REGISTRY,
)
ACTIVE_WORKERS = Gauge(
    "controller_runtime_active_workers", "Workers currently reconciling.", ["controller"], registry=REGISTRY
)
MAX_CONCURRENT_RECONCILES = Gauge(
    "controller_runtime_max_concurrent_reconciles",
    "Configured workers per controller.",
    ["controller"],
    registry=REGISTRY,
)

# API client (client-go's rest_client names).
REST_CLIENT_REQUESTS = Counter(
    "rest_client_requests",
    "API requests by verb, resource and HTTP code.",
    ["verb", "resource", "code"],
    registry=REGISTRY,
)
REST_CLIENT_LATENCY = Histogram(
    "rest_client_request_duration_seconds",
    "API request latency by verb and resource.",
    ["verb", "resource"],
    buckets=_LATENCY_BUCKETS,
    registry=REGISTRY,
)
REST_CLIENT_RATE_LIMITER_DURATION = Histogram(
    "rest_client_rate_limiter_duration_seconds",
    "Time requests waited in the client-side rate limiter.",
    ["verb"],
    buckets=_LATENCY_BUCKETS,
    registry=REGISTRY,
)

# Informers.
INFORMER_OBJECTS = Gauge(
    "informer_cached_objects", "Objects held in an informer's cache.", ["resource"], registry=REGISTRY
)
INFORMER_RELISTS = Counter(
    "informer_relists", "Full relists per informer (410 Gone, stalls).", ["resource"], registry=REGISTRY
)
INFORMER_WATCH_RESTARTS = Counter(
    "informer_watch_restarts",
    "Watch restarts per informer and reason.",
    ["resource", "reason"],
    registry=REGISTRY,
)

# Leader election (controller-runtime's name).
LEADER_ELECTION_MASTER_STATUS = Gauge(
    "leader_election_master_status", "1 while this replica leads, else 0.", ["name"], registry=REGISTRY
)

# Events (the recorder's; client-go counts none, so the name is ours).
EVENTS_DROPPED = Counter(
    "events_dropped",
    "Events not written, by reason: backlog_full, retries_exhausted, shutdown (lost to load or an"
    " unreachable server), rejected (refused for good by the server or the write fence),"
    " spam_filter (over an object's rate limit, as client-go's recorder).",
    ["reason"],
    registry=REGISTRY,
)
