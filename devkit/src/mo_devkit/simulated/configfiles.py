"""What a MatrixOne process would read at start: the config files mounted into its pod.

The simulated process reads the same files the real one reads (the ConfigMap volumes
the pod mounts, combined as start.sh combines them; the TOML under the suffixed key
``$CONFIG_SUFFIX`` names, as the Go operator's start.sh reads it) and refuses to run on what the
real one would refuse: a missing ConfigMap, invalid TOML, or a config without the keys
MatrixOne needs. That is what lets end-to-end tests catch a controller that renders or
mounts config wrongly.
"""

from __future__ import annotations

import functools
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mo_devkit.simulated.backups import RestorePoint, StorageLocation
from mo_devkit.simulated.view import Snapshot
from mo_operator.matrixone import layout
from mo_operator.matrixone.admin import WorkState
from mo_operator.matrixone.component import Component
from mo_operator.matrixone.config.tomlconfig import get_in

_MEMBER = re.compile(r"([0-9]+):(.+)")
_SERVICE_TYPES = {
    Component.LOG: ("LOG",),
    Component.TN: ("DN", "TN"),
    Component.CN: ("CN",),
    Component.PROXY: ("PROXY",),
}
_NEEDS_FILESERVICES = (Component.LOG, Component.TN, Component.CN)
_NEEDS_HAKEEPER = (Component.TN, Component.CN, Component.PROXY)
_CONFIG_SUFFIX_ENV = "CONFIG_SUFFIX"
"""Upstream's start.sh reads ``<toml>-$CONFIG_SUFFIX`` when this is set (common/template.go)."""
_ANNOTATION_FIELD = re.compile(r"metadata\.annotations\['([^']+)'\]")
_PARSED_CONFIGS = 8192
"""Distinct config texts kept parsed: several per cluster, for a few thousand clusters."""


@dataclass(frozen=True)
class Problem:
    """Why a process cannot run; ``reason`` is a CamelCase word shown on the pod."""

    reason: str
    message: str


@dataclass(frozen=True)
class Bootstrap:
    """``logservice.BootstrapConfig`` as a log store reads it: whether to bootstrap, with whom."""

    bootstrap_cluster: bool
    members: tuple[str, ...]
    """The UUIDs of ``init-hakeeper-members`` (the replica IDs play no part here)."""
    restore: RestorePoint | None = None
    """``restore.file-path``: HAKeeper's data to bootstrap from (a cluster restored from a backup)."""


@dataclass(frozen=True)
class HAKeeperClient:
    """``[hakeeper-client]``: the discovery address, or else the log store list."""

    discovery_address: str | None
    service_addresses: tuple[str, ...]


@dataclass(frozen=True)
class ProcessConfig:
    """The settings of one process that the simulation acts on."""

    hakeeper: HAKeeperClient | None = None
    bootstrap: Bootstrap | None = None
    init_work_state: WorkState = WorkState.WORKING


def _config_map_volumes(pod: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    spec = pod.get("spec") or {}
    return [v for v in spec.get("volumes") or [] if isinstance(v.get("configMap"), Mapping)]


def _mounts_config_secret(pod: Mapping[str, Any]) -> bool:
    volumes = (pod.get("spec") or {}).get("volumes") or []
    return any(
        v.get("name") == layout.CONFIG_VOLUME and isinstance(v.get("secret"), Mapping) for v in volumes
    )


def missing_config_maps(pod: Mapping[str, Any], namespace: str, view: Snapshot) -> list[str]:
    """Names of required ConfigMaps the pod mounts that do not exist.

    The kubelet does not start a pod until every non-optional ConfigMap volume can be
    mounted (it reports FailedMount), so such a pod's process never runs.
    """
    missing = []
    for volume in _config_map_volumes(pod):
        source = volume["configMap"]
        name = str(source.get("name") or "")
        if not source.get("optional") and view.configmap(namespace, name) is None:
            missing.append(name)
    return missing


def mounted_file(
    pod: Mapping[str, Any], namespace: str, view: Snapshot, volume_name: str, file_name: str
) -> str | None:
    """The text of ``file_name`` in the pod's ConfigMap volume ``volume_name``, if it is there.

    Honours the volume's ``items`` (key → path remapping) as the kubelet does: with
    items, only the listed keys appear, under their paths.
    """
    for volume in _config_map_volumes(pod):
        if volume.get("name") != volume_name:
            continue
        source = volume["configMap"]
        cm = view.configmap(namespace, str(source.get("name") or ""))
        data = (cm or {}).get("data") or {}
        items = source.get("items")
        key = file_name
        if items:
            key = next((str(i.get("key")) for i in items if i.get("path") == file_name), "")
        value = data.get(key)
        return value if isinstance(value, str) else None
    return None


def config_suffix(pod: Mapping[str, Any]) -> str:
    """``$CONFIG_SUFFIX`` as the main container sees it: a value, or the pod annotation
    its downward-API reference names (how the Go operator's pods get it); empty if unset."""
    containers = (pod.get("spec") or {}).get("containers") or [{}]
    main = next((c for c in containers if c.get("name") == layout.MAIN_CONTAINER), containers[0])
    for env in main.get("env") or ():
        if env.get("name") != _CONFIG_SUFFIX_ENV:
            continue
        path = str((((env.get("valueFrom") or {}).get("fieldRef")) or {}).get("fieldPath") or "")
        match = _ANNOTATION_FIELD.fullmatch(path)
        if match is not None:
            annotations = (pod.get("metadata") or {}).get("annotations") or {}
            return str(annotations.get(match.group(1)) or "")
        return str(env.get("value") or "")
    return ""


def config_file_name(component: Component, pod: Mapping[str, Any]) -> str:
    """The TOML file the pod's start script reads: ``<file>-<suffix>`` when ``$CONFIG_SUFFIX``
    is set (upstream's start.sh, operatorVersion 1.3), else the plain file name."""
    suffix = config_suffix(pod)
    plain = layout.config_file(component)
    return f"{plain}-{suffix}" if suffix else plain


def _effective_text(
    component: Component, pod: Mapping[str, Any], namespace: str, view: Snapshot
) -> str | None:
    main = mounted_file(pod, namespace, view, layout.CONFIG_VOLUME, config_file_name(component, pod))
    if main is None or component is not Component.LOG:
        return main
    # start.sh appends bootstrap.toml without its bare [logservice] header.
    extra = mounted_file(pod, namespace, view, layout.BOOTSTRAP_VOLUME, layout.BOOTSTRAP_FILE)
    if extra is None:
        return main
    kept = [line for line in extra.splitlines() if line.strip() != "[logservice]"]
    return main + "\n" + "\n".join(kept) + "\n"


@functools.lru_cache(maxsize=_PARSED_CONFIGS)
def _parse(text: str) -> Mapping[str, Any] | str:
    """The TOML document, or the parse error; cached, as the same files are read at every refresh.

    Every refresh reads every pod's file in turn, so a cache smaller than the number
    of distinct files misses on every read (least recently used is the next one read):
    at 100 clusters (about 400 files) a 256-entry cache made refreshing quadratic.
    """
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        return f"config is not valid TOML: {e}"


def _required_keys_problem(component: Component, doc: Mapping[str, Any]) -> str | None:
    allowed = _SERVICE_TYPES.get(component)
    if allowed is not None and doc.get("service-type") not in allowed:
        return f"service-type must be one of {list(allowed)}, got {doc.get('service-type')!r}"
    if component is Component.LOG and not isinstance(get_in(doc, ["logservice", "deployment-id"]), int):
        return "logservice.deployment-id is not set"
    if component in _NEEDS_FILESERVICES:
        names = {fs.get("name") for fs in doc.get("fileservice") or [] if isinstance(fs, Mapping)}
        restoring = component is Component.LOG and "BACKUP" in names  # reads only the backup at first
        if not restoring and ("LOCAL" not in names or not names & {"S3", "SHARED"}):
            return "fileservice must define LOCAL and a shared (S3 or SHARED) fileservice"
    if component in _NEEDS_HAKEEPER:
        client = _hakeeper_client(doc)
        if client is None or not (client.discovery_address or client.service_addresses):
            return "hakeeper-client has neither discovery-address nor service-addresses"
    return None


def _hakeeper_client(doc: Mapping[str, Any]) -> HAKeeperClient | None:
    table = doc.get("hakeeper-client")
    if not isinstance(table, Mapping):
        return None
    discovery = table.get("discovery-address")
    addresses = table.get("service-addresses")
    return HAKeeperClient(
        discovery if isinstance(discovery, str) and discovery else None,
        tuple(a for a in addresses if isinstance(a, str)) if isinstance(addresses, list) else (),
    )


def _restore_point(doc: Mapping[str, Any], file_path: object) -> RestorePoint | str:
    """``restore.file-path`` (``<fileservice>://<path>``) resolved to a storage location."""
    fs_name, sep, path = str(file_path).partition("://")
    if not sep:
        return f"restore.file-path {file_path!r} is not <fileservice>://<path>"
    for fs in doc.get("fileservice") or []:
        if not isinstance(fs, Mapping) or fs.get("name") != fs_name:
            continue
        s3 = fs.get("s3")
        if isinstance(s3, Mapping):
            where = StorageLocation.of(
                str(s3.get("endpoint") or ""), str(s3.get("bucket") or ""), str(s3.get("key-prefix") or "")
            )
        else:
            where = StorageLocation.of("file", "", str(fs.get("data-dir") or ""))
        return RestorePoint(where, path)
    return f"restore.file-path names fileservice {fs_name!r}, which is not defined"


def _bootstrap(doc: Mapping[str, Any]) -> Bootstrap | str | None:
    table = get_in(doc, ["logservice", "BootstrapConfig"])
    if not isinstance(table, Mapping):
        return None
    members: list[str] = []
    for item in table.get("init-hakeeper-members") or []:
        match = _MEMBER.fullmatch(item) if isinstance(item, str) else None
        if match is None:
            return f"init-hakeeper-members entry {item!r} is not <replica id>:<uuid>"
        members.append(match.group(2))
    restore: RestorePoint | None = None
    file_path = get_in(table, ["restore", "file-path"])
    if file_path:
        point = _restore_point(doc, file_path)
        if isinstance(point, str):
            return point
        restore = point
    return Bootstrap(table.get("bootstrap-cluster") is True, tuple(members), restore)


def _init_work_state(doc: Mapping[str, Any]) -> WorkState | str:
    value = get_in(doc, ["cn", "init-work-state"])
    if value is None:
        return WorkState.WORKING
    for state in (WorkState.WORKING, WorkState.DRAINING, WorkState.DRAINED):
        if isinstance(value, str) and value.lower() == state.mo_name.lower():
            return state
    return f"cn.init-work-state {value!r} is not a work state"


def read_config(
    component: Component, pod: Mapping[str, Any], namespace: str, view: Snapshot
) -> ProcessConfig | Problem:
    """The process's config as it would read it at start, or why it would refuse to run."""
    missing = missing_config_maps(pod, namespace, view)
    if missing:
        return Problem("ConfigMapMissing", f"ConfigMap {', '.join(missing)} not found")
    if component is Component.WEBUI and _mounts_config_secret(pod):
        return ProcessConfig()  # the dashboard (not MatrixOne) reads a config holding a credential
    text = _effective_text(component, pod, namespace, view)
    if text is None:
        return Problem(
            "InvalidConfig",
            f"no {config_file_name(component, pod)} in a ConfigMap volume named {layout.CONFIG_VOLUME!r}",
        )
    doc = _parse(text)
    if isinstance(doc, str):
        return Problem("InvalidConfig", doc)
    missing_key = _required_keys_problem(component, doc)
    if missing_key is not None:
        return Problem("InvalidConfig", missing_key)
    bootstrap = _bootstrap(doc) if component is Component.LOG else None
    if isinstance(bootstrap, str):
        return Problem("InvalidConfig", bootstrap)
    work_state = _init_work_state(doc) if component is Component.CN else WorkState.WORKING
    if isinstance(work_state, str):
        return Problem("InvalidConfig", work_state)
    hakeeper = _hakeeper_client(doc) if component in _NEEDS_HAKEEPER else None
    return ProcessConfig(hakeeper=hakeeper, bootstrap=bootstrap, init_work_state=work_state)
