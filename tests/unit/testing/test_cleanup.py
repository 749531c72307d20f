"""The kit's cleanup of a shared cluster, against a fake API server: a world's pods
are forced out (no kubelet finishes them) losing only our finalizers, the volumes of
its claims are deleted, a session checks once that what its worlds handed over is gone,
and a world's extra namespaces are named apart from another run's."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest

from mo_devkit.testing import World
from mo_devkit.testing.cleanup import NAMESPACES, PendingDeletions, delete_namespaces
from mo_operator.kube.client.client import ApiClient
from mo_operator.kube.client.resource import Resource

Obj = dict[str, Any]


class FakeServer:
    """Namespaces, pods and volumes; a namespace goes once deleted and empty of pods, a
    pod when deleted with no grace period (no kubelet finishes it) and left with no
    finalizer, a volume when deleted."""

    def __init__(self, pods: dict[str, list[Obj]], volumes: dict[str, str] | None = None) -> None:
        self.namespaces = set(pods)
        self.deleting: set[str] = set()
        self.pods = pods
        self.volumes = dict(volumes or {})
        """Volume name: the namespace of its claim."""
        self.calls: list[tuple[str, ...]] = []

    async def create(self, res: Resource, body: Obj) -> Obj:
        self.calls.append(("create", res.kind, body["metadata"]["name"]))
        self.namespaces.add(body["metadata"]["name"])
        return body

    async def delete(self, res: Resource, name: str, namespace: str | None = None, **kw: Any) -> None:
        grace = kw.get("grace_period_seconds")
        self.calls.append(("delete", res.kind, name, str(grace)))
        if res.kind == "Namespace":
            self.deleting.add(name)
        elif res.kind == "PersistentVolume":
            self.volumes.pop(name, None)
        elif namespace is not None and grace == 0:
            for pod in self.pods[namespace]:
                if pod["metadata"]["name"] == name:
                    pod["metadata"]["deletionTimestamp"] = "now"
            self.pods[namespace] = [
                p
                for p in self.pods[namespace]
                if p["metadata"]["name"] != name or p["metadata"]["finalizers"]
            ]

    async def patch(self, res: Resource, name: str, patch: Obj, namespace: str | None = None) -> None:
        self.calls.append(("patch", res.kind, name, str(patch["metadata"]["finalizers"])))
        for pod in self.pods[namespace or ""]:
            if pod["metadata"]["name"] == name:
                pod["metadata"]["finalizers"] = patch["metadata"]["finalizers"] or []

    def _gone(self, name: str) -> bool:
        return name in self.deleting and not self.pods.get(name)

    async def get_or_none(self, res: Resource, name: str) -> Obj | None:
        return None if self._gone(name) or name not in self.namespaces else {"metadata": {"name": name}}

    async def list(self, res: Resource, namespace: str | None = None) -> Any:
        if res.kind == "Pod":
            return SimpleNamespace(items=list(self.pods.get(namespace or "", [])))
        if res.kind == "Namespace":
            return SimpleNamespace(
                items=[{"metadata": {"name": n}} for n in self.namespaces if not self._gone(n)]
            )
        volumes = [
            {"metadata": {"name": v}, "spec": {"claimRef": {"namespace": ns}}}
            for v, ns in self.volumes.items()
        ]
        return SimpleNamespace(items=volumes)


def pod(name: str, *finalizers: str) -> Obj:
    return {"metadata": {"name": name, "finalizers": list(finalizers)}}


async def test_a_worlds_pods_are_forced_out_losing_only_our_finalizers_and_its_volumes_go() -> None:
    server = FakeServer(
        {"a": [pod("cn-0", "matrixorigin.io/cn-store", "other/keep"), pod("tn-0")], "b": []},
        volumes={"pvc-1": "a", "pvc-2": "elsewhere"},
    )
    with pytest.raises(AssertionError, match="namespaces \\['a'\\]"):
        await delete_namespaces(cast(ApiClient, server), ["a", "b"], timeout=1)
    assert ("patch", "Pod", "cn-0", "['other/keep']") in server.calls
    assert ("delete", "Pod", "tn-0", "0") in server.calls
    assert [p["metadata"]["name"] for p in server.pods["a"]] == ["cn-0"], "kept by another's finalizer"
    assert server.volumes == {"pvc-2": "elsewhere"}, "only the volumes of the world's claims go"

    server.pods["a"][0]["metadata"]["finalizers"] = []
    server.pods["a"] = []
    await delete_namespaces(cast(ApiClient, server), ["a", "b"], timeout=1)


async def test_namespaces_handed_to_the_session_are_deleted_at_once_and_checked_at_its_end() -> None:
    server = FakeServer(
        {"a": [pod("cn-0")], "b": [], "c": [pod("keep", "other/keep")]}, volumes={"pvc-1": "a"}
    )
    deletions = PendingDeletions()
    await deletions.start(cast(ApiClient, server), ["a", "b"])
    assert server.deleting == {"a", "b"} and not server.pods["a"] and not server.volumes, "all at once"
    await deletions.start(cast(ApiClient, server), ["c"])
    assert deletions.namespaces == ["a", "b", "c"]

    server.volumes["pvc-2"] = "b"  # provisioned for a claim after the world let go
    with pytest.raises(AssertionError, match="namespaces \\['c'\\] and volumes \\[\\]"):
        await deletions.finish(cast(ApiClient, server), timeout=1.2)
    assert not server.volumes

    server.pods["c"] = []
    await deletions.finish(cast(ApiClient, server), timeout=0.5)


async def test_what_the_session_made_goes_after_its_namespaces() -> None:
    server = FakeServer({"a": [pod("cn-0", "other/keep")], "localcluster-system": []})
    deletions = PendingDeletions()
    await deletions.start(cast(ApiClient, server), ["a"])
    deletions.made_by_session(NAMESPACES, "localcluster-system")
    with pytest.raises(AssertionError):
        await deletions.finish(cast(ApiClient, server), timeout=0.5)
    assert ("delete", "Namespace", "localcluster-system", "None") not in server.calls, "not before"
    server.pods["a"] = []
    await deletions.finish(cast(ApiClient, server), timeout=0.5)
    assert ("delete", "Namespace", "localcluster-system", "None") in server.calls
    assert await server.get_or_none(NAMESPACES, "localcluster-system") is None


async def test_a_worlds_extra_namespaces_are_unique_on_a_real_server_only() -> None:
    server = FakeServer({})
    embedded = World(cast(Any, None), Path("kc"), "e2e-1", cast(ApiClient, server))
    assert await embedded.add_namespaces(2) == ["bench0000", "bench0001"]
    assert await embedded.add_namespaces(1) == ["bench0002"], "numbered on from the world's last"
    real = World(cast(Any, None), Path("kc"), "e2e-2", cast(ApiClient, server), real=True)
    names = await real.add_namespaces(2)
    assert [n[:10] for n in names] == ["bench0000-", "bench0001-"] and names[0][10:] == names[1][10:]
    assert embedded.namespaces == ["e2e-1", "bench0000", "bench0001", "bench0002"]
