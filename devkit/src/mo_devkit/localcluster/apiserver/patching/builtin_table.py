"""Merge rules of the built-in kinds, written from the Kubernetes API types.

Sources: the struct tags and markers in ``k8s.io/api`` (``core/v1``,
``apps/v1``, ``batch/v1``, ``policy/v1``, ``rbac/v1``,
``admissionregistration/v1``, ...), ``k8s.io/apimachinery/pkg/apis/meta/v1``
(ObjectMeta, LabelSelector) and ``k8s.io/apiextensions-apiserver`` (CRD).
Only fields that are not plain (granular struct, atomic list) need a line:
keyed and set lists, atomic structs (``+structType=atomic``: LabelSelector,
ObjectReference, the ``*KeySelector`` types, ...), atomic or free-form maps,
and strategic-merge tags. A path is dotted; ``[]`` stands for any item of a
list. Shared structs (ObjectMeta, PodSpec, Container) are written once and
mounted wherever they appear.
"""

from __future__ import annotations

from collections.abc import Mapping

from .typerules import (
    ATOMIC,
    ATOMIC_ELEMENTS,
    ELEMENTS,
    PROTOCOL_TCP,
    RETAIN_KEYS,
    UNTYPED,
    PatchMeta,
    Rule,
    list_map,
    list_set,
    smp_merge_only,
)

Rules = dict[str, Rule]


def mount(prefix: str, fragment: Mapping[str, Rule]) -> Rules:
    """``fragment`` (paths relative to a struct) placed under ``prefix``."""
    return {f"{prefix}.{path}" if path else prefix: rule for path, rule in fragment.items()}


CONDITIONS_BY_TYPE: Rules = {"conditions": list_map("type")}

OBJECT_META: Rules = {
    "labels": ELEMENTS,
    "annotations": ELEMENTS,
    "finalizers": list_set(smp_merge=True),
    "ownerReferences": list_map("uid"),
    "ownerReferences[]": ATOMIC,
}

RESOURCES: Rules = {
    "limits": ELEMENTS,
    "requests": ELEMENTS,
    "claims": list_map("name", smp_key=None),
}

CONTAINER: Rules = {
    "ports": list_map("containerPort", "protocol", defaults=PROTOCOL_TCP),
    "env": list_map("name"),
    "env[].valueFrom.configMapKeyRef": ATOMIC,
    "env[].valueFrom.secretKeyRef": ATOMIC,
    "env[].valueFrom.fieldRef": ATOMIC,
    "env[].valueFrom.resourceFieldRef": ATOMIC,
    "env[].valueFrom.fileKeyRef": ATOMIC,
    "volumeMounts": list_map("mountPath"),
    "volumeMounts[].bindMountOptions": list_set(),
    "volumeDevices": list_map("devicePath"),
    **mount("resources", RESOURCES),
}

PVC_SPEC: Rules = {
    "selector": ATOMIC,
    "dataSource": ATOMIC,
    "resources.limits": ELEMENTS,
    "resources.requests": ELEMENTS,
}

POD_SPEC: Rules = {
    "containers": list_map("name"),
    **mount("containers[]", CONTAINER),
    "initContainers": list_map("name"),
    **mount("initContainers[]", CONTAINER),
    "ephemeralContainers": list_map("name"),
    **mount("ephemeralContainers[]", CONTAINER),
    "volumes": list_map("name", retain_keys=True),
    "volumes[].csi.volumeAttributes": ELEMENTS,
    "volumes[].csi.nodePublishSecretRef": ATOMIC,
    **mount("volumes[].ephemeral.volumeClaimTemplate.metadata", OBJECT_META),
    **mount("volumes[].ephemeral.volumeClaimTemplate.spec", PVC_SPEC),
    "imagePullSecrets": list_map("name"),
    "imagePullSecrets[]": ATOMIC,
    "hostAliases": list_map("ip"),
    "topologySpreadConstraints": list_map("topologyKey", "whenUnsatisfiable"),
    "topologySpreadConstraints[].labelSelector": ATOMIC,
    "schedulingGates": list_map("name"),
    "resourceClaims": list_map("name", retain_keys=True),
    "nodeSelector": ATOMIC_ELEMENTS,
    "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution": ATOMIC,
    "overhead": ELEMENTS,
    **mount("resources", RESOURCES),
}

POD_TEMPLATE: Rules = {**mount("metadata", OBJECT_META), **mount("spec", POD_SPEC)}

POD_STATUS: Rules = {
    **CONDITIONS_BY_TYPE,
    "podIPs": list_map("ip"),
    "hostIPs": smp_merge_only("ip"),
    "resourceClaimStatuses": list_map("name", retain_keys=True),
}

WORKLOAD: Rules = {
    "spec.selector": ATOMIC,
    **mount("spec.template", POD_TEMPLATE),
    **mount("status", CONDITIONS_BY_TYPE),
}

JOB_SPEC: Rules = {
    "selector": ATOMIC,
    **mount("template", POD_TEMPLATE),
    "podFailurePolicy.rules[].onExitCodes.values": list_set(),
}

WEBHOOK: Rules = {
    "matchConditions": list_map("name"),
    "namespaceSelector": ATOMIC,
    "objectSelector": ATOMIC,
}

SECRET_REFS = ("nodePublishSecretRef", "controllerPublishSecretRef", "nodeStageSecretRef")

KINDS: dict[tuple[str, str], Rules] = {
    ("", "Pod"): {**mount("spec", POD_SPEC), **mount("status", POD_STATUS)},
    ("", "PodTemplate"): mount("template", POD_TEMPLATE),
    ("", "ReplicationController"): {
        "spec.selector": ATOMIC_ELEMENTS,
        **mount("spec.template", POD_TEMPLATE),
        **mount("status", CONDITIONS_BY_TYPE),
    },
    ("", "Service"): {
        "spec.ports": list_map("port", "protocol", defaults=PROTOCOL_TCP),
        "spec.selector": ATOMIC_ELEMENTS,
        **mount("status", CONDITIONS_BY_TYPE),
    },
    ("", "Endpoints"): {},
    ("", "ConfigMap"): {"data": ELEMENTS, "binaryData": ELEMENTS},
    ("", "Secret"): {"data": ELEMENTS, "stringData": ELEMENTS},
    ("", "PersistentVolumeClaim"): {
        **mount("spec", PVC_SPEC),
        **mount("status", CONDITIONS_BY_TYPE),
        "status.capacity": ELEMENTS,
        "status.allocatedResources": ELEMENTS,
        "status.allocatedResourceStatuses": ELEMENTS,
    },
    ("", "PersistentVolume"): {
        "spec.capacity": ELEMENTS,
        "spec.nodeAffinity.required": ATOMIC,
        "spec.csi.volumeAttributes": ELEMENTS,
        **{
            f"spec.csi.{ref}": ATOMIC
            for ref in (*SECRET_REFS, "controllerExpandSecretRef", "nodeExpandSecretRef")
        },
    },
    ("", "Node"): {
        "spec.podCIDRs": list_set(smp_merge=True),
        **mount("status", CONDITIONS_BY_TYPE),
        "status.addresses": list_map("type"),
        "status.capacity": ELEMENTS,
        "status.allocatable": ELEMENTS,
    },
    ("", "Namespace"): mount("status", CONDITIONS_BY_TYPE),
    ("", "ServiceAccount"): {"secrets": list_map("name"), "secrets[]": ATOMIC},
    ("", "Event"): {"involvedObject": ATOMIC, "related": ATOMIC},
    ("events.k8s.io", "Event"): {"regarding": ATOMIC, "related": ATOMIC},
    ("coordination.k8s.io", "Lease"): {},
    ("apps", "Deployment"): {**WORKLOAD, "spec.strategy": RETAIN_KEYS},
    ("apps", "StatefulSet"): WORKLOAD,
    ("apps", "ReplicaSet"): WORKLOAD,
    ("apps", "DaemonSet"): WORKLOAD,
    ("apps", "ControllerRevision"): {"data": UNTYPED},
    ("batch", "Job"): {
        **mount("spec", JOB_SPEC),
        "status.conditions": smp_merge_only("type"),
        "status.uncountedTerminatedPods.succeeded": list_set(),
        "status.uncountedTerminatedPods.failed": list_set(),
    },
    ("batch", "CronJob"): {
        **mount("spec.jobTemplate.metadata", OBJECT_META),
        **mount("spec.jobTemplate.spec", JOB_SPEC),
    },
    ("policy", "PodDisruptionBudget"): {
        "spec.selector": Rule(atomic=True, patch=PatchMeta(("replace",))),
        **mount("status", CONDITIONS_BY_TYPE),
        "status.disruptedPods": ELEMENTS,
    },
    ("autoscaling", "HorizontalPodAutoscaler"): mount("status", CONDITIONS_BY_TYPE),
    ("networking.k8s.io", "NetworkPolicy"): {"spec.podSelector": ATOMIC},
    ("networking.k8s.io", "Ingress"): {},
    ("storage.k8s.io", "StorageClass"): {"parameters": ELEMENTS},
    ("storage.k8s.io", "CSINode"): {"spec.drivers": list_map("name")},
    ("scheduling.k8s.io", "PriorityClass"): {},
    ("rbac.authorization.k8s.io", "Role"): {},
    ("rbac.authorization.k8s.io", "ClusterRole"): {},
    ("rbac.authorization.k8s.io", "RoleBinding"): {"roleRef": ATOMIC},
    ("rbac.authorization.k8s.io", "ClusterRoleBinding"): {"roleRef": ATOMIC},
    ("admissionregistration.k8s.io", "MutatingWebhookConfiguration"): {
        "webhooks": list_map("name"),
        **mount("webhooks[]", WEBHOOK),
    },
    ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration"): {
        "webhooks": list_map("name"),
        **mount("webhooks[]", WEBHOOK),
    },
    ("apiextensions.k8s.io", "CustomResourceDefinition"): {
        "status.conditions": list_map("type", smp_key=None),
    },
}
