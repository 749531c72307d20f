"""Failures that tests inflict on the simulated cluster.

Rules pick pods by name, namespace and labels and containers by name and
image (shell globs) and give them a failure the kubelet then plays: an image
that cannot be pulled, a crash loop, a container that never becomes ready,
a run-to-completion container that exits non-zero. Kills are one-off: a
container exits once (and restarts per ``restartPolicy``), or a node stops
(its kubelet goes silent).

A test sets them from Python on :attr:`Simulator.rules`, or through the API
by writing the ConfigMap ``simulator-rules`` in ``localcluster-system``
(see :func:`rules_configmap`), which works the same against a real cluster.
"""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any

from .core.objects import Obj, glob_matches, labels_of, name_of, namespace_of

DATA_KEY = "rules.json"


class Effect(StrEnum):
    #: Waiting in ErrImagePull / ImagePullBackOff; the container never starts.
    IMAGE_PULL_ERROR = "ImagePullError"
    #: Starts, exits with ``exit_code`` at once (never ready), restarts with
    #: back-off (CrashLoopBackOff); restartPolicy Never makes the pod Failed.
    CRASH_LOOP = "CrashLoop"
    #: Runs but its readiness probe never passes.
    NEVER_READY = "NeverReady"
    #: A run-to-completion container exits with ``exit_code`` after its run.
    FAIL = "Fail"


_ids = itertools.count(1)


@dataclass(frozen=True)
class FailureRule:
    effect: Effect
    name: str | None = None
    namespace: str | None = None
    labels: Mapping[str, str] = field(default_factory=dict)
    image: str | None = None
    container: str | None = None
    exit_code: int = 1
    id: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "effect", Effect(self.effect))
        object.__setattr__(self, "labels", dict(self.labels))
        if not self.id:
            object.__setattr__(self, "id", f"rule-{next(_ids)}")

    def matches_pod(self, pod: Obj) -> bool:
        if not glob_matches(self.name, name_of(pod)) or not glob_matches(self.namespace, namespace_of(pod)):
            return False
        have = labels_of(pod)
        return all(k in have and glob_matches(v, have[k]) for k, v in self.labels.items())

    def matches_container(self, container: Mapping[str, Any]) -> bool:
        return glob_matches(self.container, str(container.get("name", ""))) and glob_matches(
            self.image, str(container.get("image", ""))
        )

    def to_dict(self) -> dict[str, Any]:
        d = {k: v for k, v in asdict(self).items() if v not in (None, {}, "")}
        d["effect"] = self.effect.value
        return d


@dataclass(frozen=True)
class PodKill:
    """Containers of matching pods that were started before ``at`` exit once."""

    name: str
    namespace: str | None = None
    container: str | None = None
    exit_code: int = 137
    at: float = 0.0

    def matches(self, pod: Obj, container_name: str) -> bool:
        return (
            glob_matches(self.name, name_of(pod))
            and glob_matches(self.namespace, namespace_of(pod))
            and glob_matches(self.container, container_name)
        )


@dataclass
class RuleSet:
    rules: list[FailureRule] = field(default_factory=list)
    pod_kills: list[PodKill] = field(default_factory=list)
    dead_nodes: set[str] = field(default_factory=set)
    _listeners: list[Callable[[], None]] = field(default_factory=list, repr=False, compare=False)

    # ------------------------------------------------------------- editing
    def add(self, rule: FailureRule | None = None, /, **kw: Any) -> FailureRule:
        """Add a rule (or build one from keywords); the first matching rule wins."""
        r = rule if rule is not None else FailureRule(**kw)
        self.rules.append(r)
        self._changed()
        return r

    def remove(self, rule: FailureRule | str) -> None:
        rid = rule if isinstance(rule, str) else rule.id
        self.rules = [r for r in self.rules if r.id != rid]
        self._changed()

    def kill_pod(
        self, name: str, namespace: str | None = None, *, container: str | None = None, exit_code: int = 137
    ) -> PodKill:
        k = PodKill(name, namespace, container, exit_code, time.time())
        self.pod_kills.append(k)
        self._changed()
        return k

    def kill_node(self, name: str) -> None:
        self.dead_nodes.add(name)
        self._changed()

    def revive_node(self, name: str) -> None:
        self.dead_nodes.discard(name)
        self._changed()

    def clear(self) -> None:
        self.rules.clear()
        self.pod_kills.clear()
        self.dead_nodes.clear()
        self._changed()

    def on_change(self, callback: Callable[[], None]) -> None:
        self._listeners.append(callback)

    def _changed(self) -> None:
        for cb in list(self._listeners):
            cb()

    # ------------------------------------------------------------- reading
    def rule_for(self, pod: Obj, container: Mapping[str, Any]) -> FailureRule | None:
        for r in self.rules:
            if r.matches_pod(pod) and r.matches_container(container):
                return r
        return None

    def last_kill(self, pod: Obj, container_name: str) -> PodKill | None:
        """The latest kill aimed at this container."""
        hits = [k for k in self.pod_kills if k.matches(pod, container_name)]
        return max(hits, key=lambda k: k.at) if hits else None

    @staticmethod
    def union(sets: Iterable[RuleSet]) -> RuleSet:
        out = RuleSet()
        for s in sets:
            out.rules.extend(s.rules)
            out.pod_kills.extend(s.pod_kills)
            out.dead_nodes |= s.dead_nodes
        return out

    # ------------------------------------------------------- serialisation
    def to_dict(self) -> dict[str, Any]:
        return {
            "rules": [r.to_dict() for r in self.rules],
            "podKills": [{k: v for k, v in asdict(p).items() if v is not None} for p in self.pod_kills],
            "deadNodes": sorted(self.dead_nodes),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> RuleSet:
        rules = [
            FailureRule(
                effect=Effect(r["effect"]),
                name=r.get("name"),
                namespace=r.get("namespace"),
                labels=dict(r.get("labels") or {}),
                image=r.get("image"),
                container=r.get("container"),
                exit_code=int(r.get("exit_code", r.get("exitCode", 1))),
                id=str(r.get("id") or ""),
            )
            for r in d.get("rules") or []
        ]
        kills = [
            PodKill(
                name=k["name"],
                namespace=k.get("namespace"),
                container=k.get("container"),
                exit_code=int(k.get("exit_code", k.get("exitCode", 137))),
                at=float(k.get("at", 0.0)),
            )
            for k in d.get("podKills") or []
        ]
        return cls(rules, kills, set(d.get("deadNodes") or []))


def rules_configmap(
    rules: RuleSet, namespace: str = "localcluster-system", name: str = "simulator-rules"
) -> Obj:
    """The ConfigMap that carries ``rules`` to a simulator through the API."""
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace},
        "data": {DATA_KEY: json.dumps(rules.to_dict(), sort_keys=True)},
    }


def rules_from_configmap(cm: Obj | None) -> RuleSet:
    """The rules a ConfigMap carries; a missing or unreadable one carries none."""
    if not cm:
        return RuleSet()
    raw = (cm.get("data") or {}).get(DATA_KEY)
    if not raw:
        return RuleSet()
    try:
        return RuleSet.from_dict(json.loads(raw))
    except (ValueError, KeyError, TypeError):
        return RuleSet()
