"""Config of a DNSet (TN): TOML and start.sh.

MatrixOne reads the TN's settings from ``[tn]`` or, for old configs, ``[dn]``. Like
upstream we write to ``[tn]`` when the user's config already uses it, else ``[dn]``,
so our keys always land in the table MatrixOne reads the user's from.
"""

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


def section(spec: Mapping[str, Any]) -> str:
    """``tn`` if the user's config has a ``[tn]`` table, else ``dn``."""
    return "tn" if "tn" in parse_user_config(spec.get("config")) else "dn"


def render_toml(
    *, spec: Mapping[str, Any], shared_storage: Mapping[str, Any], hakeeper: HAKeeperEndpoint
) -> str:
    """The TN's ``config.toml``; ``shared_storage`` is its LogSet's ``spec.sharedStorage``."""
    cache = spec.get("sharedStorageCache") or {}
    doc = user_over_defaults(spec, fileservice.fileservice_defaults(shared_storage, cache))
    alias = section(spec)
    without_instance_keys(doc, [alias], ["uuid", "service-address", "service-host"])
    without_instance_keys(doc, [alias, "lockservice"], ["service-address"])
    without_instance_keys(doc, [alias, "LogtailServer"], ["service-address"])
    set_hakeeper_client(doc, spec, hakeeper)
    set_in(doc, ["service-type"], Component.TN.service_type)
    set_in(doc, [alias, "listen-address"], f"0.0.0.0:{ports.TN_SERVICE}")
    set_in(doc, [alias, "port-base"], ports.TN_SERVICE)
    set_in(doc, [alias, "lockservice", "listen-address"], f"0.0.0.0:{ports.TN_LOCK_SERVICE}")
    set_in(doc, [alias, "LogtailServer", "listen-address"], f"0.0.0.0:{ports.TN_LOGTAIL}")
    set_observability(doc, spec)
    return dumps(doc)


def start_script(spec: Mapping[str, Any]) -> str:
    return startscript.tn_script(section=section(spec), memory_fs=memory_fs(spec))


def config_map_data(
    *, spec: Mapping[str, Any], shared_storage: Mapping[str, Any], hakeeper: HAKeeperEndpoint
) -> dict[str, str]:
    """Data of the immutable TN ConfigMap: ``config.toml`` and ``start.sh``."""
    return {
        layout.CONFIG_FILE: render_toml(spec=spec, shared_storage=shared_storage, hakeeper=hakeeper),
        layout.ENTRYPOINT_FILE: start_script(spec),
    }
