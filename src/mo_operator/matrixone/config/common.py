"""Rendering steps every MatrixOne component shares.

Order matters and is the same everywhere: our defaults, then the user's config over
them (the user wins), then the keys the operator must own (ports, addresses, service
type; the operator wins, because pods, Services and the start script depend on them),
with the per-instance keys the start script inserts removed so none is doubled.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from mo_operator.matrixone import version
from mo_operator.matrixone.config.tomlconfig import Table, deep_merge, delete_in, parse_user_config, set_in
from mo_operator.matrixone.discovery import HAKeeperEndpoint


def user_over_defaults(spec: Mapping[str, Any], defaults: Mapping[str, Any]) -> Table:
    """The user's ``spec.config`` deep-merged over ``defaults``."""
    return deep_merge(defaults, parse_user_config(spec.get("config")))


def without_instance_keys(doc: Table, section: Sequence[str], keys: Iterable[str]) -> None:
    """Remove keys the start script writes into ``section`` (a user value would be doubled)."""
    for key in keys:
        delete_in(doc, [*section, key])


def set_observability(doc: Table, spec: Mapping[str, Any]) -> None:
    """``exportToPrometheus: true`` turns on MatrixOne's Prometheus endpoint (port 7001)."""
    if spec.get("exportToPrometheus") is True:
        set_in(doc, ["observability", "enableMetricToProm"], True)


def set_hakeeper_client(doc: Table, spec: Mapping[str, Any], endpoint: HAKeeperEndpoint) -> None:
    """Point ``[hakeeper-client]`` at the log service, by version as upstream (see discovery.py)."""
    delete_in(doc, ["hakeeper-client", "discovery-address"])
    delete_in(doc, ["hakeeper-client", "service-addresses"])
    v = version.version_of(spec)
    if endpoint.service_addresses and not version.has_feature(v, version.MOFeature.DISCOVERY_FIXED):
        set_in(doc, ["hakeeper-client", "service-addresses"], list(endpoint.service_addresses))
    else:
        set_in(doc, ["hakeeper-client", "discovery-address"], endpoint.discovery_address)


def memory_fs(spec: Mapping[str, Any]) -> bool:
    """Whether the binary runs from a tmpfs (``memoryFsSize`` set)."""
    return spec.get("memoryFsSize") is not None
