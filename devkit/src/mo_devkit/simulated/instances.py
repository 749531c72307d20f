"""The MatrixOne process in each pod, as the simulation sees it from the API objects.

One ``Instance`` per pod labelled with a MatrixOne component: which store it is (its
UUID, computed as start.sh computes it), whether its process runs, whether it could
run at all (image, config), and where its config tells it to find the HAKeeper. The
model (state.py) takes a list of these and nothing else.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

from mo_devkit.simulated.configfiles import (
    Bootstrap,
    HAKeeperClient,
    Problem,
    ProcessConfig,
    read_config,
)
from mo_devkit.simulated.resolve import LogSetKey, Unresolved, resolve_client
from mo_devkit.simulated.view import Key, Snapshot, key_of, mo_component
from mo_operator.kube.meta.objects import labels_of
from mo_operator.matrixone import identity, labels, layout, names, ports
from mo_operator.matrixone.admin import WorkState
from mo_operator.matrixone.component import Component


@dataclass(frozen=True)
class Instance:
    """One MatrixOne process (or would-be process) in one pod."""

    namespace: str
    pod: str
    uid: str
    component: Component
    set_name: str
    process: str
    """Changes when the process restarts (new pod or container restart): sessions do not survive it."""
    uuid: str | None
    problem: Problem | None
    """Why the process can never run as it is (bad image, missing or invalid config)."""
    running: bool
    """The main container runs on a live node and the pod is not being deleted."""
    pod_ready: bool
    logset: LogSetKey | None
    """A log store's own LogSet (its HAKeeper); None for other components."""
    hakeeper: tuple[LogSetKey, ...] | Unresolved
    """Where a TN, CN or proxy looks for the HAKeeper, in the order it tries."""
    bootstrap: Bootstrap | None = None
    volume_claims: tuple[str, ...] = ()
    """PersistentVolumeClaims the pod mounts (a log store keeps its data there)."""
    disks: frozenset[str] = frozenset()
    """The UIDs of those claims: which disks, not only which names, hold its data."""
    init_work_state: WorkState = WorkState.WORKING
    service_address: str = ""
    sql_address: str = ""
    lock_service_address: str = ""
    logtail_address: str = ""
    query_address: str = ""
    pod_ip: str = ""

    @property
    def key(self) -> Key:
        return self.namespace, self.pod

    @property
    def serving(self) -> bool:
        """The process runs and does its job.

        A log store also needs its pod Ready: that is how a test (a never-ready rule, a
        node marked unreachable) takes a log store away without deleting its pod.
        """
        ok = self.running and self.problem is None and self.uuid is not None
        return ok and (self.pod_ready or self.component is not Component.LOG)


def _main_container(pod: Mapping[str, Any]) -> Mapping[str, Any]:
    containers = (pod.get("spec") or {}).get("containers") or [{}]
    return next((c for c in containers if c.get("name") == layout.MAIN_CONTAINER), containers[0])


def _env(container: Mapping[str, Any], name: str) -> str | None:
    for item in container.get("env") or []:
        if item.get("name") == name:
            return str(item.get("value") or "")
    return None


def _condition_true(pod: Mapping[str, Any], ctype: str) -> bool:
    conditions = (pod.get("status") or {}).get("conditions") or []
    return any(c.get("type") == ctype and c.get("status") == "True" for c in conditions)


def _main_status(pod: Mapping[str, Any]) -> Mapping[str, Any]:
    name = _main_container(pod).get("name")
    statuses = (pod.get("status") or {}).get("containerStatuses") or []
    return next((s for s in statuses if s.get("name") == name), {})


def _running(pod: Mapping[str, Any], view: Snapshot) -> bool:
    if (pod.get("metadata") or {}).get("deletionTimestamp"):
        return False
    if "running" not in (_main_status(pod).get("state") or {}):
        return False
    node = view.node(str((pod.get("spec") or {}).get("nodeName") or ""))
    return node is not None and _condition_true(node, "Ready")


def _headless(pod: Mapping[str, Any], component: Component, set_name: str) -> str:
    return _env(_main_container(pod), layout.ENV_HEADLESS_SERVICE) or names.headless_service_name(
        component, set_name
    )


def _uuid(pod: Mapping[str, Any], component: Component, set_name: str, namespace: str) -> str | None:
    """The store UUID start.sh would compute for this pod (see identity.py)."""
    name = key_of(pod)[1]
    fqdn = names.pod_fqdn(name, _headless(pod, component, set_name), namespace)
    hostname_uuid = _env(_main_container(pod), layout.ENV_HOSTNAME_UUID) is not None
    if component in (Component.LOG, Component.TN) and not hostname_uuid:
        ordinal = names.pod_ordinal(name)
        if ordinal is None:
            return None
        return (
            identity.log_store_uuid(ordinal)
            if component is Component.LOG
            else identity.tn_store_uuid(ordinal)
        )
    if component in (Component.LOG, Component.TN, Component.CN):
        return identity.dns_store_uuid(fqdn)
    if component is Component.PROXY:
        return identity.proxy_uuid(name, namespace)
    return None


def _addresses(pod: Mapping[str, Any], component: Component, set_name: str, namespace: str) -> dict[str, str]:
    fqdn = names.pod_fqdn(key_of(pod)[1], _headless(pod, component, set_name), namespace)
    ip = str((pod.get("status") or {}).get("podIP") or "")
    if component is Component.LOG:
        return {"service_address": f"{fqdn}:{ports.LOG_SERVICE}"}
    if component is Component.TN:
        return {
            "service_address": f"{fqdn}:{ports.TN_SERVICE}",
            "lock_service_address": f"{fqdn}:{ports.TN_LOCK_SERVICE}",
            "logtail_address": f"{fqdn}:{ports.TN_LOGTAIL}",
        }
    if component is Component.CN:
        return {
            "service_address": f"{ip}:{ports.CN_RPC}",
            "sql_address": f"{ip}:{ports.CN_SQL}",
            "lock_service_address": f"{ip}:{ports.CN_LOCK_SERVICE}",
            "query_address": f"{ip}:{ports.CN_QUERY}",
        }
    return {}


def _volume_claims(pod: Mapping[str, Any]) -> tuple[str, ...]:
    volumes = (pod.get("spec") or {}).get("volumes") or []
    return tuple(
        str(v["persistentVolumeClaim"].get("claimName") or "")
        for v in volumes
        if isinstance(v.get("persistentVolumeClaim"), Mapping)
    )


def _process(pod: Mapping[str, Any]) -> str:
    uid = str((pod.get("metadata") or {}).get("uid") or "")
    return f"{uid}/{_main_status(pod).get('restartCount', 0)}"


def observe_instance(
    pod: Mapping[str, Any], view: Snapshot, bad_images: Collection[str] = ()
) -> Instance | None:
    """The instance in ``pod``; None if the pod runs no MatrixOne component.

    ``bad_images`` are shell globs: a main container whose image matches one never
    works (as a broken build would), whatever its config.
    """
    found = observe_with_client(pod, view, bad_images)
    return found[0] if found is not None else None


def observe_with_client(
    pod: Mapping[str, Any], view: Snapshot, bad_images: Collection[str] = ()
) -> tuple[Instance, HAKeeperClient | None] | None:
    """``observe_instance``, with the ``[hakeeper-client]`` its config has: where
    the instance looks, which an ``InstanceTracker`` must watch for changes."""
    component = mo_component(pod)
    if component is None:
        return None
    namespace, name = key_of(pod)
    set_name = labels_of(pod)[labels.INSTANCE]
    image = str(_main_container(pod).get("image") or "")
    problem: Problem | None = None
    config = ProcessConfig()
    if any(fnmatch.fnmatchcase(image, glob) for glob in bad_images):
        problem = Problem("BadImage", f"image {image} is marked bad")
    else:
        read = read_config(component, pod, namespace, view)
        if isinstance(read, Problem):
            problem = read
        else:
            config = read
    uuid = _uuid(pod, component, set_name, namespace)
    if uuid is None and component is not Component.WEBUI and problem is None:
        problem = Problem("NoIdentity", f"pod name {name!r} has no ordinal to derive a store UUID from")
    hakeeper: tuple[LogSetKey, ...] | Unresolved = ()
    if config.hakeeper is not None:
        hakeeper = resolve_client(config.hakeeper, namespace, view)
    instance = Instance(
        namespace=namespace,
        pod=name,
        uid=str((pod.get("metadata") or {}).get("uid") or ""),
        component=component,
        set_name=set_name,
        process=_process(pod),
        uuid=uuid,
        problem=problem,
        running=_running(pod, view),
        pod_ready=_condition_true(pod, "Ready"),
        logset=(namespace, set_name) if component is Component.LOG else None,
        hakeeper=hakeeper,
        bootstrap=config.bootstrap,
        volume_claims=_volume_claims(pod),
        disks=frozenset(uid for c in _volume_claims(pod) if (uid := view.claim_uids.get((namespace, c)))),
        init_work_state=config.init_work_state,
        pod_ip=str((pod.get("status") or {}).get("podIP") or ""),
        **_addresses(pod, component, set_name, namespace),
    )
    return instance, config.hakeeper


def observe_instances(view: Snapshot, bad_images: Collection[str] = ()) -> list[Instance]:
    """Every MatrixOne instance in the snapshot."""
    found = (observe_instance(pod, view, bad_images) for pod in view.pods.values())
    return [i for i in found if i is not None]
