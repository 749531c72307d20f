"""Deletion: finalizers and deletionTimestamp, garbage collection through owner
references (background, foreground, orphan) and namespace deletion
(https://kubernetes.io/docs/concepts/overview/working-with-objects/finalizers/,
https://kubernetes.io/docs/concepts/architecture/garbage-collection/)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from .conftest import Raw, cm

NS = "/api/v1/namespaces/default"


async def eventually(check: Callable[[], Awaitable[bool]], timeout: float = 5.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        if await check():
            return
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("condition not reached in time")
        await asyncio.sleep(0.05)


async def gone(raw: Raw, path: str) -> bool:
    code, _ = await raw.get(path)
    return code == 404


def owned(name: str, owner: dict, *, block: bool = False, controller: bool = True) -> dict:
    ref = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "name": owner["metadata"]["name"],
        "uid": owner["metadata"]["uid"],
        "controller": controller,
    }
    if block:
        ref["blockOwnerDeletion"] = True
    return cm(name, ownerReferences=[ref])


async def test_finalizers_hold_the_object_until_removed(raw: Raw) -> None:
    """Delete of an object with finalizers only sets deletionTimestamp; it goes
    once the finalizers are empty (finalizers doc)."""
    await raw.post(f"{NS}/configmaps", cm("f", finalizers=["example.com/hold"]))
    code, obj = await raw.delete(f"{NS}/configmaps/f")
    assert code == 200
    assert obj["metadata"]["deletionTimestamp"]
    code, obj = await raw.get(f"{NS}/configmaps/f")
    assert code == 200 and obj["metadata"]["deletionTimestamp"]
    obj["metadata"]["finalizers"] = []
    code, _ = await raw.put(f"{NS}/configmaps/f", obj)
    assert code == 200
    assert await gone(raw, f"{NS}/configmaps/f")


async def test_no_new_finalizer_on_an_object_being_deleted(raw: Raw) -> None:
    """ "no new finalizers can be added if the object is being deleted"
    (apimachinery ValidateObjectMetaUpdate)."""
    await raw.post(f"{NS}/configmaps", cm("nf", finalizers=["a/b"]))
    await raw.delete(f"{NS}/configmaps/nf")
    _, obj = await raw.get(f"{NS}/configmaps/nf")
    obj["metadata"]["finalizers"] = ["a/b", "c/d"]
    code, err = await raw.put(f"{NS}/configmaps/nf", obj)
    assert code == 422
    assert "no new finalizers can be added if the object is being deleted" in err["message"]
    assert err["details"]["causes"][0]["field"] == "metadata.finalizers"


async def test_background_propagation_deletes_dependents_after_the_owner(raw: Raw) -> None:
    _, owner = await raw.post(f"{NS}/configmaps", cm("owner"))
    await raw.post(f"{NS}/configmaps", owned("dep1", owner))
    await raw.post(f"{NS}/configmaps", owned("dep2", owner))
    code, _ = await raw.delete(f"{NS}/configmaps/owner", {"propagationPolicy": "Background"})
    assert code == 200
    assert await gone(raw, f"{NS}/configmaps/owner")
    await eventually(lambda: gone(raw, f"{NS}/configmaps/dep1"))
    await eventually(lambda: gone(raw, f"{NS}/configmaps/dep2"))


async def test_foreground_propagation_waits_for_blocking_dependents(raw: Raw) -> None:
    """Foreground: the owner gets deletionTimestamp and the foregroundDeletion
    finalizer, and goes only after dependents with blockOwnerDeletion are gone."""
    _, owner = await raw.post(f"{NS}/configmaps", cm("fg"))
    await raw.post(
        f"{NS}/configmaps",
        {
            **owned("fgdep", owner, block=True),
            "metadata": {**owned("fgdep", owner, block=True)["metadata"], "finalizers": ["test/hold"]},
        },
    )
    code, obj = await raw.delete(f"{NS}/configmaps/fg", {"propagationPolicy": "Foreground"})
    assert code == 200
    assert "foregroundDeletion" in obj["metadata"]["finalizers"]

    async def dep_terminating() -> bool:
        c, o = await raw.get(f"{NS}/configmaps/fgdep")
        return c == 200 and bool(o["metadata"].get("deletionTimestamp"))

    await eventually(dep_terminating)
    await asyncio.sleep(0.3)
    code, _ = await raw.get(f"{NS}/configmaps/fg")
    assert code == 200, "owner must wait for its blocking dependent"
    _, dep = await raw.get(f"{NS}/configmaps/fgdep")
    dep["metadata"]["finalizers"] = []
    await raw.put(f"{NS}/configmaps/fgdep", dep)
    await eventually(lambda: gone(raw, f"{NS}/configmaps/fg"))


async def test_orphan_propagation_keeps_dependents_without_the_reference(raw: Raw) -> None:
    _, owner = await raw.post(f"{NS}/configmaps", cm("orph"))
    await raw.post(f"{NS}/configmaps", owned("orphdep", owner))
    await raw.delete(f"{NS}/configmaps/orph", {"propagationPolicy": "Orphan"})
    await eventually(lambda: gone(raw, f"{NS}/configmaps/orph"))
    code, dep = await raw.get(f"{NS}/configmaps/orphdep")
    assert code == 200
    assert not dep["metadata"].get("ownerReferences")


async def test_dependent_with_a_remaining_owner_survives(raw: Raw) -> None:
    """A dependent is collected only when all its owners are gone; references
    to deleted owners are removed (garbage-collection doc)."""
    _, a = await raw.post(f"{NS}/configmaps", cm("oa"))
    _, b = await raw.post(f"{NS}/configmaps", cm("ob"))
    refs = [
        {"apiVersion": "v1", "kind": "ConfigMap", "name": o["metadata"]["name"], "uid": o["metadata"]["uid"]}
        for o in (a, b)
    ]
    await raw.post(f"{NS}/configmaps", cm("shared", ownerReferences=refs))
    await raw.delete(f"{NS}/configmaps/oa")

    async def one_ref_left() -> bool:
        _, o = await raw.get(f"{NS}/configmaps/shared")
        return [r["name"] for r in o["metadata"].get("ownerReferences") or []] == ["ob"]

    await eventually(one_ref_left)


async def test_object_whose_owner_never_existed_is_collected(raw: Raw) -> None:
    ref = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "name": "ghost",
        "uid": "00000000-0000-0000-0000-000000000000",
    }
    await raw.post(f"{NS}/configmaps", cm("orphaned", ownerReferences=[ref]))
    await eventually(lambda: gone(raw, f"{NS}/configmaps/orphaned"))


async def test_deleting_a_namespace_deletes_its_contents(raw: Raw) -> None:
    """The namespace is Terminating, refuses new content, empties, then goes
    (https://kubernetes.io/docs/tasks/administer-cluster/namespaces/#deleting-a-namespace)."""
    await raw.post(
        "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "doomed"}}
    )
    await raw.post("/api/v1/namespaces/doomed/configmaps", cm("a"))
    await raw.post("/api/v1/namespaces/doomed/configmaps", cm("held", finalizers=["test/hold"]))
    code, ns = await raw.delete("/api/v1/namespaces/doomed")
    assert code == 200
    assert ns["status"]["phase"] == "Terminating"
    code, err = await raw.post("/api/v1/namespaces/doomed/configmaps", cm("late"))
    assert code == 403 and "because it is being terminated" in err["message"]
    await eventually(lambda: gone(raw, "/api/v1/namespaces/doomed/configmaps/a"))
    code, _ = await raw.get("/api/v1/namespaces/doomed")
    assert code == 200, "a finalizer in the namespace holds it"
    _, held = await raw.get("/api/v1/namespaces/doomed/configmaps/held")
    held["metadata"]["finalizers"] = []
    await raw.put("/api/v1/namespaces/doomed/configmaps/held", held)
    await eventually(lambda: gone(raw, "/api/v1/namespaces/doomed"))


async def test_pods_on_a_node_are_deleted_gracefully(raw: Raw) -> None:
    """A pod bound to a node gets deletionTimestamp and deletionGracePeriodSeconds;
    the kubelet removes it (pod termination doc). An unbound pod goes at once."""
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "busybox"}]},
    }
    await raw.post(f"{NS}/pods", pod)
    code, obj = await raw.delete(f"{NS}/pods/p")
    assert code == 200 and obj["metadata"]["deletionGracePeriodSeconds"] == 30
    code, _ = await raw.get(f"{NS}/pods/p")
    assert code == 200
    await raw.delete(f"{NS}/pods/p", {"gracePeriodSeconds": 0})
    assert await gone(raw, f"{NS}/pods/p")
    unbound = {**pod, "metadata": {"name": "u"}, "spec": {"containers": pod["spec"]["containers"]}}
    await raw.post(f"{NS}/pods", unbound)
    await raw.delete(f"{NS}/pods/u")
    assert await gone(raw, f"{NS}/pods/u")
