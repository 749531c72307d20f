"""Hand-built pool objects (pods in their pool phases, claims, pools) and a
MatrixOne admin fake holding CN stores, for the pool controllers' tests."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any, cast

from mo_operator.controllers.cnset.pods import HAKEEPER_ANNOTATION
from mo_operator.controllers.framework.env import Env
from mo_operator.controllers.specs.pods import format_time
from mo_operator.kube.client.resource import Resource
from mo_operator.kube.meta.errors import ApiError
from mo_operator.kube.meta.objects import meta_of
from mo_operator.matrixone import labels
from mo_operator.matrixone.admin import (
    CNLoad,
    CNStore,
    HAKeeperPhase,
    HAKeeperState,
    NodeState,
    StoreNotFound,
    WorkState,
)

from .controller_fakes import NOW, FakeCaches, RecordingClient, make_env

Obj = dict[str, Any]
NS = "ns"
API = "core.matrixorigin.io/v1alpha1"
DISCOVERY = "mo-log-discovery.ns.svc:32001"
SET = "pool-abc"


def pool_pod(
    index: int,
    phase: str | None = labels.POOL_PHASE_IDLE,
    *,
    set_name: str = SET,
    claimed_by: str | None = None,
    extra_labels: Mapping[str, str] | None = None,
    annotations: Mapping[str, str] | None = None,
    ready: bool = True,
    deleting: bool = False,
    rv: str = "10",
) -> Obj:
    name = f"{set_name}-cn-{index}"
    pod_labels = {
        labels.NAMESPACE: NS,
        labels.INSTANCE: set_name,
        labels.COMPONENT: "CNSet",
        labels.POOL_NAME: "pool",
        labels.CN_UUID: f"uuid-{name}",
        "pool": "default",
        **(extra_labels or {}),
    }
    if phase is not None:
        pod_labels[labels.POOL_PHASE] = phase
    if claimed_by:
        pod_labels[labels.POOL_CLAIMED_BY] = claimed_by
    meta: Obj = {
        "name": name,
        "namespace": NS,
        "uid": f"uid-{name}",
        "resourceVersion": rv,
        "creationTimestamp": format_time(NOW - 100 + index),
        "labels": pod_labels,
        "annotations": {HAKEEPER_ANNOTATION: DISCOVERY, **(annotations or {})},
    }
    if deleting:
        meta["deletionTimestamp"] = format_time(NOW)
    return {
        "kind": "Pod",
        "metadata": meta,
        "spec": {"nodeName": "node-1"},
        "status": {
            "phase": "Running",
            "conditions": [{"type": "Ready", "status": "True" if ready else "False"}],
        },
    }


def uuid_of(pod: Mapping[str, Any]) -> str:
    return str(pod["metadata"]["labels"][labels.CN_UUID])


def store(
    pod: Mapping[str, Any],
    state: WorkState = WorkState.DRAINING,
    store_labels: Mapping[str, tuple[str, ...]] = {},
) -> CNStore:
    return CNStore(uuid_of(pod), "svc", "sql:6001", 1, NodeState.NORMAL, state, labels=dict(store_labels))


class FakeAdmin:
    """HAKeeper's stores and the CNs' sessions; records every change asked."""

    def __init__(self, *stores: CNStore, sessions: Mapping[str, int] | None = None) -> None:
        self.stores = {s.uuid: s for s in stores}
        self.sessions = dict(sessions or {})
        self.calls: list[tuple[str, str, WorkState | None, Any]] = []

    def admin(self, address: str) -> FakeAdmin:
        assert address == DISCOVERY
        return self

    async def hakeeper_state(self) -> HAKeeperState:
        return HAKeeperState(HAKeeperPhase.RUNNING, 1, cn_stores=tuple(self.stores.values()))

    async def cn_load(self, uuid: str) -> CNLoad:
        if uuid not in self.stores:
            raise StoreNotFound(uuid)
        return CNLoad(sessions=self.sessions.get(uuid, 0))

    async def set_cn_work_state(
        self, uuid: str, state: WorkState, store_labels: Mapping[str, tuple[str, ...]] | None = None
    ) -> None:
        self.calls.append(
            ("set_cn_work_state", uuid, state, None if store_labels is None else dict(store_labels))
        )
        if uuid in self.stores:
            found = self.stores[uuid]
            self.stores[uuid] = replace(
                found, work_state=state, labels=found.labels if store_labels is None else dict(store_labels)
            )

    async def set_cn_labels(self, uuid: str, store_labels: Mapping[str, tuple[str, ...]]) -> None:
        self.calls.append(("set_cn_labels", uuid, None, dict(store_labels)))

    async def delete_cn_store(self, uuid: str) -> None:
        self.calls.append(("delete_cn_store", uuid, None, None))
        self.stores.pop(uuid, None)


def pool_env(caches: FakeCaches, admin: FakeAdmin, client: RecordingClient | None = None) -> Env:
    env = make_env(caches)
    env = replace(env, admin=cast(Any, admin))
    if client is not None:
        env = replace(env, client=cast(Any, client))
    return env


class ConflictingClient(RecordingClient):
    """A client whose patches of some objects lose an optimistic-concurrency race."""

    def __init__(self, conflicts: set[str]) -> None:
        super().__init__()
        self.conflicts = conflicts

    async def patch(
        self, res: Resource, name: str, patch: Any, namespace: str | None = None, **kw: Any
    ) -> Obj:
        if name in self.conflicts and meta_of(patch).resource_version:
            self.calls.append(("conflict", res.kind, name, patch))
            raise ApiError(409, "Conflict", f"pods {name}: the object has been modified")
        return await super().patch(res, name, patch, namespace, **kw)


def claim(
    name: str,
    *,
    pod_name: str | None = None,
    phase: str | None = None,
    pool: str | None = None,
    claim_labels: Mapping[str, str] | None = None,
    owner: Mapping[str, Any] | None = None,
    deleting: bool = False,
    **spec: Any,
) -> Obj:
    meta: Obj = {
        "name": name,
        "namespace": NS,
        "uid": f"uid-{name}",
        "resourceVersion": "5",
        "generation": 1,
        "labels": dict(claim_labels or {}),
    }
    if owner is not None:
        meta["ownerReferences"] = [
            {
                "apiVersion": API,
                "kind": owner["kind"],
                "name": owner["metadata"]["name"],
                "uid": owner["metadata"]["uid"],
                "controller": True,
            }
        ]
    if deleting:
        meta["deletionTimestamp"] = format_time(NOW)
    body: Obj = {"selector": {"matchLabels": {"pool": "default"}}, **spec}
    if pod_name:
        body["podName"] = pod_name
    if pool:
        body["poolName"] = pool
    obj: Obj = {"apiVersion": API, "kind": "CNClaim", "metadata": meta, "spec": body}
    if phase:
        obj["status"] = {"phase": phase}
    return obj


def pool(
    name: str = "pool", *, max_idle: int = 2, max_pods: int | None = None, image: str = "mo:2.0.0"
) -> Obj:
    scale: Obj = {"maxIdle": max_idle}
    if max_pods is not None:
        scale["maxPods"] = max_pods
    return {
        "apiVersion": API,
        "kind": "CNPool",
        "metadata": {
            "name": name,
            "namespace": NS,
            "uid": f"uid-{name}",
            "resourceVersion": "3",
            "generation": 1,
        },
        "spec": {
            "template": {"image": image},
            "podLabels": {"pool": "default"},
            "deps": {"logSet": {"metadata": {"name": "mo"}}},
            "strategy": {"updateStrategy": {}, "scaleStrategy": scale},
        },
    }


def claimset(replicas: int) -> Obj:
    """A CNClaimSet ``cs`` of ``replicas`` claims selecting pool ``default``."""
    return {
        "apiVersion": API,
        "kind": "CNClaimSet",
        "metadata": {
            "name": "cs",
            "namespace": "ns",
            "uid": "uid-cs",
            "resourceVersion": "2",
            "generation": 1,
        },
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "cs"}},
            "template": {
                "metadata": {"labels": {"app": "cs"}},
                "spec": {"selector": {"matchLabels": {"pool": "default"}}},
            },
        },
    }


def migrating(target_since: float | None = None, **extra: Any) -> Obj:
    """Claim ``c`` moved from pod 0 (its source) to pod 1, with the target's store
    seen Working since ``target_since``."""
    c = claim("c", pod_name="pool-abc-cn-1", phase="Bound", sourcePod={"podName": "pool-abc-cn-0"}, **extra)
    if target_since is not None:
        c["status"]["store"] = {
            "string": "pool-abc-cn-1",
            "workState": WorkState.WORKING.value,
            "boundTime": format_time(target_since),
        }
    return c
