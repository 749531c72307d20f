"""The test controller: it owns ConfigMaps, and exists only to exercise the
runtime end to end (it is no part of the product).

A ConfigMap labelled ``test/parent`` gets a child ConfigMap
``<name>-child``, labelled ``test/child=<parent>``, controlled by the
parent through an owner reference, whose data is the parent's data with
each key prefixed by ``copy.`` plus ``source: <parent>``. The controller
reads only from its two informers (parents and children, each scoped by its
label) and writes only by server-side apply with its own field manager, and
only when the cached child differs from the desired one in a field it
manages — so a resync of objects already in their desired state writes
nothing.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from mo_devkit.localcluster.controlplane import ControlPlane
from mo_operator.kube.cache.informer_factory import InformerFactory
from mo_operator.kube.controller.controller import Controller, Request, request_for
from mo_operator.kube.manager.adapters import Client

from .ledger import CONFIGMAPS

Obj = dict[str, Any]

PARENT_LABEL = "test/parent"
CHILD_LABEL = "test/child"
PREFIX = "copy."


def child_name(parent_name: str) -> str:
    return f"{parent_name}-child"


def desired_child(parent: Mapping[str, Any]) -> Obj:
    meta = parent["metadata"]
    data = {f"{PREFIX}{k}": v for k, v in (parent.get("data") or {}).items()}
    data["source"] = meta["name"]
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": child_name(meta["name"]),
            "namespace": meta["namespace"],
            "labels": {CHILD_LABEL: meta["name"]},
            "ownerReferences": [
                {
                    "apiVersion": "v1",
                    "kind": "ConfigMap",
                    "name": meta["name"],
                    "uid": meta["uid"],
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "data": data,
    }


def up_to_date(child: Mapping[str, Any], desired: Mapping[str, Any]) -> bool:
    """True when every field we manage already has its desired value. Keys
    other managers added are not ours to judge; keys with our prefix are."""
    meta, want = child["metadata"], desired["metadata"]
    labels = meta.get("labels") or {}
    if any(labels.get(k) != v for k, v in want["labels"].items()):
        return False
    owner = want["ownerReferences"][0]
    if not any(
        r.get("uid") == owner["uid"] and r.get("controller") for r in meta.get("ownerReferences") or ()
    ):
        return False
    data = child.get("data") or {}
    ours = {k: v for k, v in data.items() if k in desired["data"] or k.startswith(PREFIX)}
    return bool(ours == desired["data"])


BeforeWrite = Callable[[Request], Awaitable[None]]


class ChildController:
    def __init__(
        self,
        informers: InformerFactory,
        writer: Client,
        namespace: str = "default",
        *,
        name: str = "child-controller",
        max_concurrent: int = 2,
        before_write: BeforeWrite | None = None,
    ) -> None:
        """``before_write`` runs just before each apply (tests use it to hold
        a reconcile between its reads and its write)."""
        self.informers = informers
        self.writer = writer
        self.before_write = before_write
        self.parents = informers.informer(CONFIGMAPS, namespace, PARENT_LABEL)
        self.children = informers.informer(CONFIGMAPS, namespace, CHILD_LABEL)
        self.controller = Controller(name, self.reconcile, max_concurrent=max_concurrent)
        self.controller.for_(self.parents, predicate=None).owns(self.children, "v1", "ConfigMap")
        self.applies = 0

    async def reconcile(self, req: Request) -> None:
        parent = self.parents.get(req.namespace, req.name)
        if parent is None or parent["metadata"].get("deletionTimestamp"):
            return  # the garbage collector removes the child with its owner
        desired = desired_child(parent)
        child = self.children.get(req.namespace, desired["metadata"]["name"])
        if child is not None and up_to_date(child, desired):
            return
        if self.before_write is not None:
            await self.before_write(req)
        await self.writer.apply(desired, resource=CONFIGMAPS, force=True)
        self.applies += 1

    def resync(self) -> int:
        """Re-enqueue every parent, as a periodic resync would; return how many."""
        parents = self.parents.list()
        for parent in parents:
            self.controller.queue.add(request_for(parent))
        return len(parents)


def parent(name: str, namespace: str = "default", **data: str) -> dict[str, object]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace, "labels": {PARENT_LABEL: "yes"}},
        "data": data,
    }


def all_children_as_desired(cp: ControlPlane, namespace: str = "default") -> bool:
    """Checked on the server's own store: every parent has its desired child."""
    parents = [
        p
        for p in cp.server.store.list("configmaps", namespace)
        if PARENT_LABEL in p["metadata"].get("labels", {})
    ]
    for p in parents:
        child = cp.server.store.get("configmaps", namespace, child_name(p["metadata"]["name"]))
        if child is None or not up_to_date(child, desired_child(p)):
            return False
    return True
