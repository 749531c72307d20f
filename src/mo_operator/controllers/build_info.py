"""``mo_operator_build_info{version}``: always 1, so that a query can tell which
operator release each replica runs (``max by (version)``), and an alert or a
dashboard can join on it, as ``*_build_info`` series do elsewhere."""

from __future__ import annotations

from prometheus_client import Info

from mo_operator import __version__
from mo_operator.kube.metrics.metrics import REGISTRY

BUILD_INFO = Info("mo_operator_build", "The operator's release.", registry=REGISTRY)
BUILD_INFO.info({"version": __version__})
