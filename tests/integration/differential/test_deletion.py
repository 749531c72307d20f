"""Deletion as controllers rely on it: finalizers and deletionTimestamp,
garbage collection by owner references in the three propagation policies,
dry runs that store nothing, namespaces that refuse new objects while they
terminate (https://kubernetes.io/docs/concepts/architecture/garbage-collection/,
https://kubernetes.io/docs/concepts/overview/working-with-objects/finalizers/)."""

from __future__ import annotations

from typing import Any

from .harness import JSON_PATCH, MERGE, TABLE, Target, Transcript
from .harness import test_differential as test_differential

Obj = dict[str, Any]


def _cm(name: str, **meta: Any) -> Obj:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, **meta}, "data": {"k": "v"}}


def _owned_by(owner: Obj, **flags: bool) -> list[Obj]:
    return [
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "name": owner["metadata"]["name"],
            "uid": owner["metadata"]["uid"],
            **flags,
        }
    ]


async def case_finalizer_holds_a_deleted_object(t: Target) -> Transcript:
    """Delete of an object with a finalizer returns it with
    deletionTimestamp and deletionGracePeriodSeconds and keeps it; removing
    the finalizer completes the delete. Watchers see MODIFIED, then DELETED."""
    tr = Transcript()
    path = t.ns_path("configmaps")
    created = await t.post(path, _cm("x", finalizers=["example.com/hold"]))
    async with t.watch(path, {"resourceVersion": created.body["metadata"]["resourceVersion"]}) as w:
        deleted = await t.delete(path + "/x")
        tr.add("delete", deleted)
        tr.add("again", (await t.delete(path + "/x")).code)
        tr.add(
            "new finalizer refused",
            await t.patch(
                path + "/x", {"metadata": {"finalizers": ["example.com/hold", "example.com/late"]}}, MERGE
            ),
        )
        tr.add(
            "labels allowed", (await t.patch(path + "/x", {"metadata": {"labels": {"a": "b"}}}, MERGE)).code
        )
        released = await t.patch(path + "/x", [{"op": "remove", "path": "/metadata/finalizers"}], JSON_PATCH)
        tr.add("release", [released.code, released.body.get("metadata", {}).get("finalizers")])
        events = await w.count(4)
        tr.add("events", [[e["type"], "deletionTimestamp" in e["object"]["metadata"]] for e in events])
    tr.add("gone", (await t.get(path + "/x")).code)
    return tr


async def _owner_and_dependents(t: Target) -> str:
    path = t.ns_path("configmaps")
    owner = (await t.post(path, _cm("owner"))).body
    await t.post(path, _cm("blocking", ownerReferences=_owned_by(owner, blockOwnerDeletion=True)))
    await t.post(path, _cm("plain", ownerReferences=_owned_by(owner)))
    return path


async def case_gc_background(t: Target) -> Transcript:
    """Background: the owner goes at once, its dependents after it."""
    tr = Transcript()
    path = await _owner_and_dependents(t)
    tr.add("delete", await t.delete(path + "/owner", {"propagationPolicy": "Background"}))
    tr.add("owner", (await t.get(path + "/owner")).code)
    await t.gone(path + "/blocking")
    await t.gone(path + "/plain")
    return tr


async def case_gc_foreground(t: Target) -> Transcript:
    """Foreground: the owner stays, with the foregroundDeletion finalizer,
    until the dependents that block it are gone."""
    tr = Transcript()
    path = await _owner_and_dependents(t)
    deleted = await t.delete(path + "/owner", {"propagationPolicy": "Foreground"})
    tr.add(
        "delete",
        [
            deleted.code,
            deleted.body["metadata"].get("finalizers"),
            "deletionTimestamp" in deleted.body["metadata"],
        ],
    )
    await t.gone(path + "/blocking")
    await t.gone(path + "/plain")
    await t.gone(path + "/owner")
    return tr


async def case_gc_orphan(t: Target) -> Transcript:
    """Orphan: the dependents stay, without their owner reference."""
    tr = Transcript()
    path = await _owner_and_dependents(t)
    deleted = await t.delete(path + "/owner", {"propagationPolicy": "Orphan"})
    tr.add("delete", [deleted.code, deleted.body["metadata"].get("finalizers")])
    await t.gone(path + "/owner")

    async def orphaned() -> bool:
        refs = [
            (await t.get(path + "/" + n)).body["metadata"].get("ownerReferences")
            for n in ("blocking", "plain")
        ]
        return refs == [None, None]

    await t.wait_for(orphaned, "the dependents lost their owner reference")
    tr.add("dependents", [(await t.get(path + "/" + n)).body["data"] for n in ("blocking", "plain")])
    return tr


async def case_gc_of_a_dependent_whose_owner_never_existed(t: Target) -> Transcript:
    """An owner reference to a uid that does not exist: the collector
    deletes the dependent (it checks the owner by uid, not by name)."""
    tr = Transcript()
    path = t.ns_path("configmaps")
    await t.post(path, _cm("owner"))
    ghost = {"metadata": {"name": "owner", "uid": "00000000-0000-0000-0000-00000000abcd"}}
    await t.post(path, _cm("dependent", ownerReferences=_owned_by(ghost)))
    await t.gone(path + "/dependent")
    tr.add("owner kept", (await t.get(path + "/owner")).code)
    return tr


async def case_delete_options_and_collection(t: Target) -> Transcript:
    """deletecollection with a label selector deletes only what matches and
    answers with the list of what it deleted; a delete of a missing object
    is 404; a bad propagation policy 422."""
    tr = Transcript()
    path = t.ns_path("configmaps")
    for name, tier in (("a", "x"), ("b", "x"), ("c", "y")):
        await t.post(path, _cm(name, labels={"tier": tier}))
    gone = await t.delete(path, params={"labelSelector": "tier=x"})
    tr.add(
        "collection",
        [gone.code, gone.body["kind"], sorted(i["metadata"]["name"] for i in gone.body["items"])],
    )
    left = await t.get(path, params={"labelSelector": "tier"})
    tr.add("left", [i["metadata"]["name"] for i in left.body["items"]])
    tr.add("missing", await t.delete(path + "/nope"))
    tr.add("bad policy", await t.delete(path + "/c", {"propagationPolicy": "Sometimes"}))
    tr.add("deleted object", await t.delete(path + "/c"))
    return tr


async def case_pod_deletion_grace(t: Target) -> Transcript:
    """A pod on no node is deleted at once, whatever the grace period."""
    tr = Transcript()
    await t.post(
        t.ns_path("pods"), {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "c"}]}}
    )
    deleted = await t.delete(t.ns_path("pods", "p"), {"gracePeriodSeconds": 30})
    tr.add(
        "delete",
        [deleted.code, deleted.body["kind"], deleted.body["metadata"].get("deletionTimestamp") is not None],
    )
    tr.add("gone", (await t.get(t.ns_path("pods", "p"))).code)
    return tr


async def case_dry_run_stores_nothing(t: Target) -> Transcript:
    """dryRun=All runs defaulting, validation and admission and answers as
    for a real write, but stores nothing."""
    tr = Transcript()
    path = t.ns_path("configmaps")
    dry = {"dryRun": "All"}
    created = await t.post(path, _cm("x"), params=dry)
    tr.add(
        "create",
        [
            created.code,
            created.body["metadata"].get("name"),
            created.body["metadata"].get("uid") is not None,
            "resourceVersion" in created.body["metadata"],
        ],
    )
    tr.add("not stored", (await t.get(path + "/x")).code)
    tr.add("invalid", (await t.post(path, _cm("Bad"), params=dry)).code)
    await t.post(path, _cm("x"))
    tr.add("update", (await t.patch(path + "/x", {"data": {"k": "dry"}}, MERGE, params=dry)).body["data"])
    tr.add("still", (await t.get(path + "/x")).body["data"])
    deleted = await t.delete(path + "/x", params=dry)
    tr.add("delete", [deleted.code, deleted.body.get("kind")])
    tr.add("kept", (await t.get(path + "/x")).code)
    pod = await t.post(
        t.ns_path("pods"),
        {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "c"}]}},
        params=dry,
    )
    tr.add("pod", [pod.code, pod.body["spec"].get("serviceAccountName")])
    return tr


async def case_namespace_terminating(t: Target) -> Transcript:
    """A deleted namespace is Terminating while an object in it has a
    finalizer; creating in it is 403 Forbidden with a NamespaceTerminating
    cause; it goes once the finalizer is removed."""
    tr = Transcript()
    ns = f"{t.ns}-t"
    await t.post("/api/v1/namespaces", {"metadata": {"name": ns}})
    held = f"/api/v1/namespaces/{ns}/configmaps"
    await t.post(held, _cm("held", finalizers=["example.com/hold"]))
    deleted = await t.delete(f"/api/v1/namespaces/{ns}")
    tr.add(
        "delete",
        [
            deleted.code,
            deleted.body["status"],
            deleted.body["spec"],
            "deletionTimestamp" in deleted.body["metadata"],
        ],
    )
    tr.add("create in it", await t.post(held, _cm("new")))

    async def held_is_deleted() -> bool:
        return "deletionTimestamp" in (await t.get(held + "/held")).body["metadata"]

    await t.wait_for(held_is_deleted, "the namespace's content is being deleted")
    await t.patch(held + "/held", {"metadata": {"finalizers": None}}, MERGE)
    await t.gone(f"/api/v1/namespaces/{ns}")
    return tr


async def case_tables_of_built_in_kinds(t: Target) -> Transcript:
    """kubectl get's server-side printing: column definitions and cells."""
    tr = Transcript()
    await t.post(t.ns_path("configmaps"), {**_cm("x"), "data": {"a": "1", "b": "2"}})
    svc = {
        "metadata": {"name": "s"},
        "spec": {
            "selector": {"app": "s"},
            "ports": [{"port": 80, "name": "web"}, {"port": 53, "protocol": "UDP", "name": "dns"}],
        },
    }
    created = await t.post(t.ns_path("services"), svc)
    ip = created.body["spec"]["clusterIP"]
    await t.post(t.ns_path("secrets"), {"metadata": {"name": "sec"}, "stringData": {"a": "b"}})
    for resource in ("configmaps", "services", "secrets"):
        table = (await t.get(t.ns_path(resource), accept=TABLE)).body
        names = [c["name"] for c in table["columnDefinitions"]]
        rows = [
            [
                ("<age>" if names[i] == "Age" else "<ip>" if cell == ip else cell)
                for i, cell in enumerate(r["cells"])
            ]
            for r in table["rows"]
            if r["cells"][0] != "kube-root-ca.crt"  # kube-controller-manager's, see test_namespace_content
        ]
        # A column's description is the Go field's doc comment, reworded
        # between releases and shown by no client.
        columns = [{k: v for k, v in c.items() if k != "description"} for c in table["columnDefinitions"]]
        tr.add(resource, [columns, rows])
    none = await t.get(t.ns_path("configmaps"), accept=TABLE, params={"labelSelector": "none=here"})
    tr.add("empty", [none.body["kind"], none.body["rows"], len(none.body["columnDefinitions"])])
    return tr


async def case_job_delete_orphans_by_default(t: Target) -> Transcript:
    """batch/v1 Jobs orphan their dependents when the delete names no
    policy (the Job strategy's DefaultGarbageCollectionPolicy, kept for
    compatibility): the Job comes back with the orphan finalizer, and what
    it owned stays, without the reference."""
    tr = Transcript()
    job = {
        "metadata": {"name": "j"},
        "spec": {
            "suspend": True,
            "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "c"}]}},
        },
    }
    created = (await t.post(t.ns_path("jobs", group="batch"), job)).body
    ref = {"apiVersion": "batch/v1", "kind": "Job", "name": "j", "uid": created["metadata"]["uid"]}
    await t.post(t.ns_path("configmaps"), _cm("dependent", ownerReferences=[ref]))
    deleted = await t.delete(t.ns_path("jobs", "j", group="batch"))
    tr.add("delete", [deleted.code, deleted.body["kind"], deleted.body["metadata"].get("finalizers")])
    await t.gone(t.ns_path("jobs", "j", group="batch"))

    async def orphaned() -> bool:
        return (await t.get(t.ns_path("configmaps", "dependent"))).body["metadata"].get(
            "ownerReferences"
        ) is None

    await t.wait_for(orphaned, "the dependent lost its owner reference")
    return tr
