"""Config of a CNSet: TOML and start.sh, and the cluster-level switch for proxy mode."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mo_operator.matrixone import layout, ports
from mo_operator.matrixone.component import Component
from mo_operator.matrixone.config import fileservice, startscript
from mo_operator.matrixone.config.common import (
    memory_fs,
    set_hakeeper_client,
    set_observability,
    user_over_defaults,
    without_instance_keys,
)
from mo_operator.matrixone.config.tomlconfig import dumps, parse_user_config, set_in
from mo_operator.matrixone.discovery import HAKeeperEndpoint

INSTANCE_KEYS = ("uuid", "listen-address", "service-address", "sql-address", "service-host")


def render_toml(
    *, spec: Mapping[str, Any], shared_storage: Mapping[str, Any], hakeeper: HAKeeperEndpoint
) -> str:
    """The CN's ``config.toml``; ``shared_storage`` is its LogSet's ``spec.sharedStorage``.

    With store draining enabled a CN starts ``Draining`` (``cn.init-work-state``): the
    operator marks it Working once it is registered, so a CN never takes sessions
    before the operator knows it.
    """
    cache = spec.get("sharedStorageCache") or {}
    doc = user_over_defaults(spec, fileservice.fileservice_defaults(shared_storage, cache))
    without_instance_keys(doc, ["cn"], INSTANCE_KEYS)
    without_instance_keys(doc, ["cn", "lockservice"], ["service-address"])
    set_hakeeper_client(doc, spec, hakeeper)
    set_in(doc, ["service-type"], Component.CN.service_type)
    set_in(doc, ["cn", "role"], spec.get("role") or "TP")
    set_in(doc, ["cn", "port-base"], ports.CN_RPC)
    set_in(doc, ["cn", "lockservice", "listen-address"], f"0.0.0.0:{ports.CN_LOCK_SERVICE}")
    sidecar = spec.get("pythonUdfSidecar") or {}
    if sidecar.get("enabled") is True:
        port = sidecar.get("port") or ports.CN_PYTHON_UDF_DEFAULT
        set_in(doc, ["cn", "python-udf-client", "server-address"], f"localhost:{port}")
    if (spec.get("scalingConfig") or {}).get("storeDrainEnabled") is True:
        set_in(doc, ["cn", "init-work-state"], "Draining")
    set_observability(doc, spec)
    return dumps(doc)


def with_proxy_frontend(config: str | Mapping[str, Any] | None) -> str:
    """A CNSet ``config`` with ``cn.frontend.proxy-enabled = true``.

    A MatrixOneCluster with a proxy writes this into its CNSets' specs (as upstream), so
    that each CNSet stays self-describing and renders the same config on its own.
    """
    doc = parse_user_config(config)
    set_in(doc, ["cn", "frontend", "proxy-enabled"], True)
    return dumps(doc)


def start_script(spec: Mapping[str, Any]) -> str:
    return startscript.cn_script(memory_fs=memory_fs(spec))


def config_map_data(
    *, spec: Mapping[str, Any], shared_storage: Mapping[str, Any], hakeeper: HAKeeperEndpoint
) -> dict[str, str]:
    """Data of the immutable CN ConfigMap: ``config.toml`` and ``start.sh``."""
    return {
        layout.CONFIG_FILE: render_toml(spec=spec, shared_storage=shared_storage, hakeeper=hakeeper),
        layout.ENTRYPOINT_FILE: start_script(spec),
    }
