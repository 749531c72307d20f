"""Table printers of the built-in kinds: the columns and cells of
kube-apiserver's ``pkg/printers/internalversion/printers.go`` for each kind
the server serves, as of the Kubernetes version it reports (1.30)."""

from __future__ import annotations

import datetime
from typing import Any

from lightkube.models import apps_v1, batch_v1, coordination_v1, core_v1, storage_v1

from ..selectors import label_selector_string
from .base import (
    AGE,
    NAME,
    Obj,
    Printer,
    age,
    column,
    container_cells,
    dig,
    doc,
    format_label_selector,
    format_labels,
    human_duration,
    meta,
    name,
    parse_time,
    simple,
    spec,
    status,
)
from .core import (
    CONFIG_MAP,
    ENDPOINTS,
    NAMESPACE,
    NODE,
    PERSISTENT_VOLUME,
    PERSISTENT_VOLUME_CLAIM,
    SECRET,
    SERVICE,
    SERVICE_ACCOUNT,
)
from .pods_events import EVENT, POD

_CONTAINERS = column("Containers", "string", "Names of each container in the template.", priority=1)
_IMAGES = column("Images", "string", "Images referenced by each container in the template.", priority=1)


def _template_spec(obj: Obj) -> Any:
    return dig(obj, "spec", "template", "spec", default={})


def _wide_workload(obj: Obj, selector: bool = True) -> list[Any]:
    names, images = container_cells(_template_spec(obj))
    return [names, images, format_label_selector(spec(obj).get("selector"))] if selector else [names, images]


# ---------------------------------------------------------------- apps
def _deployment(obj: Obj, now: datetime.datetime) -> list[Any]:
    s, st = spec(obj), status(obj)
    ready = f"{st.get('readyReplicas', 0)}/{s.get('replicas', 1)}"
    names, images = container_cells(_template_spec(obj))
    return [
        name(obj),
        ready,
        st.get("updatedReplicas", 0),
        st.get("availableReplicas", 0),
        age(obj, now),
        names,
        images,
        label_selector_string(s.get("selector")),
    ]


DEPLOYMENT = Printer(
    (
        NAME,
        column("Ready", "string", "Number of the pod with ready state"),
        column("Up-to-date", "string", doc(apps_v1.DeploymentStatus, "updatedReplicas")),
        column("Available", "string", doc(apps_v1.DeploymentStatus, "availableReplicas")),
        AGE,
        _CONTAINERS,
        _IMAGES,
        column("Selector", "string", doc(apps_v1.DeploymentSpec, "selector"), priority=1),
    ),
    _deployment,
)

STATEFUL_SET = Printer(
    (NAME, column("Ready", "string", "Number of the pod with ready state"), AGE, _CONTAINERS, _IMAGES),
    lambda obj, now: [
        name(obj),
        f"{status(obj).get('readyReplicas', 0)}/{spec(obj).get('replicas', 1)}",
        age(obj, now),
        *_wide_workload(obj, selector=False),
    ],
)

REPLICA_SET = Printer(
    (
        NAME,
        column("Desired", "integer", doc(apps_v1.ReplicaSetSpec, "replicas")),
        column("Current", "integer", doc(apps_v1.ReplicaSetStatus, "replicas")),
        column("Ready", "integer", doc(apps_v1.ReplicaSetStatus, "readyReplicas")),
        AGE,
        _CONTAINERS,
        _IMAGES,
        column("Selector", "string", doc(apps_v1.ReplicaSetSpec, "selector"), priority=1),
    ),
    lambda obj, now: [
        name(obj),
        spec(obj).get("replicas", 1),
        status(obj).get("replicas", 0),
        status(obj).get("readyReplicas", 0),
        age(obj, now),
        *_wide_workload(obj),
    ],
)

_DS_STATUS = (
    "desiredNumberScheduled",
    "currentNumberScheduled",
    "numberReady",
    "updatedNumberScheduled",
    "numberAvailable",
)
DAEMON_SET = Printer(
    (
        NAME,
        *(
            column(title, "integer", doc(apps_v1.DaemonSetStatus, f))
            for title, f in zip(
                ("Desired", "Current", "Ready", "Up-to-date", "Available"), _DS_STATUS, strict=True
            )
        ),
        column("Node Selector", "string", doc(core_v1.PodSpec, "nodeSelector")),
        AGE,
        _CONTAINERS,
        _IMAGES,
        column("Selector", "string", doc(apps_v1.DaemonSetSpec, "selector"), priority=1),
    ),
    lambda obj, now: [
        name(obj),
        *(status(obj).get(f, 0) for f in _DS_STATUS),
        format_labels(_template_spec(obj).get("nodeSelector")),
        age(obj, now),
        *_wide_workload(obj),
    ],
)


def _controller_of(obj: Obj) -> str:
    for ref in meta(obj).get("ownerReferences") or []:
        if ref.get("controller"):
            group = str(ref.get("apiVersion", "")).rpartition("/")[0]
            kind = f"{ref.get('kind', '')}.{group}" if group else str(ref.get("kind", ""))
            return f"{kind.lower()}/{ref.get('name', '')}"
    return "<none>"


CONTROLLER_REVISION = simple(
    [
        column("Controller", "string", "Controller of the object"),
        column("Revision", "string", doc(apps_v1.ControllerRevision, "revision")),
    ],
    lambda obj: [_controller_of(obj), obj.get("revision", 0)],
)


# ---------------------------------------------------------------- batch
def _job(obj: Obj, now: datetime.datetime) -> list[Any]:
    s, st = spec(obj), status(obj)
    succeeded = st.get("succeeded", 0)
    if s.get("completions") is not None:
        completions = f"{succeeded}/{s['completions']}"
    elif (s.get("parallelism") or 0) > 1:
        completions = f"{succeeded}/1 of {s['parallelism']}"
    else:
        completions = f"{succeeded}/1"
    start, end = parse_time(st.get("startTime")), parse_time(st.get("completionTime"))
    duration = "" if start is None else human_duration((end or now) - start)
    return [name(obj), completions, duration, age(obj, now), *_wide_workload(obj)]


JOB = Printer(
    (
        NAME,
        column("Completions", "string", doc(batch_v1.JobStatus, "succeeded")),
        column("Duration", "string", "Time required to complete the job."),
        AGE,
        _CONTAINERS,
        _IMAGES,
        column("Selector", "string", doc(batch_v1.JobSpec, "selector"), priority=1),
    ),
    _job,
)


# ---------------------------------------------------------------- others
LEASE = simple(
    [column("Holder", "string", doc(coordination_v1.LeaseSpec, "holderIdentity"))],
    lambda obj: [spec(obj).get("holderIdentity") or ""],
)


def _pdb(obj: Obj) -> list[Any]:
    s = spec(obj)
    return [
        str(s["minAvailable"]) if s.get("minAvailable") is not None else "N/A",
        str(s["maxUnavailable"]) if s.get("maxUnavailable") is not None else "N/A",
        status(obj).get("disruptionsAllowed", 0),
    ]


POD_DISRUPTION_BUDGET = simple(
    [
        column("Min Available", "string", "The minimum number of pods that must be available."),
        column("Max Unavailable", "string", "The maximum number of pods that may be unavailable."),
        column(
            "Allowed Disruptions", "integer", "Calculated number of pods that may be disrupted at this time."
        ),
    ],
    _pdb,
)


def _binding(obj: Obj, now: datetime.datetime) -> list[Any]:
    ref = obj.get("roleRef") or {}
    users, groups, sas = [], [], []
    for s in obj.get("subjects") or []:
        if s.get("kind") == "User":
            users.append(s.get("name", ""))
        elif s.get("kind") == "Group":
            groups.append(s.get("name", ""))
        elif s.get("kind") == "ServiceAccount":
            sas.append(f"{s.get('namespace', '')}/{s.get('name', '')}")
    role = f"{ref.get('kind', '')}/{ref.get('name', '')}"
    return [name(obj), role, age(obj, now), ", ".join(users), ", ".join(groups), ", ".join(sas)]


def _binding_printer(kind: str) -> Printer:
    return Printer(
        (
            NAME,
            column(
                "Role",
                "string",
                "RoleRef can reference a Role in the current namespace or a ClusterRole in the global namespace.",
            ),
            AGE,
            column("Users", "string", f"Users in the {kind}", priority=1),
            column("Groups", "string", f"Groups in the {kind}", priority=1),
            column("ServiceAccounts", "string", f"ServiceAccounts in the {kind}", priority=1),
        ),
        _binding,
    )


_DEFAULT_CLASS = (
    "storageclass.kubernetes.io/is-default-class",
    "storageclass.beta.kubernetes.io/is-default-class",
)
STORAGE_CLASS = Printer(
    (
        NAME,
        column("Provisioner", "string", doc(storage_v1.StorageClass, "provisioner")),
        column("ReclaimPolicy", "string", doc(storage_v1.StorageClass, "reclaimPolicy")),
        column("VolumeBindingMode", "string", doc(storage_v1.StorageClass, "volumeBindingMode")),
        column("AllowVolumeExpansion", "string", doc(storage_v1.StorageClass, "allowVolumeExpansion")),
        AGE,
    ),
    lambda obj, now: [
        name(obj)
        + (
            " (default)"
            if any((meta(obj).get("annotations") or {}).get(a) == "true" for a in _DEFAULT_CLASS)
            else ""
        ),
        obj.get("provisioner", ""),
        obj.get("reclaimPolicy") or "Delete",
        obj.get("volumeBindingMode") or "Immediate",
        bool(obj.get("allowVolumeExpansion")),
        age(obj, now),
    ],
)

WEBHOOK_CONFIGURATION = simple(
    [
        column(
            "Webhooks",
            "integer",
            "Webhooks indicates the number of webhooks registered in this configuration",
        )
    ],
    lambda obj: [len(obj.get("webhooks") or [])],
)

# (group, kind) -> printer. Kinds without one (Role, ClusterRole,
# CustomResourceDefinition) get kube-apiserver's default Name / Created At.
BUILTIN_PRINTERS: dict[tuple[str, str], Printer] = {
    ("", "Pod"): POD,
    ("", "Service"): SERVICE,
    ("", "Endpoints"): ENDPOINTS,
    ("", "ConfigMap"): CONFIG_MAP,
    ("", "Secret"): SECRET,
    ("", "ServiceAccount"): SERVICE_ACCOUNT,
    ("", "Namespace"): NAMESPACE,
    ("", "PersistentVolumeClaim"): PERSISTENT_VOLUME_CLAIM,
    ("", "PersistentVolume"): PERSISTENT_VOLUME,
    ("", "Node"): NODE,
    ("", "Event"): EVENT,
    ("events.k8s.io", "Event"): EVENT,
    ("apps", "Deployment"): DEPLOYMENT,
    ("apps", "StatefulSet"): STATEFUL_SET,
    ("apps", "ReplicaSet"): REPLICA_SET,
    ("apps", "DaemonSet"): DAEMON_SET,
    ("apps", "ControllerRevision"): CONTROLLER_REVISION,
    ("batch", "Job"): JOB,
    ("coordination.k8s.io", "Lease"): LEASE,
    ("policy", "PodDisruptionBudget"): POD_DISRUPTION_BUDGET,
    ("rbac.authorization.k8s.io", "RoleBinding"): _binding_printer("roleBinding"),
    ("rbac.authorization.k8s.io", "ClusterRoleBinding"): _binding_printer("clusterRoleBinding"),
    ("storage.k8s.io", "StorageClass"): STORAGE_CLASS,
    ("admissionregistration.k8s.io", "MutatingWebhookConfiguration"): WEBHOOK_CONFIGURATION,
    ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration"): WEBHOOK_CONFIGURATION,
}
