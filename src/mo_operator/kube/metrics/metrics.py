"""Prometheus metrics of the runtime, with client-go's and controller-runtime's
names and label names, so that existing dashboards and alerts work unchanged.

One registry per process (``REGISTRY``); tests read values from it. It carries
the process and platform collectors a Go operator's ``process_*`` series
correspond to, and no ``*_created`` series: Go's client writes none, and they
would double the lines of every counter and histogram for nothing a query uses.
"""

from __future__ import annotations

from prometheus_client import (
    GC_COLLECTOR,
    PLATFORM_COLLECTOR,
    PROCESS_COLLECTOR,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    disable_created_metrics,
)

disable_created_metrics()  # type: ignore[no-untyped-call]

REGISTRY = CollectorRegistry(auto_describe=True)
for _default in (PROCESS_COLLECTOR, PLATFORM_COLLECTOR, GC_COLLECTOR):
    REGISTRY.register(_default)

_CLIENT_GO_BUCKETS = (0.005, 0.025, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0)
"""client-go's buckets for the REST client histograms (component-base ``restclient``)."""
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

# API client: client-go's names, labels and buckets (component-base
# metrics/prometheus/restclient): ``code`` is the HTTP status or ``<error>``,
# ``method`` and ``verb`` the HTTP method, ``host`` the API server's host:port.
REST_CLIENT_REQUESTS = Counter(
    "rest_client_requests",
    "Number of HTTP requests, partitioned by status code, method, and host.",
    ["code", "method", "host"],
    registry=REGISTRY,
)
REST_CLIENT_LATENCY = Histogram(
    "rest_client_request_duration_seconds",
    "Request latency in seconds. Broken down by verb, and host.",
    ["verb", "host"],
    buckets=_CLIENT_GO_BUCKETS,
    registry=REGISTRY,
)
REST_CLIENT_RATE_LIMITER_DURATION = Histogram(
    "rest_client_rate_limiter_duration_seconds",
    "Client side rate limiter latency in seconds. Broken down by verb, and host.",
    ["verb", "host"],
    buckets=_CLIENT_GO_BUCKETS,
    registry=REGISTRY,
)

API_CLIENT_REQUESTS = Counter(
    "api_client_requests",
    "API requests by the client's verb (get, list, watch, create, apply, patch, update, delete...),"
    " resource and HTTP status code (or <error>): which kinds the operator reads and writes, which"
    " rest_client_requests_total does not tell.",
    ["verb", "resource", "code"],
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

# Admission webhooks (controller-runtime's names; ``webhook`` is the path served).
WEBHOOK_REQUESTS = Counter(
    "controller_runtime_webhook_requests",
    "Total number of admission requests by HTTP status code.",
    ["webhook", "code"],
    registry=REGISTRY,
)
WEBHOOK_LATENCY = Histogram(
    "controller_runtime_webhook_latency_seconds",
    "Histogram of the latency of processing admission requests",
    ["webhook"],
    buckets=_LATENCY_BUCKETS,
    registry=REGISTRY,
)
WEBHOOK_IN_FLIGHT = Gauge(
    "controller_runtime_webhook_requests_in_flight",
    "Current number of admission requests being served.",
    ["webhook"],
    registry=REGISTRY,
)
