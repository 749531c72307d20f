"""Failure rules: matching and their ConfigMap form."""

from __future__ import annotations

from mo_devkit.localcluster.simulator.rules import (
    Effect,
    FailureRule,
    RuleSet,
    rules_configmap,
    rules_from_configmap,
)

from .factories import pod


def test_rules_match_on_name_labels_namespace_and_image_globs() -> None:
    rs = RuleSet()
    rs.add(FailureRule(Effect.CRASH_LOOP, name="web-*", labels={"tier": "f*"}, namespace="prod"))
    rs.add(effect="ImagePullError", image="*:broken")
    p = pod("web-1", "prod", labels={"tier": "front"})
    assert rs.rule_for(p, {"name": "app", "image": "nginx"}).effect is Effect.CRASH_LOOP  # type: ignore[union-attr]
    q = pod("db-0", "prod")
    assert rs.rule_for(q, {"name": "app", "image": "nginx"}) is None
    assert rs.rule_for(q, {"name": "app", "image": "x:broken"}).effect is Effect.IMAGE_PULL_ERROR  # type: ignore[union-attr]


def test_changes_notify_and_roundtrip_through_configmap() -> None:
    rs = RuleSet()
    seen: list[int] = []
    rs.on_change(lambda: seen.append(1))
    rule = rs.add(FailureRule(Effect.NEVER_READY, name="a"))
    rs.kill_pod("b", "ns", exit_code=1)
    rs.kill_node("n1")
    assert len(seen) == 3
    cm = rules_configmap(rs)
    assert cm["metadata"] == {"name": "simulator-rules", "namespace": "localcluster-system"}
    back = rules_from_configmap(cm)
    assert back.rules == [rule]
    assert back.dead_nodes == {"n1"}
    assert back.pod_kills == rs.pod_kills
    rs.remove(rule)
    assert rs.rules == []
    assert rules_from_configmap({"data": {"rules.json": "not json"}}).rules == []
