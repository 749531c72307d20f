"""A MatrixOne cluster as the Go operator leaves it: OpenKruise workloads, no Kruise controller.

What the Go operator makes that the takeover must cope with, per set
(UPSTREAM.md, matrixone-operator ``pkg/controllers/*``): an Advanced StatefulSet
(``apps.kruise.io/v1beta1``) ``mo-log`` / ``mo-dn`` or a CloneSet
(``apps.kruise.io/v1alpha1``) ``mo-tp-cn`` / ``mo-proxy``, owned by the set,
whose pods it controls; StatefulSet pods keep their ordinal names and claims
``mo-data-mo-log-<i>``, CloneSet pods have a random five-letter suffix. Pods,
workload templates and config ConfigMaps are upstream's own shape
(``upstream_shapes.py``): container ``main`` running ``/bin/sh <config
dir>/start.sh`` (upstream's script, ``data/upstream-start``), upstream's env
(``CONFIG_SUFFIX`` from the ``matrixorigin.io/config-suffix`` annotation),
mounts, volumes and readiness gates (Kruise's, and ``matrixorigin.io/cn-store``
for CNs), Kruise's labels (``controller-revision-hash``, the CloneSet instance
id and lifecycle state) and conditions; one ConfigMap ``<set>-<c>-config`` per
set holding ``start.sh`` and ``<toml>-<suffix>``; CN pods carry upstream's
finalizers (``matrixorigin.io/cnstore``, ``matrixorigin.io/cn-draining``), the
``matrixone.cloud/cn-uuid`` label and ``matrixorigin.io/cn-state``. The
BucketClaim is upstream's: its finalizers (``matrixorigin.io/BucketClaim``,
``matrixorigin.io/bucket-data-finalizer`` and one per TN and CN set), binding in
``status.bindTo``, no label or annotation of ours. The Kruise CRDs are
OpenKruise v1.4.0's own (``data``), the version the Go operator's kruise-api
dependency pins.

How it is built: our operator first creates the cluster (the MatrixOne
objects, Services, Secret, claims and the bootstrapped HAKeeper are the same
objects under the same names as upstream's), then stops; every workload is
then handed to Kruise objects and every pod is replaced, one at a time with
the log quorum kept, by a pod of the Go operator's shape, created directly (no
controller of ours runs them; the simulated kubelet runs any pod bound to its
nodes, and the simulated MatrixOne reads the suffixed TOML as upstream's
start.sh does). What stays ours: the MatrixOne objects' specs and the
ConfigMaps ``<ls>-log-bootstrap`` / ``<ls>-log-gossip`` and Services, which
upstream names and fills the same way; Kruise's in-place update machinery is
not simulated (no Kruise controller runs during a takeover either).
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import random
import re
import string
from pathlib import Path
from typing import Any

import yaml

from mo_operator.api.install import CRDS
from mo_operator.controllers.framework import resources as r
from mo_operator.kube.client.resource import Resource
from mo_operator.kube.meta.conditions import is_true
from mo_operator.kube.meta.errors import ApiError
from mo_operator.matrixone import buckets, identity, labels, names
from mo_operator.matrixone import reserved as reserved_ordinals
from mo_operator.matrixone.admin import WorkState
from mo_operator.matrixone.component import Component
from mo_operator.matrixone.rpc.provider import RpcAdminProvider

from . import upstream_shapes as shapes
from .harness import GROUP_VERSION, OperatorRunner, World, eventually

Obj = dict[str, Any]
DATA = Path(__file__).parent / "data"
KRUISE_STATEFULSETS = Resource("apps.kruise.io", "v1beta1", "StatefulSet", "statefulsets", True)
CLONESETS = Resource("apps.kruise.io", "v1alpha1", "CloneSet", "clonesets", True)
CONTROLLER_REVISIONS = Resource("apps", "v1", "ControllerRevision", "controllerrevisions", True)
REPLICA_SETS = Resource("apps", "v1", "ReplicaSet", "replicasets", True)
REVISION = "controller-revision-hash"
SETS = ((Component.LOG, "mo"), (Component.TN, "mo"), (Component.CN, "mo-tp"), (Component.PROXY, "mo"))
CLONESET_INSTANCE_ID = "apps.kruise.io/cloneset-instance-id"  # kruise-api apps/v1alpha1
KRUISE_LIFECYCLE_STATE = "lifecycle.apps.kruise.io/state"  # kruise-api apps/pub
UPSTREAM_CN_POD_FINALIZERS = ("matrixorigin.io/cnstore", labels.CN_DRAINING_FINALIZER)
"""On every CN pod: the cnstore controller's own (matrixorigin controller-runtime
reconciler.go ``matrixorigin.io/<name>``) and its draining hook's (common/cnstore.go)."""
BUCKET_CLAIM_FINALIZER = "matrixorigin.io/BucketClaim"  # bucketclaim/controller.go, recon's finalizer
BUCKET_SET_FINALIZER_PREFIXES = {Component.TN: "matrixorigin.io/DN", Component.CN: "matrixorigin.io/CN"}
"""api/core/v1alpha1/bucketclaim_helpers.go; dnset and cnset controller.go add one each."""


def cluster_manifest(world: World, **spec: Any) -> Obj:
    """Three log stores, one TN, two CNs that drain when they go, one proxy."""
    group = {"name": "tp", "replicas": 2, "scalingConfig": {"storeDrainEnabled": True, "minDelaySeconds": 0}}
    return world.cluster_manifest("mo", proxy={"replicas": 1}, cnGroups=[group], **spec)


async def install_kruise_crds(world: World) -> None:
    """OpenKruise's CRDs for Advanced StatefulSet and CloneSet (definitions only); on a
    shared cluster that did not have them, removed at the session's end."""
    names_ = []
    for path in sorted(DATA.glob("apps.kruise.io_*.yaml")):
        crd = yaml.safe_load(path.read_text())
        crd.get("metadata", {}).pop("annotations", None)
        name = crd["metadata"]["name"]
        names_.append(name)
        if world.deletions is not None and await world.client.get_or_none(CRDS, name) is None:
            world.deletions.made_by_session(CRDS, name)
        await world.client.apply(crd, resource=CRDS, force=True)

    async def established() -> bool:
        for name in names_:
            crd = await world.client.get(CRDS, name)
            if not is_true((crd.get("status") or {}).get("conditions"), "Established"):
                return False
        return True

    await eventually(established, timeout=60, message="the Kruise CRDs are established")


async def build(
    world: World, runner: OperatorRunner, *, reserved: tuple[int, ...] = (), pool: bool = False, **spec: Any
) -> None:
    """The cluster, as the Go operator would have left it; no operator runs afterwards.

    With ``reserved``, its log failover replaced the stores at those ordinals by the
    next free ones, which its Advanced StatefulSet keeps in ``reserveOrdinals``. With
    ``pool``, a CNPool ``POOL`` of one idle CN beside it, whose CNClaim ``CLAIM`` holds
    another; the pool's CNSet runs them with a CloneSet."""
    await runner.start()
    await world.apply(cluster_manifest(world, **spec))
    await world.wait_settled(r.MATRIXONE_CLUSTERS, "mo", timeout=120)
    if reserved:
        await _fail_over(world, reserved)
    pool_set = await _pool(world) if pool else None
    await runner.stop()
    await install_kruise_crds(world)
    if reserved:  # the Go operator records them in its workload alone
        patch = {"metadata": {"annotations": {labels.LOGSET_RESERVED_ORDINALS: None}}}
        await world.client.patch(r.LOGSETS, "mo", patch, world.namespace)
    for component, set_name in SETS:
        await _hand_to_kruise(world, component, set_name, reserved if component is Component.LOG else ())
        await _delete_our_config_maps(world, component, set_name)
    if pool_set is not None:
        await _hand_pool_to_kruise(world, pool_set)
    for component, set_name in SETS if pool_set is None else (*SETS, (Component.CN, pool_set)):
        await _upstream_status(world, component, set_name)
    await _upstream_bucket_claim(world)


POOL = "pool"
CLAIM = "c1"


async def _pool(world: World) -> str:
    """A CNPool of one idle CN and a bound CNClaim (upstream's kinds, the same as ours);
    the name of the pool's CNSet."""
    group = await world.get(r.CNSETS, "mo-tp")
    assert group is not None
    spec = {"image": group["spec"]["image"], "scalingConfig": {"minDelaySeconds": 0}}
    template = world.for_cluster({"kind": "CNSet", "spec": spec})["spec"]
    pool = {
        "apiVersion": GROUP_VERSION,
        "kind": "CNPool",
        "metadata": {"name": POOL, "namespace": world.namespace},
        "spec": {
            "template": template,
            "podLabels": {"pool": POOL},
            "deps": {"logSet": {"metadata": {"name": "mo"}}},
            "strategy": {"updateStrategy": {}, "scaleStrategy": {"maxIdle": 1}},
        },
    }
    claim = {
        "apiVersion": GROUP_VERSION,
        "kind": "CNClaim",
        "metadata": {"name": CLAIM, "namespace": world.namespace},
        "spec": {"selector": {"matchLabels": {"pool": POOL}}, "cnLabels": [{"key": "role", "values": ["a"]}]},
    }
    await world.apply(pool)
    await world.wait_ready(r.CNPOOLS, POOL, timeout=60)
    await world.apply(claim)

    async def settled() -> bool:
        bound = await world.get(r.CNCLAIMS, CLAIM)
        if ((bound or {}).get("status") or {}).get("phase") != "Bound":
            return False
        phases = [
            p["metadata"]["labels"].get(labels.POOL_PHASE)
            for p in await world.pods(**{labels.POOL_NAME: POOL})
        ]
        return sorted(phases) == ["Bound", "Idle"]

    await eventually(settled, timeout=60, message="the claim is Bound and the pool holds one idle CN")
    sets = [s for s in await world.list(r.CNSETS) if s["spec"].get("podManagementPolicy") == labels.POOLING]
    assert len(sets) == 1, [s["metadata"]["name"] for s in sets]
    name = str(sets[0]["metadata"]["name"])
    await world.wait_settled(r.CNSETS, name, timeout=60)
    return name


async def _hand_pool_to_kruise(world: World, set_name: str) -> None:
    """The pool's CNSet as the Go operator runs it: a CloneSet controls its pods, which
    are the same pods (a bound CN holds its claim's sessions), with Kruise's labels."""
    owner = await world.get(r.CNSETS, set_name)
    logset = await world.get(r.LOGSETS, "mo")
    assert owner is not None and logset is not None
    pods = await _set_pods(world, Component.CN, set_name)
    config_map, suffix = shapes.config_map(Component.CN, owner, logset)
    await world.client.create(r.CONFIGMAPS, config_map)
    template = shapes.pod_template(Component.CN, owner, logset, config_map["metadata"]["name"], suffix)
    workload = await _kruise_workload(world, Component.CN, set_name, owner, len(pods), template)
    strategy = {**workload["spec"]["updateStrategy"], "type": "InPlaceOnly"}  # cnset/controller.go, Pooling
    wl = await world.client.patch(
        CLONESETS, workload["metadata"]["name"], {"spec": {"updateStrategy": strategy}}, world.namespace
    )
    revision = f"{wl['metadata']['name']}-{_digest(wl['spec'])[:10]}"
    ref = {
        "apiVersion": wl["apiVersion"],
        "kind": wl["kind"],
        "name": wl["metadata"]["name"],
        "uid": wl["metadata"]["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }
    for pod in pods:
        kruise_labels = {REVISION: revision, CLONESET_INSTANCE_ID: pod["metadata"]["name"].rsplit("-", 1)[1]}
        patch = {"metadata": {"ownerReferences": [ref], "labels": kruise_labels}}
        await world.client.patch(r.PODS, pod["metadata"]["name"], patch, world.namespace)
    await world.client.patch_status(
        CLONESETS,
        wl["metadata"]["name"],
        {"status": _workload_status(wl, len(pods), revision)},
        world.namespace,
    )


async def _fail_over(world: World, reserved: tuple[int, ...]) -> None:
    """Where upstream's failover leaves the log service: no store at the ``reserved``
    ordinals, their replacements at the next ones, members of the HAKeeper shard. Our
    operator moves the stores (the annotation a takeover writes); the HAKeeper repairs its
    membership onto the new store as it does after upstream's failover."""
    patch = {
        "metadata": {"annotations": {labels.LOGSET_RESERVED_ORDINALS: reserved_ordinals.encode(reserved)}}
    }
    await world.client.patch(r.LOGSETS, "mo", patch, world.namespace)
    live = reserved_ordinals.numbering(reserved, 3).live
    wanted = {names.pod_name(Component.LOG, "mo", o) for o in live}
    uuids = {identity.log_store_uuid(o) for o in live}
    mo = world.cluster.mo
    assert mo is not None

    async def moved() -> bool:
        pods = await _set_pods(world, Component.LOG, "mo")
        keeper = mo.hakeeper(world.namespace, "mo")
        return (
            {p["metadata"]["name"] for p in pods if is_true(p["status"].get("conditions"), "Ready")} == wanted
            and len(pods) == len(wanted)
            and keeper is not None
            and set(keeper.members) == uuids
        )

    await eventually(moved, timeout=60, message=f"the log stores moved past ordinals {list(reserved)}")
    await world.wait_settled(r.MATRIXONE_CLUSTERS, "mo", timeout=60)


async def _delete_our_config_maps(world: World, component: Component, set_name: str) -> None:
    """Our content-named ConfigMaps of the set, which no pod mounts any more (the Go operator has none)."""
    ours = re.compile(re.escape(names.config_map_base_name(component, set_name)) + r"-[0-9a-f]{10}")
    for cm in await world.list(r.CONFIGMAPS, **_selector(component, set_name, world)):
        if ours.fullmatch(cm["metadata"]["name"]):
            await world.client.delete(r.CONFIGMAPS, cm["metadata"]["name"], world.namespace, missing_ok=True)


def upstream_claim_finalizers(namespace: str) -> list[str]:
    """The finalizers the Go operator leaves on the cluster's BucketClaim, sorted as
    logset/bucketclaim.go syncBucketClaim writes them."""
    per_set = [
        shapes.hash_finalizer(BUCKET_SET_FINALIZER_PREFIXES[c], namespace, s)
        for c, s in SETS
        if c in BUCKET_SET_FINALIZER_PREFIXES
    ]
    return sorted([labels.BUCKET_DATA_FINALIZER, BUCKET_CLAIM_FINALIZER, *per_set])


async def upstream_tomls(world: World) -> dict[tuple[Component, str], Obj]:
    """Each set's TOML, parsed, as the Go operator's ConfigMap holds it."""
    out = {}
    for component, set_name in SETS:
        cm = await world.get(r.CONFIGMAPS, names.config_map_base_name(component, set_name))
        assert cm is not None, f"the Go operator's ConfigMap of {component.kind} {set_name}"
        out[component, set_name] = shapes.parsed_toml(cm, component)
    return out


async def _upstream_bucket_claim(world: World) -> None:
    """The LogSet's BucketClaim as the Go operator leaves it: logset/bucketclaim.go
    createNewBucket and syncBucketClaim (the unique-path label, ``spec.logSetSpec`` the log
    pod template, ``status`` bindTo and InUse), the any-instance-running annotation
    (SetBucketEverRunningAnn), and upstream's finalizers; nothing of ours."""
    logset = await world.get(r.LOGSETS, "mo")
    assert logset is not None
    name = buckets.claim_name(logset["metadata"]["uid"])
    claim = await world.get(r.BUCKETCLAIMS, name)
    sts = await world.get(KRUISE_STATEFULSETS, names.workload_name(Component.LOG, "mo"))
    assert claim is not None and sts is not None
    meta = claim["metadata"]
    unique = labels.BUCKET_UNIQUE_ID
    patch = {
        "metadata": {
            "labels": {k: None for k in meta.get("labels") or {} if k != unique},
            "annotations": {
                **{k: None for k in meta.get("annotations") or {}},
                buckets.ANY_INSTANCE_RUNNING: "true",
            },
            "finalizers": upstream_claim_finalizers(world.namespace),
        },
        "spec": {"logSetSpec": sts["spec"]["template"]},
    }
    await world.client.patch(r.BUCKETCLAIMS, name, patch, world.namespace)
    status = {k: None for k in claim.get("status") or {}}
    status.update(bindTo=buckets.bind_mark(world.namespace, "mo"), state=buckets.IN_USE)
    await world.client.patch_status(r.BUCKETCLAIMS, name, {"status": status}, world.namespace)


def _selector(component: Component, set_name: str, world: World) -> dict[str, str]:
    return labels.sub_resource_labels(component, set_name, world.namespace)


async def _set_pods(world: World, component: Component, set_name: str) -> list[Obj]:
    pods = await world.pods(**_selector(component, set_name, world))
    return sorted(
        (p for p in pods if not p["metadata"].get("deletionTimestamp")), key=lambda p: p["metadata"]["name"]
    )


async def _hand_to_kruise(
    world: World, component: Component, set_name: str, reserved: tuple[int, ...] = ()
) -> None:
    owner = await world.get(_set_resource(component), set_name)
    logset = await world.get(r.LOGSETS, "mo")
    assert owner is not None and logset is not None
    pods = await _set_pods(world, component, set_name)
    config_map, suffix = shapes.config_map(component, owner, logset)
    await world.client.create(r.CONFIGMAPS, config_map)
    template = shapes.pod_template(component, owner, logset, config_map["metadata"]["name"], suffix)
    workload = await _kruise_workload(world, component, set_name, owner, len(pods), template, reserved)
    revision = f"{workload['metadata']['name']}-{_digest(workload['spec'])[:10]}"
    await _release_ours(world, component, set_name)
    shape = _PodShape(workload, revision)
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


async def _kruise_workload(
    world: World,
    component: Component,
    set_name: str,
    owner: Obj,
    replicas: int,
    template: Obj,
    reserved: tuple[int, ...] = (),
) -> Obj:
    """The set's Advanced StatefulSet (common/template.go StatefulSetTemplate, logset/sts.go
    buildStatefulSet) or CloneSet (common/template.go CloneSetTemplate, cnset/controller.go
    syncCloneSet), owned by the set."""
    name = names.workload_name(component, set_name)
    selector = _selector(component, set_name, world)
    spec: Obj = {"replicas": replicas, "selector": {"matchLabels": selector}, "template": template}
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
            serviceName=names.headless_service_name(component, set_name),
            podManagementPolicy="Parallel",
            updateStrategy={
                "type": "RollingUpdate",
                "rollingUpdate": {"podUpdatePolicy": "InPlaceIfPossible"},
            },
            persistentVolumeClaimRetentionPolicy={"whenDeleted": "Delete", "whenScaled": "Delete"},
            volumeClaimTemplates=ours["spec"].get("volumeClaimTemplates") or [],
        )
        if reserved:
            spec["reserveOrdinals"] = list(reserved)
        body = {"apiVersion": "apps.kruise.io/v1beta1", "kind": "StatefulSet", "metadata": meta, "spec": spec}
        return await world.client.create(KRUISE_STATEFULSETS, body)
    spec["updateStrategy"] = {
        "type": "InPlaceIfPossible",
        "maxSurge": 1,
        "maxUnavailable": 0,
        "inPlaceUpdateStrategy": {"gracePeriodSeconds": 10},
    }
    if component is Component.CN:
        spec["minReadySeconds"] = 30
        hook = {"finalizersHandler": [labels.CN_DRAINING_FINALIZER]}
        spec["lifecycle"] = {
            "preDelete": {**hook, "markPodNotReady": True},
            "inPlaceUpdate": {**hook, "markPodNotReady": False},
        }
        spec["scaleStrategy"] = {"disablePVCReuse": True}
    body = {"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet", "metadata": meta, "spec": spec}
    return await world.client.create(CLONESETS, body)


async def _release_ours(world: World, component: Component, set_name: str) -> None:
    """Our workload goes (its pods stay, released), as if it had never been made; so do
    the LogSet's own stores (below a reserved ordinal)."""
    name = names.workload_name(component, set_name)
    if component in (Component.LOG, Component.TN):
        await world.client.delete(r.STATEFULSETS, name, world.namespace, propagation_policy="Orphan")
        for pod in await _set_pods(world, component, set_name):
            if any(ref.get("kind") == "LogSet" for ref in pod["metadata"].get("ownerReferences") or ()):
                patch = {"metadata": {"ownerReferences": None}}
                await world.client.patch(r.PODS, pod["metadata"]["name"], patch, world.namespace)
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
    """How the Go operator's pods of one workload look: the workload's template, with what
    Kruise and upstream's cnstore controller add to each pod."""

    def __init__(self, workload: Obj, revision: str) -> None:
        self.workload = workload
        self.revision = revision

    def pod(self, source: Obj, name: str, component: Component, set_name: str, namespace: str) -> Obj:
        template = self.workload["spec"]["template"]
        pod_labels = dict(template["metadata"]["labels"])
        pod_labels[REVISION] = self.revision
        spec = copy.deepcopy(template["spec"])
        finalizers: list[str] = []
        if component is Component.CN:
            pod_labels[labels.CN_UUID] = identity.cn_store_uuid(
                name, set_name, namespace
            )  # cnstore/controller.go
            finalizers = list(UPSTREAM_CN_POD_FINALIZERS)
        if self.workload["kind"] == "CloneSet":
            pod_labels[CLONESET_INSTANCE_ID] = name.rsplit("-", 1)[1]
            pod_labels[KRUISE_LIFECYCLE_STATE] = "Normal"
        else:
            pod_labels["statefulset.kubernetes.io/pod-name"] = name
            spec["hostname"] = name
            spec["subdomain"] = self.workload["spec"]["serviceName"]
        # the claims a StatefulSet (or CloneSet) mounts by volume claim template name
        claims = [v for v in source["spec"].get("volumes") or () if v.get("persistentVolumeClaim")]
        spec["volumes"] = claims + spec.get("volumes", [])
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
            "annotations": dict(template["metadata"]["annotations"]),
            "ownerReferences": [ref],
        }
        if finalizers:
            new_meta["finalizers"] = finalizers
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
    await _kruise_conditions(world, name, (shapes.IN_PLACE_UPDATE_READY,))
    await _wait_pod_ready(world, name)


async def _replace_surging(
    world: World, component: Component, set_name: str, pod: Obj, shape: _PodShape
) -> None:
    suffix = "".join(random.choices(string.ascii_lowercase + string.digits, k=5))
    name = f"{names.workload_name(component, set_name)}-{suffix}"
    await world.client.create(r.PODS, shape.pod(pod, name, component, set_name, world.namespace))
    await _kruise_conditions(world, name, (shapes.IN_PLACE_UPDATE_READY, shapes.KRUISE_POD_READY))
    if component is Component.CN:
        await _cn_to_work(world, name, set_name)
    await _wait_pod_ready(world, name)
    await _delete_pod(world, pod)


async def _cn_to_work(world: World, pod_name: str, set_name: str) -> None:
    """What the Go operator's cnstore controller does for a new CN (cnstore/controller.go):
    once its store registered, set it Working in HAKeeper, the pod's annotation
    ``matrixorigin.io/cn-state`` Up and its ``matrixorigin.io/cn-store`` condition True."""
    uuid = identity.cn_store_uuid(pod_name, set_name, world.namespace)
    mo = world.cluster.mo
    assert mo is not None

    def registered() -> bool:
        keeper = mo.hakeeper(world.namespace, "mo")
        return keeper is not None and uuid in keeper.stores[Component.CN]

    await eventually(registered, timeout=60, message=f"CN {pod_name} registered")
    provider = RpcAdminProvider(dialer=world.cluster.dialer)  # over morpc, as upstream's mocli
    try:
        await provider.admin(names.discovery_address("mo", world.namespace)).set_cn_work_state(
            uuid, WorkState.WORKING
        )
    finally:
        await provider.close()
    await world.client.patch(
        r.PODS, pod_name, {"metadata": {"annotations": {labels.CN_STATE: "Up"}}}, world.namespace
    )
    await _set_conditions(world, pod_name, {labels.CN_STORE_READINESS: "True"})


async def _set_conditions(world: World, name: str, wanted: dict[str, str]) -> None:
    """Set pod conditions others own (the simulated kubelet keeps them), until they show."""

    async def shown() -> bool:
        pod = await world.get(r.PODS, name)
        assert pod is not None
        have = (pod.get("status") or {}).get("conditions") or []
        if all(any(c["type"] == t and c["status"] == v for c in have) for t, v in wanted.items()):
            return True
        kept = [c for c in have if c["type"] not in wanted]
        conditions = kept + [{"type": t, "status": v} for t, v in wanted.items()]
        with contextlib.suppress(ApiError):
            await world.client.patch(
                r.PODS,
                name,
                {
                    "metadata": {"resourceVersion": pod["metadata"]["resourceVersion"]},
                    "status": {"conditions": conditions},
                },
                world.namespace,
                subresource="status",
            )
        return False

    await eventually(shown, timeout=30, message=f"pod {name} conditions {wanted}")


async def _kruise_conditions(world: World, name: str, types: tuple[str, ...]) -> None:
    """What Kruise sets on a pod it created: its readiness gates' conditions True
    (kruise pkg/util/inplaceupdate, pkg/controller/podreadiness)."""
    await _set_conditions(world, name, dict.fromkeys(types, "True"))


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
