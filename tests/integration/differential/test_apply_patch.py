"""Server-side apply (field ownership, conflicts with their causes, force,
removal of fields no longer applied, apply to create, status apply) and the
other patch types on built-in kinds: strategic merge by list merge keys,
``$patch: delete``, ``$retainKeys``, merge patch and JSON patch
(https://kubernetes.io/docs/reference/using-api/server-side-apply/,
sig-api-machinery strategic-merge-patch.md)."""

from __future__ import annotations

from typing import Any

from .harness import JSON_PATCH, MERGE, STRATEGIC, Target, Transcript
from .harness import test_differential as test_differential

Obj = dict[str, Any]


def _cm(name: str, data: dict[str, str], **meta: Any) -> Obj:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, **meta}, "data": data}


def _managers(body: Obj) -> list[Any]:
    return [
        [m["manager"], m["operation"], m.get("subresource", ""), m.get("fieldsV1")]
        for m in body["metadata"].get("managedFields", [])
    ]


async def case_apply_creates_then_conflicts(t: Target) -> Transcript:
    """Apply to a missing object creates it; a second manager applying
    another value for an owned field gets 409 Conflict naming the owner and
    field in the causes; with force it takes the field over."""
    tr = Transcript()
    path = t.ns_path("configmaps", "x")
    tr.add("create", await t.apply(path, _cm("x", {"a": "1", "b": "1"}), "alpha"))
    tr.add("conflict", await t.apply(path, _cm("x", {"a": "2"}), "beta"))
    same_value = await t.apply(path, _cm("x", {"b": "1"}), "beta")
    tr.add("same value is shared", _managers(same_value.body))
    forced = await t.apply(path, _cm("x", {"a": "2", "b": "1"}), "beta", force=True)
    tr.add("forced", [forced.body["data"], _managers(forced.body)])
    return tr


async def case_apply_conflict_with_an_update_manager(t: Target) -> Transcript:
    """Fields set by create/update belong to that manager (operation Update);
    applying a different value conflicts with it too."""
    tr = Transcript()
    await t.post(t.ns_path("configmaps"), _cm("x", {"a": "1"}), params={"fieldManager": "editor"})
    tr.add("conflict", await t.apply(t.ns_path("configmaps", "x"), _cm("x", {"a": "2", "c": "3"}), "applier"))
    return tr


async def case_apply_removes_fields_it_no_longer_applies(t: Target) -> Transcript:
    """A field the manager applied before and leaves out now is removed,
    unless another manager also owns it."""
    tr = Transcript()
    path = t.ns_path("configmaps", "x")
    await t.apply(path, _cm("x", {"a": "1", "b": "2", "c": "3"}, labels={"l": "1"}), "alpha")
    await t.apply(path, _cm("x", {"c": "3"}), "beta")
    reply = await t.apply(path, _cm("x", {"a": "1"}), "alpha")
    tr.add("after", [reply.body["data"], reply.body["metadata"].get("labels"), _managers(reply.body)])
    return tr


async def case_apply_requires_a_field_manager_and_a_matching_kind(t: Target) -> Transcript:
    """An apply names its manager (422 on PatchOptions without one), its kind
    (400 without) and the object of the URL; a YAML body is read as YAML."""
    tr = Transcript()
    path = t.ns_path("configmaps", "x")
    tr.add("no manager", await t.patch(path, _cm("x", {}), "application/apply-patch+yaml"))
    tr.add("no kind", await t.apply(path, {"metadata": {"name": "x"}}, "m"))
    tr.add("other name", await t.apply(path, _cm("y", {}), "m"))
    tr.add(
        "yaml body",
        await t.apply(path, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  k: v\n", "m"),
    )
    return tr


async def case_apply_service_ports_by_merge_key(t: Target) -> Transcript:
    """Two managers each apply one port of a Service: ports are a map keyed
    by port and protocol, so both are kept and each owns its own; a
    manager that stops applying its port removes it. (A Service, which no
    controller writes, so that the ownership seen is the appliers' alone.)"""
    tr = Transcript()
    path = t.ns_path("services", "s")

    def service(*ports: int) -> Obj:
        return {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "s"},
            "spec": {"selector": {"app": "s"}, "ports": [{"name": f"p{p}", "port": p} for p in ports]},
        }

    first = await t.apply(path, service(80), "one")
    tr.add("first", [first.code, _managers(first.body)])
    second = await t.apply(path, service(81), "two")
    tr.add("second", [second.code, second.body.get("spec", {}).get("ports"), _managers(second.body)])
    again = await t.apply(path, {**service(), "spec": {"selector": {"app": "s"}}}, "two")
    tr.add(
        "two gives its port up", [again.code, again.body.get("spec", {}).get("ports"), _managers(again.body)]
    )
    return tr


async def case_apply_status_subresource(t: Target) -> Transcript:
    """Apply through /status sets only status, recorded with subresource
    "status"; the main resource ignores status."""
    tr = Transcript()
    svc = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "s"},
        "spec": {"type": "ClusterIP", "ports": [{"port": 80}]},
    }
    path = t.ns_path("services", "s")
    await t.apply(path, svc, "spec-owner")
    status = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "s"},
        "status": {
            "conditions": [
                {
                    "type": "Ready",
                    "status": "True",
                    "reason": "Ok",
                    "message": "",
                    "lastTransitionTime": "2024-01-01T00:00:00Z",
                }
            ]
        },
    }
    reply = await t.apply(path + "/status", status, "status-owner")
    tr.add("status", [reply.code, reply.body.get("status"), _managers(reply.body)])
    ignored = await t.apply(path, {**svc, "status": {"conditions": []}}, "spec-owner")
    tr.add("main ignores status", ignored.body.get("status"))
    return tr


async def case_strategic_merge_lists_by_key(t: Target) -> Transcript:
    """Containers merge by name, ports by containerPort, env by name;
    ``$patch: delete`` removes one item, ``$patch: replace`` a whole list."""
    tr = Transcript()
    pod = {
        "metadata": {"name": "p"},
        "spec": {
            "containers": [
                {
                    "name": "a",
                    "image": "a:1",
                    "env": [{"name": "X", "value": "1"}],
                    "ports": [{"containerPort": 80}],
                },
                {"name": "b", "image": "b:1"},
            ]
        },
    }
    path = t.ns_path("pods")
    await t.post(path, pod)
    merged = await t.patch(
        path + "/p",
        {
            "spec": {
                "containers": [
                    {
                        "name": "a",
                        "image": "a:2",
                        "env": [{"name": "Y", "value": "2"}],
                        "ports": [{"containerPort": 81}],
                    },
                    {"name": "b", "$patch": "delete"},
                ]
            }
        },
        STRATEGIC,
    )
    tr.add("image change on a pod", merged)
    dep = {
        "metadata": {"name": "d"},
        "spec": {
            "replicas": 0,
            "selector": {"matchLabels": {"app": "d"}},
            "template": {
                "metadata": {"labels": {"app": "d"}},
                "spec": {
                    "containers": [
                        {
                            "name": "a",
                            "image": "a:1",
                            "env": [{"name": "X", "value": "1"}, {"name": "Z", "value": "3"}],
                        },
                        {"name": "b", "image": "b:1"},
                    ]
                },
            },
        },
    }
    await t.post(t.ns_path("deployments", group="apps"), dep)
    dpath = t.ns_path("deployments", "d", group="apps")
    patch = {
        "spec": {
            "template": {
                "spec": {
                    "containers": [
                        {
                            "name": "a",
                            "env": [{"name": "Y", "value": "2"}, {"name": "Z", "$patch": "delete"}],
                        },
                        {"name": "c", "image": "c:1"},
                        {"name": "b", "$patch": "delete"},
                    ]
                }
            }
        }
    }
    merged = await t.patch(dpath, patch, STRATEGIC)
    tr.add("merged", merged.body["spec"]["template"]["spec"]["containers"])
    replaced = await t.patch(
        dpath,
        {
            "spec": {
                "template": {"spec": {"containers": [{"name": "z", "image": "z:1"}, {"$patch": "replace"}]}}
            }
        },
        STRATEGIC,
    )
    tr.add("replaced", replaced.body["spec"]["template"]["spec"]["containers"])
    return tr


async def case_strategic_merge_retain_keys_and_set_element_order(t: Target) -> Transcript:
    """``$retainKeys`` clears the fields of a union it does not list (the
    Deployment strategy that kubectl switches to Recreate);
    ``$setElementOrder`` orders a merged list."""
    tr = Transcript()
    dep = {
        "metadata": {"name": "d"},
        "spec": {
            "replicas": 0,
            "selector": {"matchLabels": {"app": "d"}},
            "template": {
                "metadata": {"labels": {"app": "d"}},
                "spec": {"containers": [{"name": "a", "image": "a"}, {"name": "b", "image": "b"}]},
            },
        },
    }
    await t.post(t.ns_path("deployments", group="apps"), dep)
    path = t.ns_path("deployments", "d", group="apps")
    retain = {"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}}
    tr.add("retainKeys", (await t.patch(path, retain, STRATEGIC)).body["spec"]["strategy"])
    without = {"spec": {"strategy": {"type": "RollingUpdate"}}}
    tr.add("back to rolling", (await t.patch(path, without, STRATEGIC)).body["spec"]["strategy"])
    order = {
        "spec": {
            "template": {
                "spec": {
                    "$setElementOrder/containers": [{"name": "b"}, {"name": "a"}],
                    "containers": [{"name": "a", "image": "a:2"}],
                }
            }
        }
    }
    reply = await t.patch(path, order, STRATEGIC)
    tr.add("order", [[c["name"], c["image"]] for c in reply.body["spec"]["template"]["spec"]["containers"]])
    return tr


async def case_strategic_merge_of_maps_and_primitive_lists(t: Target) -> Transcript:
    """null deletes a map key; finalizers (a merge list of strings) merge;
    ``$deleteFromPrimitiveList`` removes one; tolerations (no merge key)
    are replaced."""
    tr = Transcript()
    dep = {
        "metadata": {"name": "d", "labels": {"a": "1", "b": "2"}, "finalizers": ["x.io/one"]},
        "spec": {
            "replicas": 0,
            "selector": {"matchLabels": {"app": "d"}},
            "template": {
                "metadata": {"labels": {"app": "d"}},
                "spec": {
                    "containers": [{"name": "a", "image": "a"}],
                    "tolerations": [{"key": "k1", "operator": "Exists"}],
                },
            },
        },
    }
    await t.post(t.ns_path("deployments", group="apps"), dep)
    path = t.ns_path("deployments", "d", group="apps")
    patch = {
        "metadata": {"labels": {"a": None, "c": "3"}, "finalizers": ["x.io/two"]},
        "spec": {"template": {"spec": {"tolerations": [{"key": "k2", "operator": "Exists"}]}}},
    }
    reply = await t.patch(path, patch, STRATEGIC)
    meta, spec = reply.body.get("metadata", {}), reply.body.get("spec", {})
    tolerations = spec.get("template", {}).get("spec", {}).get("tolerations")
    tr.add("patched", [reply.code, meta.get("labels"), meta.get("finalizers"), tolerations])
    unset = {"metadata": {"$deleteFromPrimitiveList/finalizers": ["x.io/one", "x.io/two"]}}
    reply = await t.patch(path, unset, STRATEGIC)
    tr.add("deleted", [reply.code, reply.body.get("metadata", {}).get("finalizers")])
    return tr


async def case_merge_patch_replaces_lists(t: Target) -> Transcript:
    """RFC 7386: lists are replaced whole, null removes a key."""
    tr = Transcript()
    dep = {
        "metadata": {"name": "d", "labels": {"a": "1"}},
        "spec": {
            "replicas": 0,
            "selector": {"matchLabels": {"app": "d"}},
            "template": {
                "metadata": {"labels": {"app": "d"}},
                "spec": {"containers": [{"name": "a", "image": "a"}, {"name": "b", "image": "b"}]},
            },
        },
    }
    await t.post(t.ns_path("deployments", group="apps"), dep)
    path = t.ns_path("deployments", "d", group="apps")
    patch = {
        "metadata": {"labels": {"a": None}},
        "spec": {"template": {"spec": {"containers": [{"name": "c", "image": "c"}]}}},
    }
    reply = await t.patch(path, patch, MERGE)
    tr.add(
        "patched",
        [reply.body["metadata"].get("labels"), reply.body["spec"]["template"]["spec"]["containers"]],
    )
    return tr


async def case_json_patch_operations(t: Target) -> Transcript:
    """RFC 6902 add, replace, remove, copy, move and test, applied in order
    and all or nothing."""
    tr = Transcript()
    await t.post(t.ns_path("configmaps"), _cm("x", {"a": "1", "b": "2"}))
    path = t.ns_path("configmaps", "x")
    ops = [
        {"op": "add", "path": "/data/c", "value": "3"},
        {"op": "replace", "path": "/data/a", "value": "10"},
        {"op": "remove", "path": "/data/b"},
        {"op": "copy", "from": "/data/a", "path": "/data/d"},
        {"op": "move", "from": "/data/c", "path": "/data/e"},
        {"op": "test", "path": "/data/e", "value": "3"},
        {"op": "add", "path": "/metadata/labels", "value": {"k~1x": "v"}},
    ]
    tr.add("applied", (await t.patch(path, ops, JSON_PATCH)).body.get("data"))
    failing = [
        {"op": "add", "path": "/data/f", "value": "6"},
        {"op": "test", "path": "/data/a", "value": "nope"},
    ]
    tr.add("all or nothing", (await t.patch(path, failing, JSON_PATCH)).code)
    tr.add("unchanged", (await t.get(path)).body.get("data"))
    return tr


async def case_update_preserves_managed_fields_and_no_op_keeps_version(t: Target) -> Transcript:
    """A write that changes nothing stores nothing: same resourceVersion,
    no new managedFields time; a real change moves both."""
    tr = Transcript()
    created = await t.post(t.ns_path("configmaps"), _cm("x", {"a": "1"}))
    path = t.ns_path("configmaps", "x")
    same = await t.put(path, created.body)
    tr.add(
        "no-op put",
        [
            same.body["metadata"]["resourceVersion"] == created.body["metadata"]["resourceVersion"],
            _managers(same.body),
        ],
    )
    patched = await t.patch(path, {"data": {"a": "1"}}, MERGE)
    tr.add(
        "no-op patch",
        patched.body["metadata"]["resourceVersion"] == created.body["metadata"]["resourceVersion"],
    )
    changed = await t.patch(path, {"data": {"b": "2"}}, MERGE, params={"fieldManager": "other"})
    tr.add(
        "change",
        [
            changed.body["metadata"]["resourceVersion"] == created.body["metadata"]["resourceVersion"],
            _managers(changed.body),
        ],
    )
    return tr
