"""Carrying out a takeover, set by set, in dependency order.

For each set the Go operator's Kruise workload runs:

1. the workload is deleted with ``propagationPolicy: Orphan``: the garbage
   collector clears the pods' controller references and leaves pods and
   claims running; from then on the set's controller (``guard.py``) stops
   waiting and reconciles the set as its own;
2. our workload takes the pods over and rolls them with the roll every
   change uses: a StatefulSet (log service, TN) adopts the pods and the
   claims of the same names and replaces one pod at a time, each Ready
   (its store serving) before the next; the CNSet surges a new CN, then
   drains an old one in HAKeeper before removing it; the proxy's
   Deployment starts its pods and the old ones go one at a time once it is
   available. This step waits for that roll to finish before the next set
   starts, so the log service is settled before TN rolls, and so on;
3. the Go operator's ConfigMaps of the set that no pod mounts are deleted.

Every step reads the current state first, so running the command again
after it was interrupted (or killed) resumes where it stopped: a set
released earlier is waited for again, so the order holds across runs.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Mapping
from typing import Any

from mo_operator.kube.client import ApiClient
from mo_operator.matrixone import names
from mo_operator.matrixone.component import Component

from ..cnset import pods as cnpods
from ..common import pods as podutil
from ..common import resources as r
from ..common.configmaps import CONFIG_HASH_LABEL
from ..common.meta import is_deleting, name_of
from .kruise import SET_KINDS, kruise_controller
from .preflight import SetPlan
from .survey import has_controller, kruise_workload, pod_selector, set_pods

Obj = dict[str, Any]
Report = Callable[[str], None]
POLL_SECONDS = 0.2
_LEGACY_SUFFIX = re.compile(r"-[0-9a-f]{7}")


class TakeoverTimeout(Exception):
    """A set did not reach the state a step waits for in time."""


async def take_over(
    client: ApiClient, namespace: str, plans: list[SetPlan], *, timeout: float, report: Report
) -> None:
    """Take every planned set over, one after the other (plans in dependency order)."""
    for plan in plans:
        await take_over_set(client, namespace, plan, timeout=timeout, report=report)


async def take_over_set(
    client: ApiClient, namespace: str, plan: SetPlan, *, timeout: float, report: Report
) -> None:
    component, name = plan.component, plan.name
    workload = await kruise_workload(client, component, name, namespace)
    if workload is not None:
        report(f"{plan.kind} {name}: releasing {plan.workload} (orphan)")
        await client.delete(
            SET_KINDS[component].workload,
            name_of(workload),
            namespace,
            propagation_policy="Orphan",
            uid=workload["metadata"]["uid"],
            missing_ok=True,
        )
    pods = await _wait(
        lambda: _released(client, component, name, namespace), timeout, f"{name}: pods released"
    )
    if component is Component.CN:
        await _record_hakeeper(client, name, namespace, pods)
    report(f"{plan.kind} {name}: waiting for its pods to run under our workload")
    if component is Component.PROXY:
        await _retire_proxy_orphans(client, name, namespace, timeout, report)
    else:
        await _wait(lambda: _settled(client, component, name, namespace), timeout, f"{name}: taken over")
    await collect_config_maps(client, component, name, namespace, report)
    report(f"{plan.kind} {name}: taken over")


async def _wait(check: Callable[[], Any], timeout: float, what: str) -> Any:
    try:
        async with asyncio.timeout(timeout):
            while True:
                found = await check()
                if found:
                    return found
                await asyncio.sleep(POLL_SECONDS)
    except TimeoutError:
        raise TakeoverTimeout(f"not done after {timeout:.0f}s: {what}") from None


async def _released(client: ApiClient, component: Component, name: str, namespace: str) -> list[Obj] | None:
    """The set's pods, once no Kruise workload (nor the garbage collector's orphaning) holds them."""
    if await kruise_workload(client, component, name, namespace) is not None:
        return None
    pods = await set_pods(client, component, name, namespace)
    return None if any(kruise_controller(p) for p in pods) else (pods or [{}])


async def _record_hakeeper(client: ApiClient, name: str, namespace: str, pods: list[Obj]) -> None:
    """Tell the released CN pods where their store is registered, so that their
    ``matrixorigin.io/cn-draining`` finalizer (upstream's, kept) deletes the store
    from HAKeeper when they go, as the Go operator would have."""
    cnset = await client.get(r.CNSETS, name, namespace)
    logset = ((cnset.get("spec") or {}).get("deps") or {}).get("logSet") or {}
    if not logset.get("name"):
        return
    ls_ns = logset.get("namespace") or namespace
    annotations = {
        cnpods.HAKEEPER_ANNOTATION: names.discovery_address(logset["name"], ls_ns),
        cnpods.LOGSET_ANNOTATION: f"{ls_ns}/{logset['name']}",
    }
    for pod in pods:
        current = (pod.get("metadata") or {}).get("annotations") or {}
        if pod and not has_controller(pod) and any(current.get(k) != v for k, v in annotations.items()):
            await client.patch(r.PODS, name_of(pod), {"metadata": {"annotations": annotations}}, namespace)


async def _settled(client: ApiClient, component: Component, name: str, namespace: str) -> bool:
    """The set's pods all belong to our workload, run its current template and are
    ready, and the old ones are gone (so their ConfigMaps are no longer mounted)."""
    obj = await client.get(SET_KINDS[component].sets, name, namespace)
    replicas = int((obj.get("spec") or {}).get("replicas") or 0)
    every = await set_pods(client, component, name, namespace)
    if not all(has_controller(p) for p in every):  # an old pod still running, or still going
        return False
    pods = [p for p in every if not is_deleting(p)]
    if len(pods) != replicas or not all(podutil.is_ready(p) for p in pods):
        return False
    if component is Component.CN:
        return _condition_true(obj, "UpToDate")
    sts = await client.get_or_none(r.STATEFULSETS, names.workload_name(component, name), namespace)
    if sts is None:
        return False
    spec, status = sts.get("spec") or {}, sts.get("status") or {}
    return (
        int(status.get("observedGeneration") or 0) >= int(sts["metadata"].get("generation") or 0)
        and status.get("currentRevision") == status.get("updateRevision")
        and int(status.get("updatedReplicas") or 0) == int(spec.get("replicas") or 0) == replicas
        and int(status.get("readyReplicas") or 0) == replicas
    )


def _condition_true(obj: Mapping[str, Any], ctype: str) -> bool:
    generation = int(obj["metadata"].get("generation") or 0)
    return any(
        c.get("type") == ctype
        and c.get("status") == "True"
        and int(c.get("observedGeneration") or generation) >= generation
        for c in (obj.get("status") or {}).get("conditions") or ()
    )


async def _retire_proxy_orphans(
    client: ApiClient, name: str, namespace: str, timeout: float, report: Report
) -> None:
    """Remove the old proxy pods one at a time, each only while our Deployment is
    fully available, so the proxy Service always has ready endpoints."""
    deployment = names.workload_name(Component.PROXY, name)
    while True:
        await _wait(
            lambda: _deployment_available(client, deployment, namespace), timeout, f"{deployment} available"
        )
        pods = await set_pods(client, Component.PROXY, name, namespace)
        orphans = sorted((p for p in pods if not has_controller(p) and not is_deleting(p)), key=name_of)
        if not orphans:
            return
        victim = orphans[0]
        report(f"ProxySet {name}: removing old pod {name_of(victim)}")
        await client.delete(
            r.PODS, name_of(victim), namespace, uid=victim["metadata"]["uid"], missing_ok=True
        )
        await _wait(
            lambda v=victim: _gone(client, name_of(v), namespace, v["metadata"]["uid"]),  # type: ignore[misc]
            timeout,
            f"pod {name_of(victim)} gone",
        )


async def _deployment_available(client: ApiClient, name: str, namespace: str) -> bool:
    dep = await client.get_or_none(r.DEPLOYMENTS, name, namespace)
    if dep is None:
        return False
    replicas = int((dep.get("spec") or {}).get("replicas") or 0)
    status = dep.get("status") or {}
    return (
        int(status.get("observedGeneration") or 0) >= int(dep["metadata"].get("generation") or 0)
        and int(status.get("updatedReplicas") or 0) == replicas
        and int(status.get("availableReplicas") or 0) >= replicas
    )


async def _gone(client: ApiClient, name: str, namespace: str, uid: str) -> bool:
    pod = await client.get_or_none(r.PODS, name, namespace)
    return pod is None or pod["metadata"].get("uid") != uid


def go_operator_config_maps(
    component: Component, set_name: str, config_maps: list[Obj], pods: list[Obj]
) -> list[Obj]:
    """The Go operator's config ConfigMaps of a set that no pod mounts: ``<set>-<c>-config``
    (operator 1.3 and later) and ``<set>-<c>-config-<7 hex>`` (earlier); ours carry the
    config-base label and are collected by the set's controller."""
    base = names.config_map_base_name(component, set_name)
    mounted = {
        str(v["configMap"].get("name"))
        for p in pods
        for v in (p.get("spec") or {}).get("volumes") or ()
        if isinstance(v.get("configMap"), Mapping)
    }
    return [
        cm
        for cm in config_maps
        if CONFIG_HASH_LABEL not in (cm["metadata"].get("labels") or {})
        and (name_of(cm) == base or _is_legacy_name(name_of(cm), base))
        and name_of(cm) not in mounted
        and not is_deleting(cm)
    ]


def _is_legacy_name(name: str, base: str) -> bool:
    return name.startswith(base) and _LEGACY_SUFFIX.fullmatch(name[len(base) :]) is not None


async def collect_config_maps(
    client: ApiClient, component: Component, name: str, namespace: str, report: Report
) -> None:
    selector = pod_selector(component, name, namespace)
    config_maps = list((await client.list(r.CONFIGMAPS, namespace, label_selector=selector)).items)
    pods = list((await client.list(r.PODS, namespace)).items)
    for cm in go_operator_config_maps(component, name, config_maps, pods):
        report(f"{component.kind} {name}: deleting the Go operator's ConfigMap {name_of(cm)}")
        await client.delete(r.CONFIGMAPS, name_of(cm), namespace, uid=cm["metadata"]["uid"], missing_ok=True)
