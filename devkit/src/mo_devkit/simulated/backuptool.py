"""The simulated ``mo_br``: MatrixOne's backup tool as seen from outside its pod.

A pod whose container runs ``/mo_br backup``, ``restore`` or ``delete`` (the shell command
``matrixone.backup`` builds) is played here; every other pod is left alone. The outcome
is decided once per pod, when the kubelet first asks, and the kubelet then ends the
container with it (``PodVerdict.completion``):

- **backup**: ``--host`` is resolved as the pod would resolve it (a Service in front of
  the CNs or proxies of a cluster) and must lead to a CN or proxy that serves and reaches
  a running HAKeeper. Then the backup is recorded in the model (an ID, the target path,
  the source cluster, a size) and the container exits 0 having written ``mo_br.meta`` to
  its termination-message file; otherwise it exits 1 and says why on its output.
- **delete**: the backup named on the command line must be one recorded in the model,
  named by the metadata handed over (``$RAW_META``); it is removed from the model (its
  data is gone: a later restore of it fails) and the container exits 0.
- **restore**: the backup named on the command line must be one recorded in the model
  and the metadata handed over (``$RAW_META``) must name it and its path. Then the target
  path is marked as holding that backup's data (a log service restoring from it can
  bootstrap, see state.py) and the container exits 0; otherwise it exits 1.
"""

from __future__ import annotations

import hashlib
import shlex
import uuid
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any

from mo_devkit.localcluster.simulator.behaviour import ContainerExit, PodVerdict
from mo_devkit.simulated.backups import BackupRecord, StorageLocation
from mo_devkit.simulated.instances import Instance
from mo_devkit.simulated.resolve import LogSetKey, Unresolved
from mo_devkit.simulated.state import MOModel
from mo_devkit.simulated.view import Key, Snapshot
from mo_operator.kube.meta.objects import labels_of, meta_of, spec_of, uid_of
from mo_operator.kube.meta.times import format_time
from mo_operator.matrixone import ports
from mo_operator.matrixone.backup import BINARY, MetadataError, format_metadata, parse_metadata
from mo_operator.matrixone.component import Component

Obj = dict[str, Any]

_BOOLEAN_FLAGS = frozenset({"is_minio", "restore_is_minio", "backup_is_minio"})
_CLUSTER_SUFFIX = ".cluster.local"
MiB = 1024 * 1024


@dataclass(frozen=True)
class ToolRun:
    """One ``mo_br`` invocation found in a pod."""

    container: str
    action: str
    """``backup``, ``restore`` or ``delete``."""
    positional: tuple[str, ...]
    flags: Mapping[str, str]
    """``--name=value`` / ``--name value``; boolean flags map to ``"true"``."""
    env: Mapping[str, str]
    """The container's literal environment values (Secret references are not read)."""


def _script(container: Mapping[str, Any]) -> str:
    """The shell script a container runs (``sh -c <script>``), else its command line."""
    parts = [str(part) for part in [*(container.get("command") or []), *(container.get("args") or [])]]
    if len(parts) >= 3 and parts[0].rsplit("/", 1)[-1] in ("sh", "bash") and parts[1] == "-c":
        return parts[2]
    return shlex.join(parts)


def _parse(script: str) -> tuple[str, tuple[str, ...], dict[str, str]] | None:
    for part in script.split("&&"):
        try:
            words = shlex.split(part)
        except ValueError:
            continue
        if len(words) < 2 or words[0] != BINARY or words[1] not in ("backup", "restore", "delete"):
            continue
        positional: list[str] = []
        flags: dict[str, str] = {}
        rest = words[2:]
        i = 0
        while i < len(rest):
            word = rest[i]
            i += 1
            if not word.startswith("--"):
                positional.append(word)
                continue
            name, eq, value = word[2:].partition("=")
            if not eq:
                if name in _BOOLEAN_FLAGS or i >= len(rest) or rest[i].startswith("--"):
                    value = "true"
                else:
                    value, i = rest[i], i + 1
            flags[name] = value
        return words[1], tuple(positional), flags
    return None


def tool_run(pod: Mapping[str, Any]) -> ToolRun | None:
    """The ``mo_br`` run of ``pod``, None if none of its containers runs ``mo_br``."""
    for container in spec_of(pod).get("containers") or []:
        script = _script(container)
        if BINARY not in script:
            continue
        parsed = _parse(script)
        if parsed is None:
            continue
        env = {
            str(e.get("name")): str(e.get("value"))
            for e in container.get("env") or []
            if isinstance(e, Mapping) and "value" in e
        }
        return ToolRun(str(container.get("name") or ""), parsed[0], parsed[1], parsed[2], env)
    return None


# -------------------------------------------------------------- addresses
def _host(host: str, namespace: str) -> tuple[str, str] | None:
    host = host.rstrip(".")
    if host.endswith(_CLUSTER_SUFFIX):
        host = host[: -len(_CLUSTER_SUFFIX)]
    if host.endswith(".svc"):
        host = host[: -len(".svc")]
    parts = host.split(".")
    if len(parts) == 1:
        return parts[0], namespace
    if len(parts) == 2:
        return parts[0], parts[1]
    return None


def resolve_sql_host(
    host: str,
    port: int,
    namespace: str,
    view: Snapshot,
    instances: Mapping[Key, Instance],
    model: MOModel,
) -> LogSetKey | Unresolved:
    """The cluster (its LogSet) a MySQL client reaches at ``host:port`` from ``namespace``.

    As DNS would: a Service name leads to the pods its selector picks; one of them must
    be a CN or proxy that serves and reaches a running HAKeeper.
    """
    found = _host(host, namespace)
    if found is None:
        return Unresolved(f"cannot resolve host {host!r}")
    name, ns = found
    service = view.service(ns, name)
    if service is None:
        return Unresolved(f"Service {ns}/{name} not found")
    spec = spec_of(service)
    if port not in {p.get("port") for p in spec.get("ports") or []}:
        return Unresolved(f"Service {ns}/{name} has no port {port}")
    selector = spec.get("selector") or {}
    selected = [
        instances[key]
        for key, pod in view.pods.items()
        if key[0] == ns
        and key in instances
        and selector
        and all(labels_of(pod).get(k) == v for k, v in selector.items())
    ]
    sql = [i for i in selected if i.component in (Component.CN, Component.PROXY)]
    if not sql:
        return Unresolved(f"Service {ns}/{name} selects no CN or proxy")
    for instance in sql:
        if not instance.serving:
            continue
        hakeeper = model.reachable(instance)
        if hakeeper is not None:
            return hakeeper.key
    return Unresolved(f"no CN or proxy behind Service {ns}/{name} serves with a running HAKeeper")


# ------------------------------------------------------------------ runs
def _fail(run: ToolRun, message: str) -> ContainerExit:
    return ContainerExit(exit_code=1, log=f"mo_br {run.action}: {message}\n", container=run.container)


def run_backup(
    run: ToolRun,
    pod_uid: str,
    namespace: str,
    view: Snapshot,
    instances: Mapping[Key, Instance],
    model: MOModel,
    now: float,
) -> ContainerExit:
    host, port_text = run.flags.get("host", ""), run.flags.get("port", str(ports.CN_SQL))
    if run.flags.get("backup_dir") != "s3" or not run.flags.get("bucket"):
        return _fail(run, "only --backup_dir=s3 with a --bucket is simulated")
    if not port_text.isdigit():
        return _fail(run, f"invalid --port {port_text!r}")
    source = resolve_sql_host(host, int(port_text), namespace, view, instances, model)
    if isinstance(source, Unresolved):
        return _fail(run, f"cannot connect to MatrixOne at {host}:{port_text}: {source.reason}")
    location = StorageLocation.of(
        run.flags.get("endpoint", ""), run.flags["bucket"], run.flags.get("filepath", "")
    )
    backup_id = str(uuid.uuid5(uuid.NAMESPACE_URL, f"mo_br/{pod_uid}"))
    hakeeper = model.hakeepers[source]
    stores = sum(len(s) for s in hakeeper.stores.values())
    size = 64 * MiB + stores * MiB + int(hashlib.sha256(backup_id.encode()).hexdigest()[:4], 16)
    model.backups.record(BackupRecord(backup_id, location, source, size, now))
    at = format_time(now)
    path = f"{location.bucket}/{location.path}".rstrip("/")
    meta = format_metadata(backup_id, size, path, at, "1s", at)
    return ContainerExit(exit_code=0, message=meta + "\n", container=run.container)


def run_restore(run: ToolRun, model: MOModel) -> ContainerExit:
    if len(run.positional) != 1:
        return _fail(run, "restore takes exactly one backup ID")
    backup_id = run.positional[0]
    if run.flags.get("restore_dir") != "s3" or not run.flags.get("restore_bucket"):
        return _fail(run, "only --restore_dir s3 with a --restore_bucket is simulated")
    try:
        meta = parse_metadata(run.env.get("RAW_META", ""))
    except MetadataError as e:
        return _fail(run, f"cannot read mo_br.meta: {e}")
    if meta.id != backup_id:
        return _fail(run, f"backup {backup_id} is not in mo_br.meta")
    record = model.backups.backups.get(backup_id)
    where = meta.path or "its path"
    if record is None:
        return _fail(run, f"backup {backup_id} not found at {where}: no such backup data")
    recorded = f"{record.location.bucket}/{record.location.path}".rstrip("/")
    if meta.path is not None and meta.path.strip("/") != recorded:
        return _fail(run, f"backup {backup_id} not found at {meta.path}: its data is at {recorded}")
    target = StorageLocation.of(
        run.flags.get("restore_endpoint", ""),
        run.flags["restore_bucket"],
        run.flags.get("restore_filepath", ""),
    )
    model.backups.restore(backup_id, target)
    # The restore command writes no termination message: what it prints is only its log.
    return ContainerExit(
        exit_code=0, log=f"restored backup {backup_id} to {target}\n", container=run.container
    )


def run_delete(run: ToolRun, model: MOModel) -> ContainerExit:
    if len(run.positional) != 1:
        return _fail(run, "delete takes exactly one backup ID")
    backup_id = run.positional[0]
    try:
        meta = parse_metadata(run.env.get("RAW_META", ""))
    except MetadataError as e:
        return _fail(run, f"cannot read mo_br.meta: {e}")
    if meta.id != backup_id:
        return _fail(run, f"backup {backup_id} is not in mo_br.meta")
    if model.backups.backups.get(backup_id) is None:
        return _fail(run, f"backup {backup_id} not found: no such backup data")
    model.backups.delete(backup_id)
    return ContainerExit(exit_code=0, log=f"deleted backup {backup_id}\n", container=run.container)


class BackupTool:
    """The ``PodBehaviour`` of ``mo_br`` pods: each pod's outcome, decided once."""

    def __init__(self, decide: Callable[[Obj, ToolRun], ContainerExit]) -> None:
        self._decide = decide
        self._verdicts: dict[str, PodVerdict | None] = {}
        self.enabled = True

    def judge(self, pod: Obj, node: Obj | None) -> PodVerdict | None:
        if not self.enabled:
            return None
        uid = uid_of(pod)
        if uid in self._verdicts:
            return self._verdicts[uid]
        run = tool_run(pod)
        found = None if run is None else PodVerdict(completion=self._decide(pod, run))
        self._verdicts[uid] = found
        return found

    def forget_except(self, uids: Collection[str]) -> None:
        """Drop what is known of pods that are gone."""
        for uid in [u for u in self._verdicts if u not in uids]:
            del self._verdicts[uid]


def run_tool(
    pod: Mapping[str, Any],
    run: ToolRun,
    view: Snapshot,
    instances: Mapping[Key, Instance],
    model: MOModel,
    now: float,
) -> ContainerExit:
    """The outcome of ``run`` in ``pod`` against the simulated clusters."""
    meta = meta_of(pod)
    if run.action == "backup":
        return run_backup(run, meta.uid, meta.namespace, view, instances, model, now)
    if run.action == "delete":
        return run_delete(run, model)
    return run_restore(run, model)
