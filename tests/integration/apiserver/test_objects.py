"""Object identity and versioning: resourceVersion, conflicts, uid,
creationTimestamp, generateName, generation and the status subresource.

Each test states what kube-apiserver does, with the document it comes from.
"""

from __future__ import annotations

import re

from mo_devkit.localcluster.controlplane import ControlPlane

from .conftest import Raw, cm

NS = "/api/v1/namespaces/default"


async def test_requests_without_the_token_are_unauthorized(raw: Raw) -> None:
    """Authentication failures answer 401 with a Status of reason Unauthorized
    (https://kubernetes.io/docs/reference/access-authn-authz/authentication/)."""
    code, body = await raw.get(f"{NS}/configmaps", auth=False)
    assert code == 401
    assert body["reason"] == "Unauthorized"
    code, body = await raw.get(f"{NS}/configmaps", headers={"Authorization": "Bearer wrong"})
    assert code == 401


async def test_resource_version_is_one_monotonic_counter_across_kinds(raw: Raw) -> None:
    """resourceVersion comes from one etcd revision shared by all objects
    (https://kubernetes.io/docs/reference/using-api/api-concepts/#resource-versions)."""
    code, a = await raw.post(f"{NS}/configmaps", cm("a"))
    assert code == 201
    code, s = await raw.post(
        f"{NS}/secrets", {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}}
    )
    assert code == 201
    code, b = await raw.post(f"{NS}/configmaps", cm("b"))
    rvs = [int(o["metadata"]["resourceVersion"]) for o in (a, s, b)]
    assert rvs == sorted(rvs) and len(set(rvs)) == 3
    code, lst = await raw.get(f"{NS}/configmaps")
    assert int(lst["metadata"]["resourceVersion"]) >= rvs[-1]


async def test_update_with_a_stale_resource_version_conflicts(raw: Raw) -> None:
    """Optimistic concurrency: an update carrying an old resourceVersion gets
    409 Conflict (api-concepts#resource-versions, "the object has been modified")."""
    _, obj = await raw.post(f"{NS}/configmaps", cm("c", {"k": "1"}))
    first = dict(obj, data={"k": "2"})
    code, updated = await raw.put(f"{NS}/configmaps/c", first)
    assert code == 200
    assert int(updated["metadata"]["resourceVersion"]) > int(obj["metadata"]["resourceVersion"])
    stale = dict(obj, data={"k": "3"})
    code, err = await raw.put(f"{NS}/configmaps/c", stale)
    assert code == 409
    assert err["reason"] == "Conflict"
    assert "the object has been modified" in err["message"]
    _, current = await raw.get(f"{NS}/configmaps/c")
    assert current["data"] == {"k": "2"}


async def test_server_sets_uid_creation_timestamp_and_generate_name(raw: Raw) -> None:
    """uid and creationTimestamp are set by the server and cannot be changed;
    generateName gets a random 5-character suffix
    (https://kubernetes.io/docs/reference/using-api/api-concepts/#generated-values)."""
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"generateName": "gen-", "uid": "mine"}}
    code, obj = await raw.post(f"{NS}/configmaps", body)
    assert code == 201
    meta = obj["metadata"]
    assert re.fullmatch(r"gen-[a-z0-9]{5}", meta["name"])
    assert meta["uid"] != "mine" and len(meta["uid"]) == 36
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", meta["creationTimestamp"])
    changed = {**obj, "metadata": {**meta, "uid": "other", "creationTimestamp": "2000-01-01T00:00:00Z"}}
    _, after = await raw.put(f"{NS}/configmaps/{meta['name']}", changed)
    assert after["metadata"]["uid"] == meta["uid"]
    assert after["metadata"]["creationTimestamp"] == meta["creationTimestamp"]


async def test_create_of_an_existing_name_is_already_exists(raw: Raw) -> None:
    await raw.post(f"{NS}/configmaps", cm("dup"))
    code, err = await raw.post(f"{NS}/configmaps", cm("dup"))
    assert code == 409 and err["reason"] == "AlreadyExists"
    assert err["details"] == {"name": "dup", "kind": "configmaps"}


async def test_no_op_update_keeps_the_resource_version(raw: Raw) -> None:
    """An update that changes nothing is not written: same resourceVersion
    (apiserver GuaranteedUpdate short-circuits identical objects)."""
    _, obj = await raw.post(f"{NS}/configmaps", cm("same", {"a": "b"}))
    code, again = await raw.put(f"{NS}/configmaps/same", obj)
    assert code == 200
    assert again["metadata"]["resourceVersion"] == obj["metadata"]["resourceVersion"]


def _sts(name: str, replicas: int = 1, image: str = "busybox:1") -> dict:
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "serviceName": name,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "main", "image": image}]},
            },
        },
    }


async def test_generation_bumps_on_spec_changes_only(raw: Raw) -> None:
    """metadata.generation: "A sequence number representing a specific generation
    of the desired state", incremented on spec changes, not on metadata or status
    (pkg/registry/apps/statefulset/strategy.go PrepareForUpdate)."""
    base = "/apis/apps/v1/namespaces/default/statefulsets"
    _, sts = await raw.post(base, _sts("g"))
    assert sts["metadata"]["generation"] == 1
    sts["metadata"]["labels"] = {"x": "y"}
    _, sts = await raw.put(f"{base}/g", sts)
    assert sts["metadata"]["generation"] == 1
    sts["status"] = {"replicas": 5, "observedGeneration": 1}
    _, sts = await raw.put(f"{base}/g/status", sts)
    assert sts["metadata"]["generation"] == 1
    sts["spec"]["replicas"] = 3
    _, sts = await raw.put(f"{base}/g", sts)
    assert sts["metadata"]["generation"] == 2


async def test_status_subresource_splits_the_object(raw: Raw) -> None:
    """With a status subresource, writes to the main resource ignore status and
    writes to /status ignore everything but status
    (https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definitions/#status-subresource)."""
    base = "/apis/apps/v1/namespaces/default/statefulsets"
    _, sts = await raw.post(base, dict(_sts("s"), status={"replicas": 9}))
    assert sts.get("status", {}).get("replicas", 0) == 0
    sts["status"] = {"replicas": 2}
    _, after_main = await raw.put(f"{base}/s", sts)
    assert after_main.get("status", {}).get("replicas", 0) == 0
    after_main["status"] = {"replicas": 2}
    after_main["spec"]["replicas"] = 7
    after_main["metadata"]["labels"] = {"ignored": "yes"}
    code, after_status = await raw.put(f"{base}/s/status", after_main)
    assert code == 200
    assert after_status["status"]["replicas"] == 2
    assert after_status["spec"]["replicas"] == 1
    assert "ignored" not in (after_status["metadata"].get("labels") or {})


async def test_scale_subresource_of_a_statefulset(raw: Raw) -> None:
    """autoscaling/v1 Scale on statefulsets/scale reads and writes spec.replicas
    (https://kubernetes.io/docs/reference/kubernetes-api/workload-resources/stateful-set-v1/)."""
    base = "/apis/apps/v1/namespaces/default/statefulsets"
    await raw.post(base, _sts("sc", 2))
    code, scale = await raw.get(f"{base}/sc/scale")
    assert code == 200
    assert scale["kind"] == "Scale" and scale["apiVersion"] == "autoscaling/v1"
    assert scale["spec"]["replicas"] == 2
    assert scale["status"]["selector"] == "app=sc"
    code, scale = await raw.patch(
        f"{base}/sc/scale", {"spec": {"replicas": 4}}, "application/merge-patch+json"
    )
    assert code == 200 and scale["spec"]["replicas"] == 4
    _, sts = await raw.get(f"{base}/sc")
    assert sts["spec"]["replicas"] == 4
    assert sts["metadata"]["generation"] == 2


async def test_dry_run_validates_without_storing(raw: Raw) -> None:
    """dryRun=All runs every stage but storage
    (https://kubernetes.io/docs/reference/using-api/api-concepts/#dry-run)."""
    code, obj = await raw.post(f"{NS}/configmaps", cm("dry"), params={"dryRun": "All"})
    assert code == 201 and obj["metadata"]["name"] == "dry"
    code, _ = await raw.get(f"{NS}/configmaps/dry")
    assert code == 404
    code, err = await raw.post(f"{NS}/configmaps", cm("BAD_NAME"), params={"dryRun": "All"})
    assert code == 422 and err["reason"] == "Invalid"


async def test_invalid_objects_get_422_with_field_causes(raw: Raw) -> None:
    """Validation errors are 422 Invalid with details.causes[].field
    (https://kubernetes.io/docs/reference/using-api/api-concepts/#api-conventions)."""
    code, err = await raw.post(f"{NS}/configmaps", cm("Not_Valid"))
    assert code == 422
    assert err["reason"] == "Invalid"
    assert err["details"]["causes"][0]["field"] == "metadata.name"
    assert 'ConfigMap "Not_Valid" is invalid' in err["message"]


async def test_objects_in_a_missing_namespace_are_not_found(raw: Raw) -> None:
    code, err = await raw.post("/api/v1/namespaces/nope/configmaps", cm("x"))
    assert code == 404
    assert err["message"] == 'namespaces "nope" not found'


async def test_lightkube_typed_models_read_what_the_server_returns(control_plane: ControlPlane) -> None:
    """A typed client needs the fields Go always writes (``StatefulSetStatus.replicas``
    is required in lightkube's model): kube-apiserver returns them, so must we."""
    from lightkube.models.apps_v1 import StatefulSetSpec
    from lightkube.models.core_v1 import Container, PodSpec, PodTemplateSpec
    from lightkube.models.meta_v1 import LabelSelector, ObjectMeta
    from lightkube.resources.apps_v1 import StatefulSet

    client = control_plane.client()
    try:
        created = await client.create(
            StatefulSet(
                metadata=ObjectMeta(name="db", namespace="default"),
                spec=StatefulSetSpec(
                    selector=LabelSelector(matchLabels={"app": "db"}),
                    serviceName="db",
                    template=PodTemplateSpec(
                        metadata=ObjectMeta(labels={"app": "db"}),
                        spec=PodSpec(containers=[Container(name="db", image="db:1")]),
                    ),
                ),
            )
        )
        assert created.status is not None and created.status.replicas == 0
        got = await client.get(StatefulSet, "db", namespace="default")
        assert got.spec.template.spec.containers[0].resources is not None
    finally:
        await client.close()
