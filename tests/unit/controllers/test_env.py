"""The shared caches every controller reads (controllers/framework/env.py ``Caches``):
scoped to all namespaces or to some, built-in kinds only when they carry our
component label, and reads routed to the informer of the right namespace."""

from __future__ import annotations

from typing import Any

import pytest

from mo_operator.controllers.framework import resources as r
from mo_operator.controllers.framework.env import (
    LOGSET_REF_INDEX,
    MANAGED_SELECTOR,
    OUR_KINDS,
    OWNED_KINDS,
    READ_KINDS,
    Caches,
    logset_ref_key,
)
from mo_operator.kube.cache.informer_factory import InformerFactory
from mo_operator.kube.client.resource import Resource

Obj = dict[str, Any]
Scope = tuple[Resource, str | None, str | None]


class Sources:
    """A ListerWatcher factory that only records the scopes asked for (nothing is started)."""

    def __init__(self) -> None:
        self.scopes: list[Scope] = []

    def __call__(self, res: Resource, namespace: str | None, selector: str | None) -> Any:
        self.scopes.append((res, namespace, selector))
        return object()


def build(namespaces: tuple[str, ...] = ()) -> tuple[Caches, Sources]:
    sources = Sources()
    return Caches(InformerFactory(lister_watcher=sources), namespaces), sources


def obj(kind: str, name: str, namespace: str | None, **extra: Any) -> Obj:
    meta: Obj = {"name": name}
    if namespace is not None:
        meta["namespace"] = namespace
    return {"kind": kind, "metadata": {**meta, **extra.pop("meta", {})}, **extra}


def put(caches: Caches, res: Resource, *objs: Obj) -> None:
    """Place objects in the informer that would hold them (as its watch would)."""
    for o in objs:
        namespace = o["metadata"].get("namespace")
        scope = namespace if caches.namespaces and res.namespaced else None
        selector = MANAGED_SELECTOR if res in OWNED_KINDS else None
        informer = caches.factory.informer(res, scope, selector)  # the shared one, by scope
        assert informer in caches.informers(res), f"{res.kind} in {namespace} is not watched"
        informer.store.upsert(o)


def test_all_namespaces_one_informer_per_kind() -> None:
    caches, sources = build()
    for res in OUR_KINDS:
        assert len(caches.informers(res)) == 1
        assert (res, None, None) in sources.scopes
    for res in OWNED_KINDS:
        assert len(caches.informers(res)) == 1
        # built-in kinds only with our component label (key exists)
        assert (res, None, MANAGED_SELECTOR) in sources.scopes
    for res in READ_KINDS:  # read in full, cluster-wide
        assert (res, None, None) in sources.scopes
    assert len(sources.scopes) == len(OUR_KINDS) + len(OWNED_KINDS) + len(READ_KINDS)


def test_some_namespaces_one_informer_per_namespace_and_one_for_cluster_scoped_kinds() -> None:
    caches, sources = build(("a", "b"))
    assert len(caches.informers(r.LOGSETS)) == 2
    assert {(ns, sel) for res, ns, sel in sources.scopes if res == r.PODS} == {
        ("a", MANAGED_SELECTOR),
        ("b", MANAGED_SELECTOR),
    }
    assert not r.BACKUPS.namespaced
    assert len(caches.informers(r.BACKUPS)) == 1
    assert [(ns, sel) for res, ns, sel in sources.scopes if res == r.BACKUPS] == [(None, None)]


@pytest.mark.parametrize("namespaces", [(), ("a", "b")], ids=["all", "scoped"])
def test_get_and_list_route_to_the_namespace(namespaces: tuple[str, ...]) -> None:
    caches, _ = build(namespaces)
    mine = {"matrixorigin.io/instance": "mo"}
    put(
        caches,
        r.CONFIGMAPS,
        obj("ConfigMap", "cm", "a", meta={"labels": mine}),
        obj("ConfigMap", "cm", "b", meta={"labels": {"matrixorigin.io/instance": "other"}}),
        obj("ConfigMap", "cm2", "b", meta={"labels": mine}),
    )
    found = caches.get(r.CONFIGMAPS, "a", "cm")
    assert found is not None and found["metadata"]["namespace"] == "a"
    assert caches.get(r.CONFIGMAPS, "b", "cm") is not None
    assert caches.get(r.CONFIGMAPS, "a", "cm2") is None
    assert caches.get(r.CONFIGMAPS, "c", "cm") is None  # unwatched (or empty) namespace
    assert sorted(o["metadata"]["namespace"] for o in caches.list(r.CONFIGMAPS, None)) == ["a", "b", "b"]
    assert [o["metadata"]["name"] for o in caches.list(r.CONFIGMAPS, "b")] == ["cm", "cm2"]
    assert [o["metadata"]["name"] for o in caches.list(r.CONFIGMAPS, "b", mine)] == ["cm2"]
    assert [o["metadata"]["namespace"] for o in caches.list(r.CONFIGMAPS, None, mine)] == ["a", "b"]
    assert caches.list(r.CONFIGMAPS, "c") == []
    assert caches.list(r.CONFIGMAPS, "a", {}) == caches.list(r.CONFIGMAPS, "a")


@pytest.mark.parametrize("namespaces", [(), ("a",)], ids=["all", "scoped"])
def test_cluster_scoped_objects_are_found_by_name_alone(namespaces: tuple[str, ...]) -> None:
    caches, _ = build(namespaces)
    put(caches, r.BACKUPS, obj("Backup", "daily-4d21b", None))
    assert caches.get(r.BACKUPS, "", "daily-4d21b") is not None
    assert [o["metadata"]["name"] for o in caches.list(r.BACKUPS)] == ["daily-4d21b"]


@pytest.mark.parametrize("namespaces", [(), ("a", "b")], ids=["all", "scoped"])
def test_sets_are_indexed_by_the_logset_they_depend_on(namespaces: tuple[str, ...]) -> None:
    caches, _ = build(namespaces)
    put(
        caches,
        r.CNSETS,
        obj("CNSet", "tp", "a", deps={"logSet": {"metadata": {"name": "mo"}}}),
        obj("CNSet", "ap", "b", deps={"logSet": {"metadata": {"name": "mo", "namespace": "a"}}}),
        obj("CNSet", "ext", "a", deps={"externalLogSet": {"haKeeperEndpoint": "x:32001"}}),
    )
    put(caches, r.DNSETS, obj("DNSet", "mo", "a", deps={"logSet": {"metadata": {"name": "mo"}}}))
    dependents = caches.by_index(r.CNSETS, LOGSET_REF_INDEX, "a/mo")
    assert sorted(o["metadata"]["name"] for o in dependents) == ["ap", "tp"]
    assert [o["metadata"]["name"] for o in caches.by_index(r.DNSETS, LOGSET_REF_INDEX, "a/mo")] == ["mo"]
    assert caches.by_index(r.CNSETS, LOGSET_REF_INDEX, "b/mo") == []


def test_logset_ref_key() -> None:
    assert logset_ref_key(obj("CNSet", "tp", "ns", deps={"logSet": {"metadata": {"name": "mo"}}})) == (
        "ns/mo",
    )
    named = obj("CNSet", "tp", "ns", deps={"logSet": {"metadata": {"name": "mo", "namespace": "logs"}}})
    assert logset_ref_key(named) == ("logs/mo",)
    assert logset_ref_key(obj("CNSet", "tp", "ns")) == ()
    assert logset_ref_key(obj("CNSet", "tp", "ns", deps={"logSet": {"metadata": {}}})) == ()
