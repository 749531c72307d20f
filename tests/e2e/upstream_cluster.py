"""A MatrixOne cluster as the Go operator leaves it: OpenKruise workloads, no Kruise controller.

What the Go operator makes that the takeover must cope with, per set
(UPSTREAM.md, pkg/controllers/*): an Advanced StatefulSet
(``apps.kruise.io/v1beta1``) ``mo-log`` / ``mo-dn`` or a CloneSet
(``apps.kruise.io/v1alpha1``) ``mo-tp-cn`` / ``mo-proxy``, owned by the set,
whose pods it controls; StatefulSet pods keep their ordinal names and claims
``mo-data-mo-log-<i>``, CloneSet pods have a random five-letter suffix; every
pod carries Kruise's ``controller-revision-hash`` and, for the 1.3 config
scheme, the ``matrixorigin.io/config-suffix`` annotation and a ConfigMap
``<set>-<c>-config`` of the Go operator's naming; CN pods keep upstream's
``matrixorigin.io/cn-draining`` finalizer and ``matrixone.cloud/cn-uuid``
label. The Kruise CRDs are OpenKruise v1.4.0's own (tests/e2e/data), the
version the Go operator's kruise-api dependency pins.

How it is built: our operator first creates the cluster (the MatrixOne
objects, Services, Secret, BucketClaim, claims and the bootstrapped
HAKeeper are the same objects under the same names as upstream's), then
stops; every workload is then handed to Kruise objects and every pod is
replaced, one at a time with the log quorum kept, by a pod of the Go
operator's shape, created directly (no controller of ours runs them; the
simulated kubelet runs any pod bound to its nodes). Two known differences
from a real Go-operator pod: the container spec is ours (the simulated
process reads the same TOML either way), and the TOML sits under its plain
file name rather than ``config.toml-<suffix>`` (the simulated process does
not run upstream's start.sh, which picks the suffixed key).
"""

from __future__ import annotations

import copy
import hashlib
import random
import string
from pathlib import Path
from typing import Any

import yaml

from mo_operator.api.install import CRDS
from mo_operator.controllers.cnset import pods as cnpods
from mo_operator.controllers.common import resources as r
from mo_operator.controllers.common.configmaps import CONFIG_HASH_LABEL
from mo_operator.kube.conditions import is_true
from mo_operator.kube.resource import Resource
from mo_operator.matrixone import identity, labels, layout, names
from mo_operator.matrixone.admin import WorkState
from mo_operator.matrixone.component import Component

from .harness import OperatorRunner, World, eventually

Obj = dict[str, Any]
DATA = Path(__file__).parent / "data"
KRUISE_STATEFULSETS = Resource("apps.kruise.io", "v1beta1", "StatefulSet", "statefulsets", True)
CLONESETS = Resource("apps.kruise.io", "v1alpha1", "CloneSet", "clonesets", True)
CONTROLLER_REVISIONS = Resource("apps", "v1", "ControllerRevision", "controllerrevisions", True)
REPLICA_SETS = Resource("apps", "v1", "ReplicaSet", "replicasets", True)
REVISION = "controller-revision-hash"
SETS = ((Component.LOG, "mo"), (Component.TN, "mo"), (Component.CN, "mo-tp"), (Component.PROXY, "mo"))
_OURS_ONLY_LABELS = (
    REVISION,
    "pod-template-hash",
    "statefulset.kubernetes.io/pod-name",
    cnpods.TEMPLATE_HASH,
)
_OURS_ONLY_ANNOTATIONS = (cnpods.HAKEEPER_ANNOTATION, cnpods.LOGSET_ANNOTATION)


def cluster_manifest(world: World, **spec: Any) -> Obj:
    """Three log stores, one TN, two CNs that drain when they go, one proxy."""
    group = {"name": "tp", "replicas": 2, "scalingConfig": {"storeDrainEnabled": True, "minDelaySeconds": 0}}
    return world.cluster_manifest("mo", proxy={"replicas": 1}, cnGroups=[group], **spec)


async def install_kruise_crds(world: World) -> None:
    """OpenKruise's CRDs for Advanced StatefulSet and CloneSet (definitions only)."""
    names_ = []
    for path in sorted(DATA.glob("apps.kruise.io_*.yaml")):
        crd = yaml.safe_load(path.read_text())
        crd.get("metadata", {}).pop("annotations", None)
        names_.append(crd["metadata"]["name"])
        await world.client.apply(crd, resource=CRDS, force=True)

    async def established() -> bool:
        for name in names_:
            crd = await world.client.get(CRDS, name)
            if not is_true((crd.get("status") or {}).get("conditions"), "Established"):
                return False
        return True

    await eventually(established, timeout=60, message="the Kruise CRDs are established")


async def build(world: World, runner: OperatorRunner, **spec: Any) -> None:
    """The cluster, as the Go operator would have left it; no operator runs afterwards."""
    await runner.start()
    await world.apply(cluster_manifest(world, **spec))
    await world.wait_settled(r.MATRIXONE_CLUSTERS, "mo", timeout=120)
    await runner.stop()
    await install_kruise_crds(world)
    for component, set_name in SETS:
        await _hand_to_kruise(world, component, set_name)
    for component, set_name in SETS:
        await _upstream_status(world, component, set_name)


def _selector(component: Component, set_name: str, world: World) -> dict[str, str]:
    return labels.sub_resource_labels(component, set_name, world.namespace)


async def _set_pods(world: World, component: Component, set_name: str) -> list[Obj]:
    pods = await world.pods(**_selector(component, set_name, world))
    return sorted(
        (p for p in pods if not p["metadata"].get("deletionTimestamp")), key=lambda p: p["metadata"]["name"]
    )


async def _hand_to_kruise(world: World, component: Component, set_name: str) -> None:
    owner = await world.get(_set_resource(component), set_name)
    assert owner is not None
    pods = await _set_pods(world, component, set_name)
    config_map, suffix = await _upstream_config_map(world, component, set_name, owner, pods[0])
    workload = await _kruise_workload(world, component, set_name, owner, pods, config_map)
    revision = f"{workload['metadata']['name']}-{_digest(workload['spec'])[:10]}"
    await _release_ours(world, component, set_name)
    shape = _PodShape(workload, revision, config_map, suffix)
    if component in (Component.LOG, Component.TN):
        for pod in reversed(pods):  # one store at a time, highest ordinal first: quorum kept
            await _replace_in_place(world, component, set_name, pod, shape)
    else:
        for pod in pods:  # a new pod first, then the old one goes
            await _replace_surging(world, component, set_name, pod, shape)
    await world.client.patch_status(
        CLONESETS if workload["kind"] == "CloneSet" else KRUISE_STATEFULSETS,
        workload["metadata"]["name"],
        {"status": _workload_status(workload, len(pods), revision)},
        world.namespace,
    )


def _set_resource(component: Component) -> Resource:
    return {
        Component.LOG: r.LOGSETS,
        Component.TN: r.DNSETS,
        Component.CN: r.CNSETS,
        Component.PROXY: r.PROXYSETS,
    }[component]


def _digest(value: object) -> str:
    return hashlib.sha256(repr(value).encode()).hexdigest()


async def _upstream_config_map(
    world: World, component: Component, set_name: str, owner: Obj, pod: Obj
) -> tuple[str, str]:
    """``<set>-<c>-config`` (the Go operator's name under operatorVersion 1.3) holding what ours holds."""
    ours = next(v["configMap"]["name"] for v in pod["spec"]["volumes"] if v["name"] == layout.CONFIG_VOLUME)
    source = await world.get(r.CONFIGMAPS, ours)
    assert source is not None
    name = names.config_map_base_name(component, set_name)
    obj_labels = {k: v for k, v in source["metadata"]["labels"].items() if k != CONFIG_HASH_LABEL}
    meta = {"name": name, "namespace": world.namespace, "labels": obj_labels}
    meta["ownerReferences"] = source["metadata"]["ownerReferences"]
    await world.client.create(
        r.CONFIGMAPS, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": source["data"]}
    )
    return name, _digest(source["data"])[:7]


async def _kruise_workload(
    world: World, component: Component, set_name: str, owner: Obj, pods: list[Obj], config_map: str
) -> Obj:
    name = names.workload_name(component, set_name)
    selector = _selector(component, set_name, world)
    template = {
        "metadata": {
            "labels": {k: v for k, v in pods[0]["metadata"]["labels"].items() if k not in _OURS_ONLY_LABELS}
        }
    }
    template["spec"] = _with_config(pods[0]["spec"], config_map)
    for key in ("nodeName", "hostname"):
        template["spec"].pop(key, None)
    spec: Obj = {"replicas": len(pods), "selector": {"matchLabels": selector}, "template": template}
    ref = {
        "apiVersion": owner["apiVersion"],
        "kind": owner["kind"],
        "name": set_name,
        "uid": owner["metadata"]["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }
    meta = {"name": name, "namespace": world.namespace, "labels": dict(selector), "ownerReferences": [ref]}
    if component in (Component.LOG, Component.TN):
        ours = await world.get(r.STATEFULSETS, name)
        assert ours is not None
        spec.update(
            serviceName=ours["spec"]["serviceName"],
            podManagementPolicy="Parallel",
            updateStrategy={
                "type": "RollingUpdate",
                "rollingUpdate": {"podUpdatePolicy": "InPlaceIfPossible"},
            },
            volumeClaimTemplates=ours["spec"].get("volumeClaimTemplates") or [],
        )
        body = {"apiVersion": "apps.kruise.io/v1beta1", "kind": "StatefulSet", "metadata": meta, "spec": spec}
        return await world.client.create(KRUISE_STATEFULSETS, body)
    spec["updateStrategy"] = {"type": "InPlaceIfPossible", "maxSurge": 1, "maxUnavailable": 0}
    body = {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "metadata": meta, "spec": spec}
    return await world.client.create(CLONESETS, body)


def _with_config(spec: Obj, config_map: str) -> Obj:
    spec = copy.deepcopy(spec)
    for volume in spec.get("volumes") or ():
        if volume["name"] == layout.CONFIG_VOLUME:
            volume["configMap"]["name"] = config_map
    return spec


async def _release_ours(world: World, component: Component, set_name: str) -> None:
    """Our workload goes (its pods stay, released), as if it had never been made."""
    name = names.workload_name(component, set_name)
    if component in (Component.LOG, Component.TN):
        await world.client.delete(r.STATEFULSETS, name, world.namespace, propagation_policy="Orphan")
    elif component is Component.PROXY:
        await world.client.delete(r.DEPLOYMENTS, name, world.namespace, propagation_policy="Orphan")
        await eventually(lambda: _gone(world, r.DEPLOYMENTS, name), message=f"Deployment {name} gone")
        for rs in await world.list(REPLICA_SETS, **_selector(component, set_name, world)):
            await world.client.delete(
                REPLICA_SETS, rs["metadata"]["name"], world.namespace, propagation_policy="Orphan"
            )

    async def released() -> bool:
        pods = await _set_pods(world, component, set_name)
        if component is Component.CN:
            return True
        return all(not p["metadata"].get("ownerReferences") for p in pods)

    await eventually(released, timeout=60, message=f"{set_name} {component.kind} pods released")
    for rev in await world.list(CONTROLLER_REVISIONS, **_selector(component, set_name, world)):
        await world.client.delete(
            CONTROLLER_REVISIONS, rev["metadata"]["name"], world.namespace, missing_ok=True
        )


async def _gone(world: World, res: Resource, name: str) -> bool:
    return await world.get(res, name) is None


class _PodShape:
    """How the Go operator's pods of one workload look."""

    def __init__(self, workload: Obj, revision: str, config_map: str, suffix: str) -> None:
        self.workload = workload
        self.revision = revision
        self.config_map = config_map
        self.suffix = suffix

    def pod(self, source: Obj, name: str, component: Component, set_name: str, namespace: str) -> Obj:
        meta = source["metadata"]
        pod_labels = {k: v for k, v in (meta.get("labels") or {}).items() if k not in _OURS_ONLY_LABELS}
        pod_labels[REVISION] = self.revision
        annotations = {
            k: v for k, v in (meta.get("annotations") or {}).items() if k not in _OURS_ONLY_ANNOTATIONS
        }
        annotations[labels.CONFIG_SUFFIX] = self.suffix
        if component is Component.CN:
            pod_labels[labels.CN_UUID] = identity.cn_store_uuid(name, set_name, namespace)
        elif component is not Component.PROXY:
            pod_labels["statefulset.kubernetes.io/pod-name"] = name
        spec = _with_config(source["spec"], self.config_map)
        spec.pop("nodeName", None)
        if component in (Component.CN, Component.LOG, Component.TN):
            spec["hostname"] = name
        else:
            spec.pop("hostname", None)
        wl = self.workload
        ref = {
            "apiVersion": wl["apiVersion"],
            "kind": wl["kind"],
            "name": wl["metadata"]["name"],
            "uid": wl["metadata"]["uid"],
            "controller": True,
            "blockOwnerDeletion": True,
        }
        new_meta: Obj = {
            "name": name,
            "namespace": namespace,
            "labels": pod_labels,
            "annotations": annotations,
            "ownerReferences": [ref],
        }
        if meta.get("finalizers"):
            new_meta["finalizers"] = list(meta["finalizers"])
        return {"apiVersion": "v1", "kind": "Pod", "metadata": new_meta, "spec": spec}


async def _delete_pod(world: World, pod: Obj) -> None:
    """Delete ``pod`` as the Go operator's controllers would let it go (no finalizer of ours holds it)."""
    name = pod["metadata"]["name"]
    if pod["metadata"].get("finalizers"):
        await world.client.patch(r.PODS, name, {"metadata": {"finalizers": None}}, world.namespace)
    await world.client.delete(r.PODS, name, world.namespace, uid=pod["metadata"]["uid"], missing_ok=True)

    async def gone() -> bool:
        now = await world.get(r.PODS, name)
        return now is None or now["metadata"]["uid"] != pod["metadata"]["uid"]

    await eventually(gone, timeout=60, message=f"pod {name} gone")


async def _replace_in_place(
    world: World, component: Component, set_name: str, pod: Obj, shape: _PodShape
) -> None:
    name = pod["metadata"]["name"]
    await _delete_pod(world, pod)
    await world.client.create(r.PODS, shape.pod(pod, name, component, set_name, world.namespace))
    await _wait_pod_ready(world, name)


async def _replace_surging(
    world: World, component: Component, set_name: str, pod: Obj, shape: _PodShape
) -> None:
    suffix = "".join(random.choices(string.ascii_lowercase + string.digits, k=5))
    name = f"{names.workload_name(component, set_name)}-{suffix}"
    await world.client.create(r.PODS, shape.pod(pod, name, component, set_name, world.namespace))
    if component is Component.CN:
        await _cn_to_work(world, name, set_name)
    await _wait_pod_ready(world, name)
    await _delete_pod(world, pod)


async def _cn_to_work(world: World, pod_name: str, set_name: str) -> None:
    """What the Go operator's cnstore controller does for a new CN: once its store registered,
    set it Working in HAKeeper and the pod's ``matrixorigin.io/cn-store`` condition True."""
    uuid = identity.cn_store_uuid(pod_name, set_name, world.namespace)
    mo = world.cluster.mo
    assert mo is not None

    def registered() -> bool:
        keeper = mo.hakeeper(world.namespace, "mo")
        return keeper is not None and uuid in keeper.stores[Component.CN]

    await eventually(registered, timeout=60, message=f"CN {pod_name} registered")
    admin = world.cluster.provider.admin(names.discovery_address("mo", world.namespace))
    await admin.set_cn_work_state(uuid, WorkState.WORKING)
    pod = await world.get(r.PODS, pod_name)
    assert pod is not None
    conditions = [
        c for c in (pod.get("status") or {}).get("conditions") or () if c["type"] != labels.CN_STORE_READINESS
    ]
    conditions.append({"type": labels.CN_STORE_READINESS, "status": "True"})
    await world.client.patch(
        r.PODS, pod_name, {"status": {"conditions": conditions}}, world.namespace, subresource="status"
    )


async def _wait_pod_ready(world: World, name: str) -> None:
    async def ready() -> bool:
        pod = await world.get(r.PODS, name)
        return pod is not None and is_true((pod.get("status") or {}).get("conditions"), "Ready")

    await eventually(ready, timeout=60, message=f"pod {name} Ready")


def _workload_status(workload: Obj, replicas: int, revision: str) -> Obj:
    status = {
        "observedGeneration": workload["metadata"].get("generation") or 1,
        "replicas": replicas,
        "readyReplicas": replicas,
        "availableReplicas": replicas,
        "updatedReplicas": replicas,
        "updatedReadyReplicas": replicas,
        "currentRevision": revision,
        "updateRevision": revision,
    }
    if workload["kind"] == "StatefulSet":
        status["currentReplicas"] = replicas
    return status


async def _upstream_status(world: World, component: Component, set_name: str) -> None:
    """Only the conditions the Go operator writes (Ready, Synced)."""
    res = _set_resource(component)
    obj = await world.get(res, set_name)
    assert obj is not None
    conditions = [
        c for c in (obj.get("status") or {}).get("conditions") or () if c["type"] in ("Ready", "Synced")
    ]
    await world.client.patch_status(res, set_name, {"status": {"conditions": conditions}}, world.namespace)
