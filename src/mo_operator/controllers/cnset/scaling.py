"""Which CN pods to create, put back to work, or retire: a pure decision.

CN pods are managed directly (see docs/design.md): a StatefulSet cannot
choose which pod leaves on scale-in nor keep a pod draining, and a
Deployment cannot either. Each reconcile looks at the set's pods and
decides, against the goal of exactly ``replicas`` ready pods running the
current template, with none draining:

- **scale-out** creates the missing pods, at most ``max_create`` in one round
  (the plan's room, ``framework/writes.py``: a spec of a thousand replicas costs
  rounds, not one reconcile holding a thousand pods), but first puts back to
  work pods that are still draining (their sessions never left, and a new
  pod would start cold);
- **scale-in** retires the pods that matter least: those named in
  ``podsToDelete``, then outdated ones, then not-ready ones, then those
  with the fewest sessions, then the highest index;
- **rolls** go like a CloneSet with ``maxSurge``/``maxUnavailable`` (1/0 by
  default): a new pod first, an old one retired only once enough pods are
  ready, and no new pod while a new pod is not ready, so a bad version
  stops at one broken pod instead of spreading.

Pod names are ``<cn>-cn-<index>``, the lowest indices free; a name is
reused only once its previous pod is completely gone. Deterministic names
make creation idempotent: a reconcile that does not yet see the pod it
created a moment ago asks for the same name again and gets AlreadyExists,
never a duplicate.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from mo_operator.api.cnset import CNSetSpec
from mo_operator.kube.meta.intstr import scaled_value
from mo_operator.matrixone.names import free_ordinals


@dataclass(frozen=True)
class CNPod:
    """What the decision needs to know of one pod."""

    name: str
    index: int
    current: bool
    """Runs the current template."""
    ready: bool
    draining: bool
    deleting: bool = False
    sessions: int = 0


@dataclass(frozen=True)
class PodChanges:
    create: tuple[int, ...] = ()
    """Indices of pods to create with the current template."""
    undrain: tuple[str, ...] = ()
    """Draining pods to put back to work."""
    retire: tuple[str, ...] = ()
    """Pods to retire (drain, or delete when draining is off)."""
    waiting: str | None = None
    """Why the roll does not go on (a new pod is not ready yet)."""


@dataclass(frozen=True)
class Strategy:
    max_surge: int = 1
    max_unavailable: int = 0
    pods_to_delete: frozenset[str] = field(default_factory=frozenset)
    paused: bool = False
    """``pauseUpdate``: outdated pods stay (and count) until it is lifted."""


def resolve_int_or_percent(value: object, replicas: int, *, round_up: bool, default: int) -> int:
    """A ``maxSurge``/``maxUnavailable`` value: a count, or a percentage of replicas."""
    if value is None:
        return default
    if isinstance(value, int | str):
        found = scaled_value(value, replicas, round_up=round_up)
        if found is not None:
            return found
    try:
        return int(str(value))  # a count written as a string
    except ValueError:
        return default


def strategy_of(spec: CNSetSpec, replicas: int) -> Strategy:
    update = spec.update_strategy
    max_surge = update.max_surge if update is not None else None
    max_unavailable = update.max_unavailable if update is not None else None
    surge = resolve_int_or_percent(max_surge, replicas, round_up=True, default=1)
    unavailable = resolve_int_or_percent(max_unavailable, replicas, round_up=False, default=0)
    if surge == 0 and unavailable == 0:
        surge = 1  # as Deployments and CloneSets: a roll must be able to move
    to_delete = frozenset(spec.pods_to_delete or ())
    return Strategy(surge, unavailable, to_delete, bool(spec.pause_update))


def _retire_order(pod: CNPod, strategy: Strategy) -> tuple[bool, bool, bool, int, int]:
    """Sort key: the first pods of the order are retired first."""
    return (pod.name not in strategy.pods_to_delete, pod.current, pod.ready, pod.sessions, -pod.index)


def decide_pods(
    pods: Sequence[CNPod], replicas: int, strategy: Strategy, *, max_create: int | None = None
) -> PodChanges:
    """What to do now, toward ``replicas`` ready current pods and none draining; at
    most ``max_create`` pods are created in this round."""
    live = [p for p in pods if not p.deleting]
    active = [p for p in live if not p.draining]
    draining = [p for p in live if p.draining]
    keepable = active if strategy.paused else [p for p in active if p.current]
    # Keep the best `replicas` keepable pods (the reverse of the retire order).
    ranked = sorted(keepable, key=lambda p: _retire_order(p, strategy), reverse=True)
    kept = [p for p in ranked if p.name not in strategy.pods_to_delete][:replicas]
    kept_names = {p.name for p in kept}
    doomed = [p for p in active if p.name not in kept_names]
    rolling = any(not p.current for p in doomed)

    missing = replicas - len(kept)
    undrain: list[CNPod] = []
    if missing > 0:
        reusable = [
            p for p in draining if (p.current or strategy.paused) and p.name not in strategy.pods_to_delete
        ]
        reusable.sort(key=lambda p: (-p.sessions, p.index))
        undrain = reusable[:missing]
        missing -= len(undrain)

    new_not_ready = [p.name for p in kept if p.current and not p.ready]
    waiting = f"waiting for new pod {new_not_ready[0]} to become ready" if rolling and new_not_ready else None
    create: list[int] = []
    if missing > 0 and waiting is None:
        room = missing
        if rolling:
            room = min(missing, replicas + strategy.max_surge - len(active) - len(undrain))
        if max_create is not None:
            room = min(room, max_create)
        create = free_ordinals(max(room, 0), {p.index for p in pods})

    # Retire what must go. Not-ready pods serve nobody: always. Pods asked away
    # (scale-in, podsToDelete): always, fewer pods is what was asked for. Outdated
    # pods of a roll: only while enough pods stay ready (maxUnavailable).
    available = sum(1 for p in active if p.ready)
    floor = replicas - strategy.max_unavailable
    retire: list[str] = []
    for pod in sorted(doomed, key=lambda p: _retire_order(p, strategy)):
        asked_away = pod.current or pod.name in strategy.pods_to_delete or strategy.paused
        if not pod.ready or asked_away or available - 1 >= floor:
            retire.append(pod.name)
            available -= pod.ready
    return PodChanges(tuple(create), tuple(p.name for p in undrain), tuple(retire), waiting)
