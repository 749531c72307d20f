"""Config of a ProxySet: TOML and start.sh.

The proxy always finds the HAKeeper through the discovery address (upstream does so
for every MatrixOne version); it needs the fileservices for its own bookkeeping.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mo_operator.matrixone import layout, ports
from mo_operator.matrixone.component import Component
from mo_operator.matrixone.config import fileservice, startscript
from mo_operator.matrixone.config.common import (
    memory_fs,
    set_observability,
    user_over_defaults,
    without_instance_keys,
)
from mo_operator.matrixone.config.tomlconfig import delete_in, dumps, set_in
from mo_operator.matrixone.discovery import HAKeeperEndpoint


def render_toml(
    *, spec: Mapping[str, Any], shared_storage: Mapping[str, Any], hakeeper: HAKeeperEndpoint
) -> str:
    """The proxy's ``config.toml``; ``shared_storage`` is its LogSet's ``spec.sharedStorage``."""
    doc = user_over_defaults(spec, fileservice.fileservice_defaults(shared_storage, None))
    without_instance_keys(doc, ["proxy"], ["uuid"])
    delete_in(doc, ["hakeeper-client", "service-addresses"])
    set_in(doc, ["hakeeper-client", "discovery-address"], hakeeper.discovery_address)
    set_in(doc, ["service-type"], Component.PROXY.service_type)
    set_in(doc, ["proxy", "listen-address"], f"0.0.0.0:{ports.PROXY_SQL}")
    set_observability(doc, spec)
    return dumps(doc)


def start_script(spec: Mapping[str, Any]) -> str:
    wait = spec.get("waitPluginAddr")
    return startscript.proxy_script(
        wait_plugin_addr=wait if isinstance(wait, str) and wait else None, memory_fs=memory_fs(spec)
    )


def config_map_data(
    *, spec: Mapping[str, Any], shared_storage: Mapping[str, Any], hakeeper: HAKeeperEndpoint
) -> dict[str, str]:
    """Data of the immutable proxy ConfigMap: ``config.toml`` and ``start.sh``."""
    return {
        layout.CONFIG_FILE: render_toml(spec=spec, shared_storage=shared_storage, hakeeper=hakeeper),
        layout.ENTRYPOINT_FILE: start_script(spec),
    }
