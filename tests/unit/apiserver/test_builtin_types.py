"""The built-in kinds as kube-apiserver's discovery describes them.

Expected values are Kubernetes facts: plurals and scopes from the API
reference (https://kubernetes.io/docs/reference/kubernetes-api/), short names
and categories from each REST storage's ``ShortNames()``/``Categories()``
(``pkg/registry/*/storage/storage.go``, e.g. pods: ``po``, ``all``), and the
subresources each kind serves (``kubectl api-resources`` against a cluster
lists ``pods/status``, ``deployments/scale``, ...).
"""

from __future__ import annotations

import pytest

from mo_devkit.localcluster.apiserver.builtins import BUILTIN_RESOURCE_TYPES, builtin_type

# apiVersion, kind, plural, namespaced, short names, categories
EXPECTED = [
    ("v1", "Namespace", "namespaces", False, ("ns",), ()),
    ("v1", "Pod", "pods", True, ("po",), ("all",)),
    ("v1", "Service", "services", True, ("svc",), ("all",)),
    ("v1", "Endpoints", "endpoints", True, ("ep",), ()),
    ("v1", "ConfigMap", "configmaps", True, ("cm",), ()),
    ("v1", "Secret", "secrets", True, (), ()),
    ("v1", "ServiceAccount", "serviceaccounts", True, ("sa",), ()),
    ("v1", "PersistentVolumeClaim", "persistentvolumeclaims", True, ("pvc",), ()),
    ("v1", "PersistentVolume", "persistentvolumes", False, ("pv",), ()),
    ("v1", "Node", "nodes", False, ("no",), ()),
    ("v1", "Event", "events", True, ("ev",), ()),
    ("events.k8s.io/v1", "Event", "events", True, ("ev",), ()),
    ("storage.k8s.io/v1", "StorageClass", "storageclasses", False, ("sc",), ()),
    ("apps/v1", "StatefulSet", "statefulsets", True, ("sts",), ("all",)),
    ("apps/v1", "Deployment", "deployments", True, ("deploy",), ("all",)),
    ("apps/v1", "ReplicaSet", "replicasets", True, ("rs",), ("all",)),
    ("apps/v1", "ControllerRevision", "controllerrevisions", True, (), ()),
    ("apps/v1", "DaemonSet", "daemonsets", True, ("ds",), ("all",)),
    ("batch/v1", "Job", "jobs", True, (), ("all",)),
    ("coordination.k8s.io/v1", "Lease", "leases", True, (), ()),
    ("policy/v1", "PodDisruptionBudget", "poddisruptionbudgets", True, ("pdb",), ()),
    ("rbac.authorization.k8s.io/v1", "Role", "roles", True, (), ()),
    ("rbac.authorization.k8s.io/v1", "RoleBinding", "rolebindings", True, (), ()),
    ("rbac.authorization.k8s.io/v1", "ClusterRole", "clusterroles", False, (), ()),
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", "clusterrolebindings", False, (), ()),
    (
        "apiextensions.k8s.io/v1",
        "CustomResourceDefinition",
        "customresourcedefinitions",
        False,
        ("crd", "crds"),
        ("api-extensions",),
    ),
    (
        "admissionregistration.k8s.io/v1",
        "MutatingWebhookConfiguration",
        "mutatingwebhookconfigurations",
        False,
        (),
        ("api-extensions",),
    ),
    (
        "admissionregistration.k8s.io/v1",
        "ValidatingWebhookConfiguration",
        "validatingwebhookconfigurations",
        False,
        (),
        ("api-extensions",),
    ),
]


def test_serves_exactly_the_listed_kinds() -> None:
    assert [(rt.api_version, rt.kind) for rt in BUILTIN_RESOURCE_TYPES] == [(e[0], e[1]) for e in EXPECTED]


@pytest.mark.parametrize(
    ("api_version", "kind", "plural", "namespaced", "short_names", "categories"), EXPECTED
)
def test_names_scope_and_categories(
    api_version: str,
    kind: str,
    plural: str,
    namespaced: bool,
    short_names: tuple[str, ...],
    categories: tuple[str, ...],
) -> None:
    rt = builtin_type(api_version, kind)
    assert rt is not None
    assert (rt.plural, rt.singular, rt.namespaced) == (plural, kind.lower(), namespaced)
    assert (rt.short_names, rt.categories) == (short_names, categories)
    assert not rt.is_custom


def test_verbs_are_discovery_verbs() -> None:
    """Namespaces cannot be deleted as a collection; everything else here can."""
    every = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")
    for rt in BUILTIN_RESOURCE_TYPES:
        expected = tuple(v for v in every if not (rt.kind == "Namespace" and v == "deletecollection"))
        assert rt.verbs == expected, rt.kind


def test_status_subresources() -> None:
    with_status = {rt.kind for rt in BUILTIN_RESOURCE_TYPES if rt.status_subresource}
    assert with_status == {
        "Namespace",
        "Pod",
        "Service",
        "PersistentVolumeClaim",
        "PersistentVolume",
        "Node",
        "StatefulSet",
        "Deployment",
        "ReplicaSet",
        "DaemonSet",
        "Job",
        "PodDisruptionBudget",
        "CustomResourceDefinition",
    }


def test_scale_subresource_of_the_apps_workloads() -> None:
    """The apps Scale reads ``.spec.replicas``/``.status.replicas`` and reports
    the object's own ``spec.selector`` (pkg/registry/apps/deployment/storage)."""
    scaled = {rt.kind: rt.scale for rt in BUILTIN_RESOURCE_TYPES if rt.scale is not None}
    assert set(scaled) == {"StatefulSet", "Deployment", "ReplicaSet"}
    for scale in scaled.values():
        assert (scale.spec_replicas_path, scale.status_replicas_path) == (
            ".spec.replicas",
            ".status.replicas",
        )
        assert scale.label_selector_path == ".spec.selector"


def test_builtin_type_lookup_misses() -> None:
    assert builtin_type("apps/v1", "Pod") is None
    assert builtin_type("v1", "Widget") is None
    assert builtin_type("extensions/v1beta1", "Deployment") is None
