"""CNClaim migration (upstream's ``cnclaim/migrate.go`` and its e2e ``claim_test.go``):
changing a bound claim's ``podName`` to another idle pod, with ``sourcePod`` naming
the pod it had, moves the claim.

A claim bound to pod A holds sessions; it is pointed at idle pod B. B is bound
with the claim's labels and works with its CN labels, A drains (the proxy moves
its sessions to B) and returns to the pool Idle, and the claim reports B and
forgets A. A podName change that is not a migration is refused, naming the field.
"""

from __future__ import annotations

import json
from typing import Any

from mo_operator.controllers.framework import resources as r
from mo_operator.matrixone import labels
from mo_operator.matrixone.admin import WorkState

from .harness import OperatorRunner, World, eventually
from .test_15_cnpool import _bound, _claim, _is_idle, _phase, _pool_pods, _start, _store, _uuid

Obj = dict[str, Any]


async def _migrated(world: World, target: str) -> Obj | None:
    """The claim once it reports the target and no migration (spec and status)."""
    claim = await world.get(r.CNCLAIMS, "c")
    if claim is None or (claim["spec"].get("sourcePod") or {}) or "migrate" in (claim.get("status") or {}):
        return None
    store = (claim.get("status") or {}).get("store") or {}
    return claim if store.get("string") == target else None


async def test_a_claim_moves_to_another_pod_and_its_old_one_returns_idle(
    world: World, operator: OperatorRunner
) -> None:
    await _start(world)
    manifest = _claim(world, "c", "a")
    manifest["spec"]["additionalPodLabels"] = {"team": "t1"}
    await world.apply(manifest)
    claim = await eventually(lambda: _bound(world, "c"), message="the claim is Bound")
    source = claim["spec"]["podName"]
    mo = world.cluster.mo
    assert mo is not None
    assert mo.open_sessions(world.namespace, "mo", 10) == 10
    pods = await _pool_pods(world)
    assert mo.sessions(_uuid(pods[source])) == 10
    target = next(name for name, pod in sorted(pods.items()) if _phase(pod) == "Idle")

    # Not a migration: refused by the webhook, naming the field and how to migrate.
    refused = await world.kubectl(
        "patch", "cnclaim", "c", "--type=merge", "-p", json.dumps({"spec": {"podName": target}}), check=False
    )
    assert refused.returncode != 0 and "spec.podName" in refused.stderr and "sourcePod" in refused.stderr

    move = {
        "spec": {
            "podName": target,
            "nodeName": pods[target]["spec"].get("nodeName"),
            "sourcePod": {"podName": source, "nodeName": claim["spec"].get("nodeName")},
        }
    }
    await world.kubectl("patch", "cnclaim", "c", "--type=merge", "-p", json.dumps(move))
    claim = await eventually(lambda: _migrated(world, target), timeout=30, message="the claim moved")
    await eventually(lambda: _is_idle(world, source), timeout=30, message=f"{source} is Idle again")

    # The claim reports its new pod, and is Bound and Ready on it.
    assert claim["spec"]["podName"] == target and claim["status"]["phase"] == "Bound"
    ready = next(c for c in claim["status"]["conditions"] if c["type"] == "Ready")
    assert ready["status"] == "True" and target in ready["message"]
    # B carries the claim's labels and works with its CN labels; A carries none of them.
    pods = await _pool_pods(world)
    new_labels, old_labels = pods[target]["metadata"]["labels"], pods[source]["metadata"]["labels"]
    assert _phase(pods[target]) == "Bound" and new_labels[labels.POOL_CLAIMED_BY] == "c"
    assert new_labels["team"] == "t1"
    assert labels.POOL_CLAIMED_BY not in old_labels and "team" not in old_labels
    new_store, old_store = _store(world, _uuid(pods[target])), _store(world, _uuid(pods[source]))
    assert new_store.work_state is WorkState.WORKING and new_store.labels == {"role": ("a",)}
    assert old_store.work_state is WorkState.DRAINING and old_store.labels == {}
    # The sessions followed the claim.
    assert mo.sessions(_uuid(pods[source])) == 0 and mo.sessions(_uuid(pods[target])) == 10
    events = await world.kubectl("get", "events", "--field-selector", "reason=Migrated", "-o", "yaml")
    assert source in events.stdout and target in events.stdout, "a Migrated event names both pods"

    # Settled, a resync writes nothing.
    op, client = operator.operator, operator.client
    assert op is not None and client is not None
    await operator.quiet()
    before = sum(client.writes.values())
    op.resync()
    await op.wait_idle()
    assert sum(client.writes.values()) == before, dict(client.writes)
