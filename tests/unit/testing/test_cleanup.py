"""The kit's cleanup of a shared cluster, against a fake API server: a pod whose
graceful deletion no kubelet finishes is forced out, our finalizers come off,
and a world's extra namespaces are named apart from another run's."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

from mo_devkit.testing import World
from mo_devkit.testing.cleanup import delete_namespaces
from mo_operator.kube.client.client import ApiClient
from mo_operator.kube.client.resource import Resource

Obj = dict[str, Any]


class FakeServer:
    """Namespaces and pods; a namespace goes once its pods have, a Terminating pod only
    when deleted with no grace period (no kubelet finishes it)."""

    def __init__(self, pods: dict[str, list[Obj]]) -> None:
        self.namespaces = set(pods)
        self.deleting: set[str] = set()
        self.pods = pods
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
            for pod in self.pods.get(name, []):
                pod["metadata"]["deletionTimestamp"] = "now"
        elif namespace is not None and grace == 0:
            self.pods[namespace] = [p for p in self.pods[namespace] if p["metadata"]["name"] != name]

    async def patch(self, res: Resource, name: str, patch: Obj, namespace: str | None = None) -> None:
        self.calls.append(("patch", res.kind, name, str(patch["metadata"]["finalizers"])))

    async def get_or_none(self, res: Resource, name: str) -> Obj | None:
        gone = name in self.deleting and not self.pods.get(name)
        return None if gone or name not in self.namespaces else {"metadata": {"name": name}}

    async def list(self, res: Resource, namespace: str | None = None) -> Any:
        return SimpleNamespace(items=list(self.pods.get(namespace or "", [])) if res.kind == "Pod" else [])


def pod(name: str, *finalizers: str) -> Obj:
    return {"metadata": {"name": name, "finalizers": list(finalizers)}}


async def test_a_terminating_pod_is_forced_out_and_loses_only_our_finalizers() -> None:
    server = FakeServer({"a": [pod("cn-0", "matrixorigin.io/cn-store", "other/keep")], "b": []})
    await delete_namespaces(cast(ApiClient, server), ["a", "b"], timeout=5)
    assert ("patch", "Pod", "cn-0", "['other/keep']") in server.calls
    assert ("delete", "Pod", "cn-0", "0") in server.calls
    assert not server.pods["a"]


async def test_a_worlds_extra_namespaces_are_unique_on_a_real_server_only() -> None:
    server = FakeServer({})
    embedded = World(cast(Any, None), Path("kc"), "e2e-1", cast(ApiClient, server))
    assert await embedded.add_namespaces(2) == ["bench0000", "bench0001"]
    assert await embedded.add_namespaces(1) == ["bench0002"], "numbered on from the world's last"
    real = World(cast(Any, None), Path("kc"), "e2e-2", cast(ApiClient, server), real=True)
    names = await real.add_namespaces(2)
    assert [n[:10] for n in names] == ["bench0000-", "bench0001-"] and names[0][10:] == names[1][10:]
    assert embedded.namespaces == ["e2e-1", "bench0000", "bench0001", "bench0002"]
