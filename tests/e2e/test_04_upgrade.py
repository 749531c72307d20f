"""Scenario 4: a version upgrade rolls the components in dependency order
(log, TN, CN, proxy), one pod at a time; a version that does not start halts
the roll where it is and the cluster's condition says why; fixing the
version resumes it."""

from __future__ import annotations

import asyncio
import time

from mo_devkit.localcluster.simulator.rules import FailureRule, RuleSet
from mo_operator.controllers.framework import resources as r
from mo_operator.matrixone import labels

from .harness import OperatorRunner, World, condition, eventually

COMPONENTS = ("LogSet", "DNSet", "CNSet", "ProxySet")


def _tag(pod: dict[str, object]) -> str:
    return str(pod["spec"]["containers"][0]["image"]).rsplit(":", 1)[1]  # type: ignore[index]


async def _set_version(world: World, version: str) -> None:
    await world.kubectl("patch", "mo", "mo", "--type", "merge", "-p", f'{{"spec":{{"version":"{version}"}}}}')


async def test_an_upgrade_rolls_in_dependency_order_one_pod_at_a_time(
    world: World, operator: OperatorRunner
) -> None:
    await world.apply(world.cluster_manifest("mo", proxy={"replicas": 1}))
    await world.wait_settled(r.MATRIXONE_CLUSTERS, "mo")
    await _set_version(world, "2.1.0")

    first_seen: dict[str, float] = {}
    log_unready_max = 0
    phases: list[str] = []
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        phase = ((await world.get(r.MATRIXONE_CLUSTERS, "mo") or {}).get("status") or {}).get("phase")
        if not phases or phases[-1] != phase:
            phases.append(str(phase))
        pods = await world.pods(**{labels.CLUSTER: "mo"})
        log_unready = sum(
            1
            for p in pods
            if p["metadata"]["labels"][labels.COMPONENT] == "LogSet"
            and not any(
                c["type"] == "Ready" and c["status"] == "True" for c in p["status"].get("conditions", [])
            )
        )
        log_unready_max = max(log_unready_max, log_unready)
        for pod in pods:
            component = pod["metadata"]["labels"][labels.COMPONENT]
            if _tag(pod) == "2.1.0":
                first_seen.setdefault(component, time.monotonic())
        if len(first_seen) == len(COMPONENTS) and all(_tag(p) == "2.1.0" for p in pods):
            break
        await asyncio.sleep(0.05)
    assert sorted(first_seen, key=first_seen.__getitem__) == list(COMPONENTS), first_seen
    assert log_unready_max <= 1, "the log service lost more than one store at a time"
    cluster = await world.wait_settled(r.MATRIXONE_CLUSTERS, "mo")
    assert condition(cluster, "UpToDate")["reason"] == "RolloutComplete"
    assert "Upgrading" in phases and set(phases) <= {"Ready", "Upgrading"}, f"the phase went {phases}"

    wide = (await world.kubectl("get", "mo", "mo", "-o", "wide")).stdout
    header, row = wide.splitlines()[:2]
    assert header.split()[:5] == ["NAME", "READY", "VERSION", "PHASE", "UP-TO-DATE"], wide
    assert row.split()[:5] == ["mo", "4/4", "2.1.0", "Ready", "True"], wide
    assert "DESIRED" in header and "MESSAGE" in header, wide
    sets = (await world.kubectl("get", "log,cn", "-o", "wide")).stdout
    assert "READY   UP-TO-DATE   VERSION" in sets and " 3/3 " in sets and " 2/2 " in sets, sets
    assert " 2.1.0 " in sets and "IMAGE" in sets and "MESSAGE" in sets, sets


async def test_a_failing_version_halts_the_roll_and_a_fix_resumes_it(
    world: World, operator: OperatorRunner
) -> None:
    await world.apply(world.cluster_manifest("mo", proxy={"replicas": 1}))
    await world.wait_settled(r.MATRIXONE_CLUSTERS, "mo")
    await world.set_simulator_rules(RuleSet(rules=[FailureRule("ImagePullError", image="*:2.1.0-broken")]))

    await _set_version(world, "2.1.0-broken")

    async def halted() -> dict[str, object] | None:
        cluster = await world.get(r.MATRIXONE_CLUSTERS, "mo")
        up = condition(cluster, "UpToDate")
        return up if up.get("reason") == "RolloutHalted" else None

    up = await eventually(halted, timeout=60, message="the roll halts")
    message = str(up["message"])
    assert message.startswith("LogSet mo: RolloutStalled: pod mo-log-2 is not ready"), message
    assert "ImagePull" in message or "ErrImagePull" in message, message
    assert "waiting: DNSet mo, CNSet mo-tp, ProxySet mo" in message
    pods = await world.pods(**{labels.CLUSTER: "mo"})
    broken = [p["metadata"]["name"] for p in pods if _tag(p) == "2.1.0-broken"]
    assert broken == ["mo-log-2"], "the bad version must not spread beyond one log pod"
    assert all(_tag(p) == "2.0.0" for p in pods if p["metadata"]["labels"][labels.COMPONENT] != "LogSet")
    ls = await world.get(r.LOGSETS, "mo")
    assert condition(ls, "UpToDate")["reason"] == "RolloutStalled"

    await _set_version(world, "2.1.0")
    await eventually(
        lambda: world.wait_settled(r.MATRIXONE_CLUSTERS, "mo"),
        timeout=90,
        message="the fixed upgrade completes",
    )
    assert {_tag(p) for p in await world.pods(**{labels.CLUSTER: "mo"})} == {"2.1.0"}


async def test_a_restart_replaces_every_pod_in_order_and_shows_in_events(
    world: World, operator: OperatorRunner
) -> None:
    """Day-2 restart: a new ``matrixorigin.io/restart-at`` on the cluster rolls every
    pod, component by component; the roll is visible in the Events as it runs."""
    await world.apply(world.cluster_manifest("mo", proxy={"replicas": 1}))
    await world.wait_settled(r.MATRIXONE_CLUSTERS, "mo")
    before = {p["metadata"]["name"]: p["metadata"]["uid"] for p in await world.pods(**{labels.CLUSTER: "mo"})}
    await world.kubectl("annotate", "mo", "mo", f"{labels.RESTART_AT}=2026-11-23T22:00:00Z")

    replaced_at: dict[str, float] = {}
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline and len(replaced_at) < len(COMPONENTS):
        for pod in await world.pods(**{labels.CLUSTER: "mo"}):
            if pod["metadata"]["uid"] not in before.values():
                replaced_at.setdefault(pod["metadata"]["labels"][labels.COMPONENT], time.monotonic())
        await asyncio.sleep(0.05)
    assert sorted(replaced_at, key=replaced_at.__getitem__) == list(COMPONENTS), replaced_at
    await world.wait_settled(r.MATRIXONE_CLUSTERS, "mo")
    after = {p["metadata"]["name"]: p["metadata"]["uid"] for p in await world.pods(**{labels.CLUSTER: "mo"})}
    assert not set(after.values()) & set(before.values()), "every pod was replaced"
    events = (await world.kubectl("get", "events", "-o", "yaml")).stdout
    for reason in ("RollingUpdate", "RolloutComplete", "Rolling"):
        assert f"reason: {reason}" in events, reason
