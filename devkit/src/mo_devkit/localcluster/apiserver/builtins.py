"""The built-in kinds the server serves, described as kube-apiserver describes
them in discovery.

Plural, scope, verbs and subresources come from lightkube's generated
resources, so they follow the Kubernetes API they were generated from. Short
names and categories are not in lightkube: they are the values kube-apiserver's
REST storages return from ``ShortNames()`` and ``Categories()`` (for example
``pkg/registry/core/pod/storage/storage.go``: ``po``, category ``all``), which is
what makes ``kubectl get po`` and ``kubectl get all`` work.
"""

from __future__ import annotations

from lightkube.core import resource as lkres
from lightkube.resources import (
    admissionregistration_v1,
    apiextensions_v1,
    apps_v1,
    batch_v1,
    coordination_v1,
    core_v1,
    events_v1,
    policy_v1,
    rbac_authorization_v1,
    storage_v1,
)

from .resources import ResourceType, ScaleSubresource

# lightkube's verb names -> the Kubernetes verbs discovery lists. The
# cluster-wide list/watch of a namespaced kind is the same list/watch verb.
_VERBS = {
    "post": "create",
    "put": "update",
    "global_list": "list",
    "global_watch": "watch",
}

# The scale subresource of the apps kinds: the selector a Scale reports is the
# object's own ``spec.selector`` (pkg/registry/apps/*/storage/storage.go).
_APPS_SCALE = ScaleSubresource(
    spec_replicas_path=".spec.replicas",
    status_replicas_path=".status.replicas",
    label_selector_path=".spec.selector",
)

# (lightkube resource, short names, categories), in the order discovery lists them.
_KINDS: tuple[tuple[type[lkres.Resource], tuple[str, ...], tuple[str, ...]], ...] = (
    (core_v1.Namespace, ("ns",), ()),
    (core_v1.Pod, ("po",), ("all",)),
    (core_v1.Service, ("svc",), ("all",)),
    (core_v1.Endpoints, ("ep",), ()),
    (core_v1.ConfigMap, ("cm",), ()),
    (core_v1.Secret, (), ()),
    (core_v1.ServiceAccount, ("sa",), ()),
    (core_v1.PersistentVolumeClaim, ("pvc",), ()),
    (core_v1.PersistentVolume, ("pv",), ()),
    (core_v1.Node, ("no",), ()),
    (core_v1.Event, ("ev",), ()),
    (events_v1.Event, ("ev",), ()),
    (storage_v1.StorageClass, ("sc",), ()),
    (apps_v1.StatefulSet, ("sts",), ("all",)),
    (apps_v1.Deployment, ("deploy",), ("all",)),
    (apps_v1.ReplicaSet, ("rs",), ("all",)),
    (apps_v1.ControllerRevision, (), ()),
    (apps_v1.DaemonSet, ("ds",), ("all",)),
    (batch_v1.Job, (), ("all",)),
    (coordination_v1.Lease, (), ()),
    (policy_v1.PodDisruptionBudget, ("pdb",), ()),
    (rbac_authorization_v1.Role, (), ()),
    (rbac_authorization_v1.RoleBinding, (), ()),
    (rbac_authorization_v1.ClusterRole, (), ()),
    (rbac_authorization_v1.ClusterRoleBinding, (), ()),
    (apiextensions_v1.CustomResourceDefinition, ("crd", "crds"), ("api-extensions",)),
    (admissionregistration_v1.MutatingWebhookConfiguration, (), ("api-extensions",)),
    (admissionregistration_v1.ValidatingWebhookConfiguration, (), ("api-extensions",)),
)


def _resource_type(
    res: type[lkres.Resource], short_names: tuple[str, ...], categories: tuple[str, ...]
) -> ResourceType:
    info = res._api_info
    verbs = sorted({_VERBS.get(v, v) for v in info.verbs})
    return ResourceType(
        group=info.resource.group,
        version=info.resource.version,
        kind=info.resource.kind,
        plural=info.plural,
        singular=info.resource.kind.lower(),
        namespaced=issubclass(res, lkres.NamespacedResource),
        verbs=tuple(verbs),
        short_names=short_names,
        categories=categories,
        status_subresource=hasattr(res, "Status"),
        scale=_APPS_SCALE if hasattr(res, "Scale") else None,
    )


BUILTIN_RESOURCE_TYPES: tuple[ResourceType, ...] = tuple(_resource_type(*k) for k in _KINDS)

_BY_API_VERSION_KIND = {(rt.api_version, rt.kind): rt for rt in BUILTIN_RESOURCE_TYPES}


def builtin_type(api_version: str, kind: str) -> ResourceType | None:
    """The built-in type served for ``apiVersion``/``kind``, or None."""
    return _BY_API_VERSION_KIND.get((api_version, kind))
