"""Persistent volumes: the PV controller's binding (pkg/controller/volume/
persistentvolume), retroactive default StorageClass assignment, the PVC/PV
protection finalizers' removal, a simulated external provisioner
(provisioning and deleting PVs of its own StorageClass, as
sigs.k8s.io/sig-storage-lib-external-provisioner does), and the online
expansion of those volumes: the external-resizer's part (``resize``) and the
kubelet's (``expand_on_node``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from mo_operator.kube.meta.quantity import quantity_value

from ..core.actions import Action, Create, Delete, Patch
from ..core.kinds import PV, PVC
from ..core.objects import (
    Obj,
    annotations_of,
    is_deleting,
    meta,
    name_of,
    namespace_of,
    resource_version_of,
    spec_of,
    status_of,
    uid_of,
)

DEFAULT_CLASS = "storageclass.kubernetes.io/is-default-class"
STORAGE_PROVISIONER = "volume.kubernetes.io/storage-provisioner"
BETA_STORAGE_PROVISIONER = "volume.beta.kubernetes.io/storage-provisioner"
SELECTED_NODE = "volume.kubernetes.io/selected-node"
PROVISIONED_BY = "pv.kubernetes.io/provisioned-by"
HOSTNAME = "kubernetes.io/hostname"
TOPOLOGY_KEY_PARAMETER = "localcluster.dev/topology-key"
"""A StorageClass parameter of the simulated provisioner: the node label its volumes are
pinned to (``kubernetes.io/hostname`` when absent; ``topology.kubernetes.io/zone`` plays a
zonal block-storage driver)."""
BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"
PVC_PROTECTION = "kubernetes.io/pvc-protection"
RESIZING = "Resizing"
FS_RESIZE_PENDING = "FileSystemResizePending"
FS_RESIZE_MESSAGE = "Waiting for user to (re-)start a pod to finish file system resize of volume on node."
PV_PROTECTION = "kubernetes.io/pv-protection"


def storage_class(name: str, provisioner: str, *, default: bool, binding_mode: str) -> Obj:
    sc: Obj = {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": name},
        "provisioner": provisioner,
        "reclaimPolicy": "Delete",
        "volumeBindingMode": binding_mode,
        "allowVolumeExpansion": True,
    }
    if default:
        sc["metadata"]["annotations"] = {DEFAULT_CLASS: "true"}
    return sc


def default_class(classes: Sequence[Obj]) -> Obj | None:
    """The default StorageClass; with several, the newest (as the
    DefaultStorageClass admission plugin picks since 1.26)."""
    defaults = [c for c in classes if annotations_of(c).get(DEFAULT_CLASS) == "true"]
    if not defaults:
        return None
    return max(defaults, key=lambda c: (str(meta(c).get("creationTimestamp") or ""), name_of(c)))


def _request(claim: Obj) -> str:
    return str(((spec_of(claim).get("resources") or {}).get("requests") or {}).get("storage", "1Gi"))


def _claim_ref(claim: Obj) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "namespace": namespace_of(claim),
        "name": name_of(claim),
        "uid": uid_of(claim),
        "resourceVersion": resource_version_of(claim),
    }


def _refers_to(pv: Obj, claim: Obj) -> bool:
    ref = spec_of(pv).get("claimRef") or {}
    if ref.get("namespace") != namespace_of(claim) or ref.get("name") != name_of(claim):
        return False
    return not ref.get("uid") or ref.get("uid") == uid_of(claim)


def _remove_finalizer(kind: Any, obj: Obj, finalizer: str) -> Patch:
    fins = list(meta(obj).get("finalizers") or [])
    i = fins.index(finalizer)
    path = f"/metadata/finalizers/{i}"
    return Patch(
        kind,
        namespace_of(obj),
        name_of(obj),
        [{"op": "test", "path": path, "value": finalizer}, {"op": "remove", "path": path}],
        patch_type="json",
    )


def plan_claim(claim: Obj, volumes: Sequence[Obj], classes: Mapping[str, Obj], in_use: bool) -> list[Action]:
    """The PV controller's ``syncClaim`` (plus the PVC protection controller)."""
    ns, name = namespace_of(claim), name_of(claim)
    if is_deleting(claim):
        if PVC_PROTECTION in (meta(claim).get("finalizers") or []) and not in_use:
            return [_remove_finalizer(PVC, claim, PVC_PROTECTION)]
        return []
    spec = spec_of(claim)
    if "storageClassName" not in spec or spec.get("storageClassName") is None:
        dflt = default_class(list(classes.values()))
        if dflt is not None:  # retroactive default StorageClass assignment (GA in 1.28)
            return [Patch(PVC, ns, name, {"spec": {"storageClassName": name_of(dflt)}})]
    bound_to = spec.get("volumeName")
    pv = next((v for v in volumes if name_of(v) == bound_to), None) if bound_to else None
    if bound_to:
        if pv is None:
            if status_of(claim).get("phase") == "Bound":
                return [Patch(PVC, ns, name, {"status": {"phase": "Lost"}}, subresource="status")]
            return []
        actions: list[Action] = []
        if not spec_of(pv).get("claimRef") or not _refers_to(pv, claim):
            if spec_of(pv).get("claimRef"):
                return []  # the volume is someone else's: wait, as the controller does
            actions.append(Patch(PV, "", name_of(pv), {"spec": {"claimRef": _claim_ref(claim)}}))
        return actions + _claim_bound(claim, pv)
    # Not bound yet: a volume that already points at this claim, else a free matching one.
    cls_name = spec.get("storageClassName") or ""
    for v in volumes:
        if spec_of(v).get("claimRef") and _refers_to(v, claim) and not is_deleting(v):
            return _bind(claim, v)
    for v in sorted(volumes, key=lambda v: (_size(v), name_of(v))):
        if (
            spec_of(v).get("claimRef")
            or is_deleting(v)
            or (spec_of(v).get("storageClassName") or "") != cls_name
        ):
            continue
        if _size(v) >= _size_of(_request(claim)) and set(spec.get("accessModes") or []) <= set(
            spec_of(v).get("accessModes") or []
        ):
            return [
                Patch(
                    PV,
                    "",
                    name_of(v),
                    {
                        "metadata": {"annotations": {BOUND_BY_CONTROLLER: "yes"}},
                        "spec": {"claimRef": _claim_ref(claim)},
                    },
                )
            ]
    out: list[Action] = []
    cls = classes.get(cls_name)
    ann = annotations_of(claim)
    if (
        cls is not None
        and cls.get("provisioner")
        and cls.get("provisioner") != "kubernetes.io/no-provisioner"
    ):
        wffc = cls.get("volumeBindingMode") == "WaitForFirstConsumer"
        if (not wffc or ann.get(SELECTED_NODE)) and ann.get(STORAGE_PROVISIONER) != cls["provisioner"]:
            out.append(
                Patch(
                    PVC,
                    ns,
                    name,
                    {
                        "metadata": {
                            "annotations": {
                                STORAGE_PROVISIONER: cls["provisioner"],
                                BETA_STORAGE_PROVISIONER: cls["provisioner"],
                            }
                        }
                    },
                )
            )
    if status_of(claim).get("phase") != "Pending":
        out.append(Patch(PVC, ns, name, {"status": {"phase": "Pending"}}, subresource="status"))
    return out


def _size_of(text: str) -> int:
    try:
        return quantity_value(text)
    except ValueError:
        return 0


def _size(pv: Obj) -> int:
    return _size_of(str((spec_of(pv).get("capacity") or {}).get("storage", "0")))


def _bind(claim: Obj, pv: Obj) -> list[Action]:
    """``bind``, in the PV controller's order: the volume reports Bound, then the
    claim names it (with bind-completed), then the claim reports Bound."""
    ann = {BIND_COMPLETED: "yes", BOUND_BY_CONTROLLER: "yes"}
    return [
        *_volume_bound(pv),
        Patch(
            PVC,
            namespace_of(claim),
            name_of(claim),
            {"metadata": {"annotations": ann}, "spec": {"volumeName": name_of(pv)}},
        ),
        *_claim_status_bound(claim, pv),
    ]


def _volume_bound(pv: Obj) -> list[Action]:
    if status_of(pv).get("phase") == "Bound":
        return []
    return [Patch(PV, "", name_of(pv), {"status": {"phase": "Bound"}}, subresource="status")]


def _claim_status_bound(claim: Obj, pv: Obj) -> list[Action]:
    """The claim's status as it becomes Bound; its capacity is set only then (the PV
    controller's ``updateClaimStatus``: once bound, a capacity differing from the
    volume's means a resize the kubelet has not finished, and is not clobbered)."""
    st = status_of(claim)
    want: Obj = {"phase": "Bound", "accessModes": list(spec_of(pv).get("accessModes") or [])}
    if st.get("phase") != "Bound":
        want["capacity"] = dict(spec_of(pv).get("capacity") or {})
    if all(st.get(k) == v for k, v in want.items()):
        return []
    return [Patch(PVC, namespace_of(claim), name_of(claim), {"status": want}, subresource="status")]


def _claim_bound(claim: Obj, pv: Obj) -> list[Action]:
    """A claim that already names its volume: finish what ``bind`` left undone."""
    out = [*_volume_bound(pv), *_claim_status_bound(claim, pv)]
    if annotations_of(claim).get(BIND_COMPLETED) != "yes":
        out.append(
            Patch(
                PVC,
                namespace_of(claim),
                name_of(claim),
                {"metadata": {"annotations": {BIND_COMPLETED: "yes"}}},
            )
        )
    return out


def plan_volume(pv: Obj, claims: Mapping[tuple[str, str], Obj]) -> list[Action]:
    """The PV controller's ``syncVolume``: Available, Bound or Released (plus
    the PV protection controller)."""
    if is_deleting(pv):
        if PV_PROTECTION in (meta(pv).get("finalizers") or []) and status_of(pv).get("phase") != "Bound":
            return [_remove_finalizer(PV, pv, PV_PROTECTION)]
        return []
    ref = spec_of(pv).get("claimRef")
    phase = status_of(pv).get("phase")
    if not ref:
        want = "Available"
    else:
        claim = claims.get((ref.get("namespace", ""), ref.get("name", "")))
        if claim is not None and (not ref.get("uid") or ref.get("uid") == uid_of(claim)):
            want = "Bound" if spec_of(claim).get("volumeName") == name_of(pv) else (phase or "Available")
        elif ref.get("uid"):
            want = "Released"
        else:
            want = "Available"
    if want != phase:
        return [Patch(PV, "", name_of(pv), {"status": {"phase": want}}, subresource="status")]
    return []


def provision(
    claim: Obj,
    volumes: Sequence[Obj],
    classes: Mapping[str, Obj],
    provisioner: str,
    nodes_by_name: Mapping[str, Obj],
) -> list[Action]:
    """The simulated external provisioner: a PV ``pvc-<uid>`` for each claim
    its class hands to it (the PV controller's storage-provisioner annotation)."""
    ann = annotations_of(claim)
    if is_deleting(claim) or spec_of(claim).get("volumeName"):
        return []
    if ann.get(STORAGE_PROVISIONER, ann.get(BETA_STORAGE_PROVISIONER)) != provisioner:
        return []
    cls = classes.get(spec_of(claim).get("storageClassName") or "")
    if cls is None or cls.get("provisioner") != provisioner:
        return []
    pv_name = f"pvc-{uid_of(claim)}"
    if any(name_of(v) == pv_name for v in volumes):
        return []
    selected = ann.get(SELECTED_NODE)
    if cls.get("volumeBindingMode") == "WaitForFirstConsumer" and not selected:
        return []
    spec: Obj = {
        "capacity": {"storage": _request(claim)},
        "accessModes": list(spec_of(claim).get("accessModes") or ["ReadWriteOnce"]),
        "persistentVolumeReclaimPolicy": cls.get("reclaimPolicy") or "Delete",
        "storageClassName": name_of(cls),
        "volumeMode": spec_of(claim).get("volumeMode") or "Filesystem",
        "claimRef": _claim_ref(claim),
        "hostPath": {"path": f"/var/lib/localcluster/volumes/{pv_name}", "type": "DirectoryOrCreate"},
    }
    if selected:
        # pinned to the selected node's value of the class's topology key, as a CSI
        # driver's accessible topology pins a volume (a local disk: the hostname; a
        # zonal block volume: the zone)
        key = str((cls.get("parameters") or {}).get(TOPOLOGY_KEY_PARAMETER) or HOSTNAME)
        value = (meta(nodes_by_name.get(selected) or {}).get("labels") or {}).get(
            key, selected if key == HOSTNAME else None
        )
        if value is None:
            return []  # the node is not in any place of this key: nothing can be made for it
        spec["nodeAffinity"] = {
            "required": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": key, "operator": "In", "values": [value]}]}
                ]
            }
        }
    pv: Obj = {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {"name": pv_name, "annotations": {PROVISIONED_BY: provisioner}},
        "spec": spec,
    }
    return [Create(PV, pv, exists_ok=True)]


def reclaim(pv: Obj, provisioner: str) -> list[Action]:
    """Delete a Released volume this provisioner made, under policy Delete.

    Released is the PV controller's word, as external-provisioner waits for it: a
    volume deleted while still Bound would keep its pv-protection finalizer, which
    the PV controller removes only from a volume that is not Bound."""
    if is_deleting(pv) or annotations_of(pv).get(PROVISIONED_BY) != provisioner:
        return []
    if (spec_of(pv).get("persistentVolumeReclaimPolicy") or "Delete") != "Delete":
        return []
    if status_of(pv).get("phase") != "Released":
        return []
    return [Delete(PV, "", name_of(pv), uid=uid_of(pv))]


def _condition(kind: str, now: str, message: str = "") -> Obj:
    cond: Obj = {"type": kind, "status": "True", "lastProbeTime": None, "lastTransitionTime": now}
    if message:
        cond["message"] = message
    return cond


def _has_condition(claim: Obj, kind: str) -> bool:
    return any(c.get("type") == kind for c in status_of(claim).get("conditions") or ())


def resize(
    claim: Obj, pv: Obj | None, classes: Mapping[str, Obj], provisioner: str, now: str
) -> list[Action]:
    """The external-resizer, for volumes this provisioner made: a bound claim asking
    more than its volume holds is marked ``Resizing``, then its volume grows
    (``spec.capacity``) and the claim waits for the kubelet
    (``FileSystemResizePending``), as for a CSI driver that expands on the node."""
    if pv is None or is_deleting(claim) or status_of(claim).get("phase") != "Bound":
        return []
    if annotations_of(pv).get(PROVISIONED_BY) != provisioner or not _refers_to(pv, claim):
        return []
    cls = classes.get(spec_of(claim).get("storageClassName") or "")
    if cls is None or cls.get("allowVolumeExpansion") is not True:
        return []
    request = _request(claim)
    if _size_of(request) <= _size(pv):
        return []
    ns, name = namespace_of(claim), name_of(claim)
    if not _has_condition(claim, RESIZING):
        conditions = [_condition(RESIZING, now)]
        return [Patch(PVC, ns, name, {"status": {"conditions": conditions}}, subresource="status")]
    pending = [_condition(FS_RESIZE_PENDING, now, FS_RESIZE_MESSAGE)]
    return [
        Patch(PV, "", name_of(pv), {"spec": {"capacity": {"storage": request}}}),
        Patch(PVC, ns, name, {"status": {"conditions": pending}}, subresource="status"),
    ]


def expand_on_node(claim: Obj, pv: Obj | None, mounted: bool) -> list[Action]:
    """The kubelet, once a running pod mounts the claim: the file system grows to the
    volume's size, the claim reports it in ``status.capacity`` and the pending
    condition goes (``MarkFSResizeFinished``)."""
    if pv is None or not mounted or not _has_condition(claim, FS_RESIZE_PENDING):
        return []
    capacity = str((spec_of(pv).get("capacity") or {}).get("storage") or "")
    if not capacity:
        return []
    return [
        Patch(
            PVC,
            namespace_of(claim),
            name_of(claim),
            {"status": {"capacity": {"storage": capacity}, "conditions": None}},
            subresource="status",
        )
    ]
