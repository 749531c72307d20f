"""Merge rules of built-in kinds and CRD schemas.

Built-in rules come from the tags of the Kubernetes API types: k8s.io/api
core/v1/types.go (``patchStrategy``/``patchMergeKey``, ``+listType``,
``+listMapKey``, ``+structType=atomic``, ``+mapType=atomic``), apps/v1,
batch/v1, policy/v1, admissionregistration/v1, rbac/v1, and ObjectMeta in
k8s.io/apimachinery pkg/apis/meta/v1/types.go. CRD rules follow
https://kubernetes.io/docs/reference/using-api/server-side-apply/#merge-strategy
(``x-kubernetes-list-type``, ``x-kubernetes-list-map-keys``,
``x-kubernetes-map-type``; unannotated lists are atomic).
"""

from __future__ import annotations

import pytest

from mo_devkit.localcluster.apiserver.patching.typeinfo import (
    builtin_type_info,
    schema_type_info,
    split_path,
    type_info_for,
)
from mo_devkit.localcluster.apiserver.patching.typerules import ListType
from mo_devkit.localcluster.apiserver.resources import ResourceType

POD_TEMPLATE_OWNERS = [
    ("apps", "Deployment", "spec.template.spec"),
    ("apps", "StatefulSet", "spec.template.spec"),
    ("apps", "ReplicaSet", "spec.template.spec"),
    ("apps", "DaemonSet", "spec.template.spec"),
    ("batch", "Job", "spec.template.spec"),
    ("batch", "CronJob", "spec.jobTemplate.spec.template.spec"),
    ("", "PodTemplate", "template.spec"),
    ("", "Pod", "spec"),
]


def test_split_path_marks_list_items() -> None:
    assert split_path("spec.containers[].ports") == ("spec", "containers", "[]", "ports")
    assert split_path(("a", "[]")) == ("a", "[]")


@pytest.mark.parametrize(("group", "kind", "spec"), POD_TEMPLATE_OWNERS)
def test_pod_spec_lists_in_every_pod_template(group: str, kind: str, spec: str) -> None:
    """PodSpec: containers/initContainers/ephemeralContainers/imagePullSecrets/
    volumes are ``listType=map`` keyed by name with ``patchStrategy:"merge"``
    (volumes also ``retainKeys``); tolerations carry no tags (atomic)."""
    ti = builtin_type_info(group, kind)
    for field in ("containers", "initContainers", "ephemeralContainers", "imagePullSecrets", "volumes"):
        assert ti.list_type(f"{spec}.{field}") == ListType("map", ("name",)), field
        assert ti.patch_meta(f"{spec}.{field}").merge_key == "name"
        assert ti.patch_meta(f"{spec}.{field}").strategy == "merge"
    assert ti.patch_meta(f"{spec}.volumes").retain_keys
    assert ti.list_type(f"{spec}.tolerations") == ListType("atomic")
    assert ti.patch_meta(f"{spec}.tolerations").strategy == ""
    assert ti.is_atomic_map(f"{spec}.nodeSelector")
    assert ti.is_atomic_map(f"{spec}.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution")


def test_container_lists() -> None:
    """Container: ports keyed by containerPort+protocol (protocol defaults to
    TCP) but merged by containerPort in a strategic patch; env by name with
    atomic key selectors; envFrom atomic; volumeMounts by mountPath."""
    ti = builtin_type_info("", "Pod")
    c = "spec.containers[]"
    assert ti.list_type(f"{c}.ports") == ListType("map", ("containerPort", "protocol"))
    assert ti.key_defaults(f"{c}.ports") == {"protocol": "TCP"}
    assert ti.patch_meta(f"{c}.ports").merge_key == "containerPort"
    assert ti.list_type(f"{c}.env") == ListType("map", ("name",))
    assert ti.is_atomic_map(f"{c}.env[].valueFrom.secretKeyRef")
    assert ti.list_type(f"{c}.envFrom") == ListType("atomic")
    assert ti.list_type(f"{c}.volumeMounts") == ListType("map", ("mountPath",))
    assert ti.patch_meta(f"{c}.volumeMounts").merge_key == "mountPath"
    assert ti.is_element_map(f"{c}.resources.limits")
    assert ti.list_type(f"{c}.args") == ListType("atomic")


def test_object_meta_everywhere() -> None:
    """ObjectMeta: finalizers ``listType=set`` + merge, ownerReferences
    ``listType=map`` keyed by uid (items atomic: ``+structType=atomic``),
    labels/annotations free-form maps; also for kinds absent from the table."""
    for ti in (builtin_type_info("", "ConfigMap"), builtin_type_info("example.com", "Unknown")):
        assert ti.list_type("metadata.finalizers") == ListType("set")
        assert ti.patch_meta("metadata.finalizers").strategy == "merge"
        assert ti.list_type("metadata.ownerReferences") == ListType("map", ("uid",))
        assert ti.patch_meta("metadata.ownerReferences").merge_key == "uid"
        assert ti.is_atomic_map("metadata.ownerReferences[]")
        assert ti.is_element_map("metadata.labels")
        assert ti.is_element_map("metadata.annotations")
        assert ti.list_type("metadata.managedFields") == ListType("atomic")


def test_pod_template_metadata_is_object_meta() -> None:
    ti = builtin_type_info("apps", "StatefulSet")
    assert ti.is_element_map("spec.template.metadata.labels")
    assert ti.list_type("spec.template.metadata.finalizers") == ListType("set")


def test_workload_selectors_and_claims() -> None:
    """LabelSelector is ``+structType=atomic``; StatefulSet
    volumeClaimTemplates is ``+listType=atomic``; Deployment strategy has
    ``patchStrategy:"retainKeys"``; PDB selector ``patchStrategy:"replace"``."""
    for kind in ("Deployment", "StatefulSet", "ReplicaSet", "DaemonSet"):
        assert builtin_type_info("apps", kind).is_atomic_map("spec.selector")
    assert builtin_type_info("batch", "Job").is_atomic_map("spec.selector")
    sts = builtin_type_info("apps", "StatefulSet")
    assert sts.list_type("spec.volumeClaimTemplates") == ListType("atomic")
    assert builtin_type_info("apps", "Deployment").patch_meta("spec.strategy").retain_keys
    pdb = builtin_type_info("policy", "PodDisruptionBudget")
    assert pdb.patch_meta("spec.selector").strategy == "replace"
    assert pdb.is_atomic_map("spec.selector")


@pytest.mark.parametrize(
    ("group", "kind"),
    [
        ("", "Pod"),
        ("", "Node"),
        ("", "Namespace"),
        ("", "PersistentVolumeClaim"),
        ("", "Service"),
        ("apps", "Deployment"),
        ("apps", "StatefulSet"),
        ("policy", "PodDisruptionBudget"),
        ("apiextensions.k8s.io", "CustomResourceDefinition"),
    ],
)
def test_status_conditions_keyed_by_type(group: str, kind: str) -> None:
    assert builtin_type_info(group, kind).list_type("status.conditions") == ListType("map", ("type",))


def test_job_conditions_merge_only_in_strategic_patch() -> None:
    """JobStatus.conditions: ``patchStrategy:"merge" patchMergeKey:"type"``
    but ``+listType=atomic``."""
    ti = builtin_type_info("batch", "Job")
    assert ti.list_type("status.conditions") == ListType("atomic")
    assert ti.patch_meta("status.conditions").merge_key == "type"


def test_core_kinds() -> None:
    """Service ports keyed by port+protocol, merged by port; Node addresses
    by type, podCIDRs a merged set, taints atomic; ServiceAccount secrets by
    name; Secret/ConfigMap data free-form; Event involvedObject atomic."""
    svc = builtin_type_info("", "Service")
    assert svc.list_type("spec.ports") == ListType("map", ("port", "protocol"))
    assert svc.patch_meta("spec.ports").merge_key == "port"
    assert svc.is_atomic_map("spec.selector")
    node = builtin_type_info("", "Node")
    assert node.list_type("status.addresses") == ListType("map", ("type",))
    assert node.list_type("spec.podCIDRs") == ListType("set")
    assert node.list_type("spec.taints") == ListType("atomic")
    assert node.is_element_map("status.capacity")
    assert builtin_type_info("", "ServiceAccount").list_type("secrets") == ListType("map", ("name",))
    assert builtin_type_info("", "Secret").is_element_map("data")
    assert builtin_type_info("", "ConfigMap").is_element_map("binaryData")
    assert builtin_type_info("", "Event").is_atomic_map("involvedObject")
    assert builtin_type_info("", "PersistentVolumeClaim").is_element_map("spec.resources.requests")


def test_admission_and_rbac() -> None:
    for kind in ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"):
        ti = builtin_type_info("admissionregistration.k8s.io", kind)
        assert ti.list_type("webhooks") == ListType("map", ("name",))
        assert ti.patch_meta("webhooks").merge_key == "name"
        assert ti.is_atomic_map("webhooks[].namespaceSelector")
    for kind in ("RoleBinding", "ClusterRoleBinding"):
        ti = builtin_type_info("rbac.authorization.k8s.io", kind)
        assert ti.is_atomic_map("roleRef")
        assert ti.list_type("subjects") == ListType("atomic")


CRD_SCHEMA = {
    "type": "object",
    "properties": {
        "metadata": {"type": "object"},
        "spec": {
            "type": "object",
            "properties": {
                "groups": {
                    "type": "array",
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["name", "zone"],
                    "items": {
                        "type": "object",
                        "properties": {
                            "name": {"type": "string"},
                            "zone": {"type": "string", "default": "a"},
                            "tags": {"type": "array", "items": {"type": "string"}},
                        },
                    },
                },
                "flags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
                "plain": {"type": "array", "items": {"type": "string"}},
                "ref": {"type": "object", "x-kubernetes-map-type": "atomic"},
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
            },
        },
    },
}


def test_schema_list_and_map_types() -> None:
    ti = schema_type_info(CRD_SCHEMA)
    assert ti.list_type("spec.groups") == ListType("map", ("name", "zone"))
    assert ti.key_defaults("spec.groups") == {"zone": "a"}
    assert ti.list_type("spec.groups[].tags") == ListType("atomic")
    assert ti.list_type("spec.flags") == ListType("set")
    assert ti.list_type("spec.plain") == ListType("atomic")
    assert ti.is_atomic_map("spec.ref")
    assert ti.is_element_map("spec.labels")
    assert not ti.is_element_map("spec")
    # Strategic merge patch is not served for custom resources: no strategies.
    assert ti.patch_meta("spec.groups").strategy == ""


def test_schema_preserved_fields_are_free_form_all_the_way_down() -> None:
    ti = schema_type_info(CRD_SCHEMA)
    assert ti.is_element_map("spec.free")
    assert ti.is_element_map("spec.free.anything.deeper")
    assert ti.list_type("spec.free.anything.list") == ListType("atomic")


def test_schema_metadata_is_object_meta() -> None:
    """A CRD's metadata schema is ObjectMeta whatever the CRD says."""
    ti = schema_type_info(CRD_SCHEMA)
    assert ti.list_type("metadata.finalizers") == ListType("set")
    assert ti.is_element_map("metadata.labels")
    assert schema_type_info(None).list_type("metadata.ownerReferences") == ListType("map", ("uid",))


def test_type_info_for_picks_schema_or_table_and_caches() -> None:
    custom = ResourceType(
        group="example.com",
        version="v1",
        kind="Thing",
        plural="things",
        singular="thing",
        namespaced=True,
        schema=CRD_SCHEMA,
        crd_name="things.example.com",
        status_subresource=False,
    )
    first = type_info_for(custom)
    assert first is type_info_for(custom)
    assert first.list_type("spec.flags") == ListType("set")
    assert first.status_subresource is False
    builtin = ResourceType(
        group="apps",
        version="v1",
        kind="Deployment",
        plural="deployments",
        singular="deployment",
        namespaced=True,
    )
    assert type_info_for(builtin).is_atomic_map("spec.selector")
