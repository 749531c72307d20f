"""Every network port of a MatrixOne cluster, as MatrixOne and the upstream operator use them.

The numbers are fixed by MatrixOne's defaults (``pkg/logservice/config.go``) and by the
upstream operator's templates; clients and the simulator rely on them, so they are
constants rather than settings.
"""

from __future__ import annotations

from typing import Final

# Log service (pkg/logservice/config.go defaults; upstream logset/configmap.go).
LOG_RAFT: Final = 32000
LOG_SERVICE: Final = 32001
"""The log service RPC port; also the HAKeeper's, and the port of the discovery Service."""
LOG_GOSSIP: Final = 32002

# TN (upstream dnset/utils.go and common/consts.go).
TN_SERVICE: Final = 41010
"""TN ``listen-address`` port and ``port-base`` (MatrixOne allocates its other RPC ports from it)."""
TN_LOCK_SERVICE: Final = 6003
TN_LOGTAIL: Final = 32003

# CN (upstream cnset/utils.go).
CN_SQL: Final = 6001
"""The MySQL protocol port clients connect to."""
CN_RPC: Final = 6002
"""CN pipeline RPC ``listen-address`` port and ``port-base``."""
CN_LOCK_SERVICE: Final = 6003
CN_QUERY: Final = 6004
"""The CN query service (``QueryAddress`` in HAKeeper): MatrixOne gives its services ports
from ``port-base`` in slot order, pipeline, lock, query (matrixone ``pkg/cnservice/service_ports.go``,
``pkg/util/address``), so 6002 + 2."""
CN_PYTHON_UDF_DEFAULT: Final = 50051
"""Default port of the python-udf sidecar, reached on localhost."""

# Proxy (upstream proxyset/resource.go).
PROXY_SQL: Final = 6001

# Shared.
METRICS: Final = 7001
"""Prometheus metrics of every MatrixOne service (``observability.enableMetricToProm``)."""
DEBUG_HTTP: Final = 6060
"""``-debug-http=:6060``, the default service argument the upstream chart adds."""

# WebUI (upstream webui/resource.go).
WEBUI_FRONTEND: Final = 8001
WEBUI_BACKEND: Final = 8007

# Port names used on Services (upstream names, kept for compatibility of selectors and docs).
CN_SERVICE_PORT_NAME: Final = "service"
PROXY_SERVICE_PORT_NAME: Final = "proxy"
METRICS_PORT_NAME: Final = "metric"
WEBUI_PORT_NAME: Final = "web"
