"""Quantities of built-in kinds are stored and returned in canonical form, on
every write path; custom resources keep what was written.

kube-apiserver decodes a request into the Go types, where
``resource.Quantity.UnmarshalJSON`` parses the value, and writes every stored
and returned object with ``Quantity.MarshalJSON``, which prints the canonical
form (k8s.io/apimachinery/pkg/api/resource/quantity.go). The API reference
says it in words
(https://kubernetes.io/docs/reference/kubernetes-api/common-definitions/quantity/):
"Before serializing, Quantity will be put in 'canonical form' [...] 1.5 will
be serialized as '1500m', 1.5Gi will be serialized as '1536Mi' [...]
Non-canonical values will still parse as long as they are well formed, but
will be re-emitted in their canonical form. (So always use canonical form, or
don't diff.)" Custom resources are never decoded into Go types: their
quantity fields are ``x-kubernetes-int-or-string`` strings and stay as sent.
"""

from __future__ import annotations

import asyncio
from typing import Any

import yaml

from .conftest import Raw

NS = "/api/v1/namespaces/default"
APPLY = "application/apply-patch+yaml"
MERGE = "application/merge-patch+json"
JSON_PATCH = "application/json-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"


def pod(name: str, requests: dict[str, Any], limits: dict[str, Any] | None = None) -> dict[str, Any]:
    resources: dict[str, Any] = {"requests": requests}
    if limits is not None:
        resources["limits"] = limits
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {
            "containers": [{"name": "main", "image": "busybox:1.36", "resources": resources}],
            "volumes": [{"name": "scratch", "emptyDir": {"sizeLimit": "1024Mi"}}],
        },
    }


def resources(obj: dict[str, Any]) -> Any:
    return obj["spec"]["containers"][0]["resources"]


def rv(obj: dict[str, Any]) -> int:
    return int(obj["metadata"]["resourceVersion"])


async def test_create_stores_and_returns_the_canonical_form(raw: Raw) -> None:
    body = pod(
        "p",
        {"cpu": "0.5", "memory": "1024Mi", "ephemeral-storage": "1.5Gi"},
        {"cpu": "1000m", "memory": 1073741824, "ephemeral-storage": 0.1},
    )
    code, created = await raw.post(f"{NS}/pods", body)
    assert code == 201, created
    expected = {
        "requests": {"cpu": "500m", "memory": "1Gi", "ephemeral-storage": "1536Mi"},
        # A plain number has no binary suffix to remember: it stays decimal.
        "limits": {"cpu": "1", "memory": "1073741824", "ephemeral-storage": "100m"},
    }
    assert resources(created) == expected
    assert created["spec"]["volumes"][0]["emptyDir"]["sizeLimit"] == "1Gi"
    _, got = await raw.get(f"{NS}/pods/p")
    assert resources(got) == expected
    _, listed = await raw.get(f"{NS}/pods")
    assert resources(listed["items"][0]) == expected
    events = await raw.watch(f"{NS}/pods", {"resourceVersion": "0"}, max_events=1, timeout=2)
    assert resources(events[0]["object"]) == expected


async def test_an_update_to_an_equal_quantity_is_a_no_op(raw: Raw) -> None:
    """Equal after decoding means equal: no new resourceVersion, no event."""
    _, created = await raw.post(f"{NS}/pods", pod("p", {"cpu": "500m", "memory": "1Gi"}))
    same = dict(created)
    same["spec"] = dict(created["spec"])
    same["spec"]["containers"] = [
        dict(created["spec"]["containers"][0], resources={"requests": {"cpu": "0.5", "memory": "1024Mi"}})
    ]
    code, updated = await raw.put(f"{NS}/pods/p", same)
    assert code == 200, updated
    assert rv(updated) == rv(created)
    assert resources(updated) == {"requests": {"cpu": "500m", "memory": "1Gi"}}


async def test_every_patch_type_stores_the_canonical_form(raw: Raw) -> None:
    path = "/apis/apps/v1/namespaces/default/deployments/d"
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "d"},
        "spec": {
            "selector": {"matchLabels": {"app": "d"}},
            "template": {
                "metadata": {"labels": {"app": "d"}},
                "spec": {"containers": [{"name": "main", "image": "busybox:1.36"}]},
            },
        },
    }
    code, _ = await raw.post("/apis/apps/v1/namespaces/default/deployments", deployment)
    assert code == 201

    def limits(obj: dict[str, Any]) -> Any:
        return obj["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]

    code, strategic = await raw.patch(
        path,
        {
            "spec": {
                "template": {
                    "spec": {"containers": [{"name": "main", "resources": {"limits": {"memory": "0.5Gi"}}}]}
                }
            }
        },
        STRATEGIC,
    )
    assert code == 200, strategic
    assert limits(strategic) == {"memory": "512Mi"}
    code, patched = await raw.patch(
        path,
        [{"op": "add", "path": "/spec/template/spec/containers/0/resources/limits/cpu", "value": 0.25}],
        JSON_PATCH,
    )
    assert code == 200, patched
    assert limits(patched) == {"memory": "512Mi", "cpu": "250m"}
    code, merged = await raw.patch(
        path,
        {"spec": {"template": {"spec": {"overhead": {"cpu": "2000m"}}}}},
        MERGE,
    )
    assert code == 200, merged
    assert merged["spec"]["template"]["spec"]["overhead"] == {"cpu": "2"}
    # The same values written differently: nothing to store.
    code, again = await raw.patch(
        path, [{"op": "replace", "path": "/spec/template/spec/overhead/cpu", "value": "2.0"}], JSON_PATCH
    )
    assert code == 200, again
    assert rv(again) == rv(merged)


async def test_server_side_apply_twice_changes_nothing(raw: Raw) -> None:
    """The applied value is compared after decoding: applying ``0.5`` over a
    stored ``500m`` (or ``500m`` over it) is a no-op, and managedFields keep
    one entry for the manager."""
    path = "/apis/apps/v1/namespaces/default/statefulsets/s"
    manifest = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "s"},
        "spec": {
            "serviceName": "s",
            "selector": {"matchLabels": {"app": "s"}},
            "template": {
                "metadata": {"labels": {"app": "s"}},
                "spec": {
                    "containers": [
                        {"name": "main", "image": "busybox:1.36", "resources": {"requests": {"cpu": "0.5"}}}
                    ]
                },
            },
            "volumeClaimTemplates": [
                {
                    "metadata": {"name": "data"},
                    "spec": {
                        "accessModes": ["ReadWriteOnce"],
                        "resources": {"requests": {"storage": "1024Mi"}},
                    },
                }
            ],
        },
    }
    params = {"fieldManager": "me"}
    code, first = await raw.patch(path, yaml.safe_dump(manifest), APPLY, params=params)
    assert code == 201, first
    template = first["spec"]["template"]["spec"]["containers"][0]
    assert template["resources"] == {"requests": {"cpu": "500m"}}
    assert first["spec"]["volumeClaimTemplates"][0]["spec"]["resources"] == {"requests": {"storage": "1Gi"}}
    code, second = await raw.patch(path, yaml.safe_dump(manifest), APPLY, params=params)
    assert code == 200, second
    assert rv(second) == rv(first)
    assert second["metadata"]["managedFields"] == first["metadata"]["managedFields"]
    canonical = yaml.safe_dump(manifest).replace("cpu: '0.5'", "cpu: 500m").replace("1024Mi", "1Gi")
    code, third = await raw.patch(path, canonical, APPLY, params=params)
    assert code == 200, third
    assert rv(third) == rv(first)
    managers = [(m["manager"], m["operation"]) for m in third["metadata"]["managedFields"]]
    assert managers == [("me", "Apply")]
    changed = yaml.safe_dump(manifest).replace("cpu: '0.5'", "cpu: '0.75'")
    code, fourth = await raw.patch(path, changed, APPLY, params=params)
    assert code == 200, fourth
    assert rv(fourth) > rv(first)
    assert fourth["spec"]["template"]["spec"]["containers"][0]["resources"] == {"requests": {"cpu": "750m"}}


async def test_status_writes_are_canonical_too(raw: Raw) -> None:
    claim = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": "c"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1.5Gi"}}},
    }
    code, created = await raw.post(f"{NS}/persistentvolumeclaims", claim)
    assert code == 201, created
    assert created["spec"]["resources"]["requests"] == {"storage": "1536Mi"}
    created["status"] = {"phase": "Bound", "capacity": {"storage": "1610612736"}}
    code, updated = await raw.put(f"{NS}/persistentvolumeclaims/c/status", created)
    assert code == 200, updated
    assert updated["status"]["capacity"] == {"storage": "1610612736"}  # DecimalSI: plain digits
    code, patched = await raw.patch(
        f"{NS}/persistentvolumeclaims/c/status", {"status": {"capacity": {"storage": "2048Mi"}}}, MERGE
    )
    assert code == 200, patched
    assert patched["status"]["capacity"] == {"storage": "2Gi"}


async def test_a_quantity_that_does_not_parse_is_refused(raw: Raw) -> None:
    """The body cannot be decoded: 400 on create and update, 422 on the
    ``patch`` field for a patch (apiserver/pkg/endpoints/handlers/patch.go)."""
    code, err = await raw.post(f"{NS}/pods", pod("bad", {"cpu": "lots"}))
    assert code == 400, err
    assert err["reason"] == "BadRequest"
    assert err["message"] == (
        'Pod in version "v1" cannot be handled as a Pod: quantities must match the regular expression '
        "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
    )
    code, _ = await raw.post(f"{NS}/pods", pod("p", {"cpu": "1"}))
    assert code == 201
    code, err = await raw.patch(
        f"{NS}/pods/p", {"metadata": {"labels": {"a": "b"}}, "spec": {"overhead": {"cpu": "1.2.3"}}}, MERGE
    )
    assert code == 422, err
    assert err["details"]["causes"][0]["field"] == "patch"
    assert "quantities must match the regular expression" in err["message"]
    _, current = await raw.get(f"{NS}/pods/p")
    assert "overhead" not in current["spec"] and "labels" not in current["metadata"]


async def test_custom_resources_keep_quantities_as_written(raw: Raw) -> None:
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "gizmos.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"plural": "gizmos", "singular": "gizmo", "kind": "Gizmo"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {
                                "spec": {
                                    "type": "object",
                                    "properties": {
                                        "cpu": {
                                            "x-kubernetes-int-or-string": True,
                                            "pattern": r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))"
                                            r"(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$",
                                        },
                                        "resources": {
                                            "type": "object",
                                            "properties": {
                                                "requests": {
                                                    "type": "object",
                                                    "additionalProperties": {
                                                        "x-kubernetes-int-or-string": True
                                                    },
                                                }
                                            },
                                        },
                                    },
                                }
                            },
                        }
                    },
                }
            ],
        },
    }
    code, body = await raw.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)
    assert code == 201, body
    path = "/apis/example.com/v1/namespaces/default/gizmos"
    for _ in range(40):
        code, _ = await raw.get(path)
        if code == 200:
            break
        await asyncio.sleep(0.05)
    gizmo = {
        "apiVersion": "example.com/v1",
        "kind": "Gizmo",
        "metadata": {"name": "g"},
        "spec": {"cpu": "0.5", "resources": {"requests": {"cpu": "1000m", "memory": "1024Mi"}}},
    }
    code, created = await raw.post(path, gizmo)
    assert code == 201, created
    assert created["spec"] == gizmo["spec"]
    code, applied = await raw.patch(f"{path}/g", yaml.safe_dump(gizmo), APPLY, params={"fieldManager": "me"})
    assert code == 200, applied
    assert applied["spec"] == gizmo["spec"]
