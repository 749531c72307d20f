"""Config of a LogSet: its TOML, the HAKeeper bootstrap TOML, the gossip seeds, start.sh.

Three ConfigMaps, as upstream: the immutable hashed one (TOML + start.sh; a change rolls
the pods), and two that change in place without restarting anything: bootstrap
(settings read only at first start) and gossip seeds (rewritten on scale and failover).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from xxhash import xxh64_intdigest as xxh64

from mo_operator.matrixone import layout, names, ports, version
from mo_operator.matrixone.bootstrap import BootstrapReplica, init_hakeeper_members
from mo_operator.matrixone.component import Component
from mo_operator.matrixone.config import fileservice, startscript
from mo_operator.matrixone.config.common import (
    memory_fs,
    set_observability,
    user_over_defaults,
    without_instance_keys,
)
from mo_operator.matrixone.config.memo import copy_data, memoized
from mo_operator.matrixone.config.tomlconfig import (
    ConfigError,
    Table,
    deep_merge,
    delete_in,
    dumps,
    get_in,
    parse_user_config,
    set_in,
)
from mo_operator.matrixone.discovery import gossip_seed_addresses

# Keys start.sh inserts under [logservice] (both generations) or takes from the gossip map.
INSTANCE_KEYS = (
    "uuid",
    "service-host",
    "raft-port",
    "logservice-port",
    "gossip-port",
    "raft-address",
    "logservice-address",
    "gossip-address",
    "gossip-address-v2",
    "gossip-seed-addresses",
)


def deployment_id(logset_name: str) -> int:
    """``logservice.deployment-id``: upstream's ``xxhash64(name) >> 1`` (fits a TOML integer)."""
    return xxh64(logset_name.encode()) >> 1


def _shared_storage(spec: Mapping[str, Any]) -> Mapping[str, Any]:
    storage = spec.get("sharedStorage")
    if not isinstance(storage, Mapping):
        raise ConfigError("LogSet spec.sharedStorage is required")
    if not storage:  # the LogSet defines the cluster's storage: it cannot leave it to config
        raise ConfigError("sharedStorage must set exactly one of s3 and fileSystem")
    return storage


def render_toml(*, name: str, namespace: str, spec: Mapping[str, Any]) -> str:
    """The log service TOML (``logservice.toml``)."""
    storage = _shared_storage(spec)
    initial = spec.get("initialConfig") or {}
    if initial.get("restoreFrom"):
        defaults = fileservice.backup_fileservice_defaults(storage)
    else:
        defaults = fileservice.fileservice_defaults(storage, None)
    doc = user_over_defaults(spec, defaults)
    without_instance_keys(doc, ["logservice"], INSTANCE_KEYS)
    without_instance_keys(doc, ["logservice"], ["BootstrapConfig"])  # lives in bootstrap.toml
    set_in(doc, ["service-type"], Component.LOG.service_type)
    set_in(doc, ["logservice", "deployment-id"], deployment_id(name))
    set_in(doc, ["logservice", "logservice-listen-address"], f"0.0.0.0:{ports.LOG_SERVICE}")
    delete_in(doc, ["hakeeper-client", "service-addresses"])
    set_in(doc, ["hakeeper-client", "discovery-address"], names.discovery_address(name, namespace))
    if spec.get("replicas") == 1:
        # A lone log store has no other gossip seed; it cannot start without this.
        set_in(doc, ["logservice", "gossip-allow-self-as-seed"], True)
    set_observability(doc, spec)
    return dumps(doc)


def render_bootstrap_toml(*, spec: Mapping[str, Any], replicas: Sequence[BootstrapReplica]) -> str:
    """``bootstrap.toml``: ``[logservice.BootstrapConfig]``, appended to the TOML by start.sh.

    The user's own ``logservice.BootstrapConfig`` settings are kept under ours.
    ``num-of-dn-shards`` is upstream's key (MatrixOne before 1.0); MatrixOne now reads
    ``num-of-tn-shards``; both are written, and MatrixOne ignores the one it does not know.
    """
    initial = spec.get("initialConfig") or {}
    dn_shards = initial.get("dnShards", 1)
    ours: Table = {
        "bootstrap-cluster": True,
        "num-of-log-shards": initial.get("logShards", 1),
        "num-of-tn-shards": dn_shards,
        "num-of-dn-shards": dn_shards,
        "num-of-log-shard-replicas": len(replicas),
        "init-hakeeper-members": init_hakeeper_members(replicas),
    }
    restore_from = initial.get("restoreFrom")
    if restore_from:
        ours["restore"] = {"file-path": f"{fileservice.BACKUP}://{restore_from}"}
    users = get_in(parse_user_config(spec.get("config")), ["logservice", "BootstrapConfig"])
    table = deep_merge(users if isinstance(users, dict) else {}, ours)
    return dumps({"logservice": {"BootstrapConfig": table}})


def render_gossip_toml(*, name: str, namespace: str, ordinals: Iterable[int]) -> str:
    """``gossip.toml``: ``logservice.gossip-seed-addresses`` = the live log stores."""
    seeds = gossip_seed_addresses(name, namespace, ordinals)
    return dumps({"logservice": {"gossip-seed-addresses": seeds}})


def start_script(spec: Mapping[str, Any]) -> str:
    v2 = version.has_feature(version.version_of(spec), version.MOFeature.DISCOVERY_FIXED)
    return startscript.log_script(v2_keys=v2, memory_fs=memory_fs(spec))


@memoized(copy_data)
def config_map_data(*, name: str, namespace: str, spec: Mapping[str, Any]) -> dict[str, str]:
    """Data of the immutable log ConfigMap: ``logservice.toml`` and ``start.sh``."""
    return {
        layout.LOG_CONFIG_FILE: render_toml(name=name, namespace=namespace, spec=spec),
        layout.ENTRYPOINT_FILE: start_script(spec),
    }


@memoized(copy_data)
def bootstrap_config_map_data(
    *, spec: Mapping[str, Any], replicas: Sequence[BootstrapReplica]
) -> dict[str, str]:
    """Data of ``<ls>-log-bootstrap``."""
    return {layout.BOOTSTRAP_FILE: render_bootstrap_toml(spec=spec, replicas=replicas)}


@memoized(copy_data)
def gossip_config_map_data(*, name: str, namespace: str, ordinals: Iterable[int]) -> dict[str, str]:
    """Data of ``<ls>-log-gossip``."""
    return {layout.GOSSIP_FILE: render_gossip_toml(name=name, namespace=namespace, ordinals=ordinals)}
