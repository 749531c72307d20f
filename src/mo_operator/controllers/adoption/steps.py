"""The next step of a takeover, decided from what the cluster shows (pure).

Both drivers of a takeover use this one decision: ``mo-operator adopt`` (a
loop that reads the namespace, takes the step, reads again) and the set
controllers of ``mo-operator run`` when a cluster is opted in (each
reconcile reads the cache, takes at most one step, requeues). Because the
decision reads only the current state, a driver killed at any point resumes
where it stopped.

Per set, in order: its Kruise workload is deleted with orphan propagation
(``RELEASE``, only when the preflight finds it safe, else ``REFUSED``; a LogSet
first records the ordinals the workload reserved, which only it knew); the
garbage collector clears the pods' controller references (``RELEASING``);
a released CN pod is told where its store is registered
(``RECORD_HAKEEPER``) so that upstream's draining finalizer, which it keeps,
deletes the store when it goes; a pool's CNSet, which never rolls, makes each
pod its own as it is (``ADOPT_POD``: claims keep their pods, sessions stay);
any other set's workload rolls the pods (``ROLLING``);
old proxy pods go one at a time once our Deployment is available
(``RETIRE_POD``); the Go operator's ConfigMaps no pod mounts are deleted
(``COLLECT_CONFIG_MAP``). A set with no step left is taken over.

Across sets (``next_step``): a set already released goes first, so one set
rolls at a time; then the first set still held, in dependency order (log
service, TN, CN, proxy).
"""

from __future__ import annotations

import enum
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from mo_operator.matrixone import labels, names
from mo_operator.matrixone import reserved as ordinals
from mo_operator.matrixone.component import Component

from ..cnset import pods as cnpods
from ..cnset import pooling as cnpooling
from ..framework.meta import is_deleting, name_of
from ..specs import pods as podutil
from ..specs.configmaps import CONFIG_HASH_LABEL
from .kruise import ORDER, SET_KINDS, kruise_controller
from .preflight import plan_set, reserved_ordinals

Obj = Mapping[str, Any]
_LEGACY_SUFFIX = re.compile(r"-[0-9a-f]{7}")


class StepKind(enum.Enum):
    RELEASE = "release"
    REFUSED = "refused"
    RELEASING = "releasing"
    RECORD_HAKEEPER = "record-hakeeper"
    ADOPT_POD = "adopt-pod"
    ROLLING = "rolling"
    RETIRE_POD = "retire-pod"
    COLLECT_CONFIG_MAP = "collect-config-map"


WRITES = frozenset(
    {
        StepKind.RELEASE,
        StepKind.RECORD_HAKEEPER,
        StepKind.ADOPT_POD,
        StepKind.RETIRE_POD,
        StepKind.COLLECT_CONFIG_MAP,
    }
)
HELD = frozenset({StepKind.RELEASE, StepKind.REFUSED})
"""Steps of a set whose Kruise workload still stands."""


@dataclass(frozen=True)
class SetState:
    """What a takeover needs to know of one set."""

    component: Component
    obj: Obj
    """The set (LogSet, DNSet, CNSet, ProxySet)."""
    workload: Obj | None
    """Its Kruise workload; None once gone (or never there)."""
    pods: Sequence[Obj]
    """The pods with the set's selector labels."""
    ours: Obj | None = None
    """Our StatefulSet (log service, TN) or Deployment (proxy) of the set; None for a CNSet."""
    config_maps: Sequence[Obj] = ()
    """The ConfigMaps with the set's selector labels."""
    mounted: frozenset[str] = frozenset()
    """Names of the ConfigMaps any pod of the namespace mounts."""

    @property
    def name(self) -> str:
        return name_of(self.obj)

    @property
    def namespace(self) -> str:
        return str(self.obj["metadata"].get("namespace") or "")

    @property
    def label(self) -> str:
        return f"{self.component.kind} {self.name}"


@dataclass(frozen=True)
class Step:
    """One step of one set's takeover: a write to make, or what to wait for."""

    kind: StepKind
    component: Component
    set_name: str
    message: str
    target: Obj | None = None
    """The object the write acts on: the Kruise workload, a pod or a ConfigMap."""
    annotations: Mapping[str, str] = field(default_factory=dict)
    """``RECORD_HAKEEPER``: the annotations the pod gets; ``RELEASE``: the ones the set
    gets before its workload goes (a LogSet's reserved ordinals)."""
    owner: Mapping[str, Any] | None = None
    """``ADOPT_POD``: the controller reference the pod gets (its pooling CNSet)."""

    @property
    def writes(self) -> bool:
        return self.kind in WRITES

    @property
    def held(self) -> bool:
        return self.kind in HELD

    def describe(self) -> str:
        return f"{self.component.kind} {self.set_name}: {self.message}"


def set_step(state: SetState) -> Step | None:
    """The next step of ``state``'s takeover; None when the set runs under our workload alone."""
    workload = state.workload
    if workload is not None and not is_deleting(workload):
        return _release(state, workload)
    if workload is not None or any(kruise_controller(p) for p in state.pods):
        return _step(state, StepKind.RELEASING, "waiting for the garbage collector to release the pods")
    if state.component is Component.CN:
        recorded = _record_hakeeper(state)
        if recorded is not None:
            return recorded
        if cnpooling.is_pooling(state.obj.get("spec") or {}):
            return _adopt_pool_pod(state) or _collect_config_map(state)
    if state.component is Component.PROXY:
        retired = _retire_proxy_pod(state)
        if retired is not None:
            return retired
    rolling = _rolling(state)
    if rolling is not None:
        return _step(state, StepKind.ROLLING, rolling)
    return _collect_config_map(state)


def _collect_config_map(state: SetState) -> Step | None:
    for cm in go_operator_config_maps(state.component, state.name, state.config_maps, state.mounted):
        return _step(
            state,
            StepKind.COLLECT_CONFIG_MAP,
            f"deleting the Go operator's ConfigMap {name_of(cm)}, which no pod mounts",
            target=cm,
        )
    return None


def next_step(states: Sequence[SetState]) -> Step | None:
    """The step the takeover of these sets takes now; None when every one is taken over.

    A set already released comes first, whatever its place, so that no second set
    is released while one rolls; then the first held set in dependency order."""
    steps = [s for s in (set_step(state) for state in in_order(states)) if s is not None]
    for step in steps:
        if not step.held:
            return step
    return steps[0] if steps else None


def in_order(states: Sequence[SetState]) -> list[SetState]:
    """Dependency order (log service, TN, CN, proxy), then by name."""
    return sorted(states, key=lambda s: (ORDER.index(s.component), s.name))


def _step(state: SetState, kind: StepKind, message: str, **extra: Any) -> Step:
    return Step(kind, state.component, state.name, message, **extra)


def _release(state: SetState, workload: Obj) -> Step:
    plan = plan_set(state.component, state.obj, workload, _live(state.pods))
    if plan.refusals:
        return _step(state, StepKind.REFUSED, "; ".join(plan.refusals), target=workload)
    reserved = reserved_ordinals(state.component, workload)
    if not reserved:
        return _step(
            state,
            StepKind.RELEASE,
            f"deleting {plan.workload} with propagationPolicy=Orphan (its pods and claims stay)",
            target=workload,
        )
    return _step(
        state,
        StepKind.RELEASE,
        f"recording reserved ordinals {sorted(reserved)} on the {state.label}, then deleting "
        f"{plan.workload} with propagationPolicy=Orphan (its pods and claims stay)",
        target=workload,
        annotations={labels.LOGSET_RESERVED_ORDINALS: ordinals.encode(reserved)},
    )


def _live(pods: Sequence[Obj]) -> list[Obj]:
    return [p for p in pods if not is_deleting(p)]


def has_controller(obj: Obj) -> bool:
    return any(ref.get("controller") for ref in (obj.get("metadata") or {}).get("ownerReferences") or ())


def hakeeper_annotations(cnset: Obj) -> dict[str, str]:
    """Where the CNSet's stores are registered (its LogSet's HAKeeper); empty when it names no LogSet."""
    logset = ((cnset.get("spec") or {}).get("deps") or {}).get("logSet") or {}
    if not logset.get("name"):
        return {}
    namespace = logset.get("namespace") or str(cnset["metadata"].get("namespace") or "")
    return {
        cnpods.HAKEEPER_ANNOTATION: names.discovery_address(logset["name"], namespace),
        cnpods.LOGSET_ANNOTATION: f"{namespace}/{logset['name']}",
    }


def _record_hakeeper(state: SetState) -> Step | None:
    wanted = hakeeper_annotations(state.obj)
    if not wanted:
        return None
    for pod in sorted(state.pods, key=name_of):
        current = (pod.get("metadata") or {}).get("annotations") or {}
        if not has_controller(pod) and any(current.get(k) != v for k, v in wanted.items()):
            return _step(
                state,
                StepKind.RECORD_HAKEEPER,
                f"recording on pod {name_of(pod)} the HAKeeper its store is registered with",
                target=pod,
                annotations=wanted,
            )
    return None


def _adopt_pool_pod(state: SetState) -> Step | None:
    """A pool's CNSet never rolls: its pods stay as they are, bound ones serving their
    claims' sessions, and become the set's own (its controller reference, so that they
    go with it). Done once every pod is the set's and none is still going."""
    for pod in sorted(_live(state.pods), key=name_of):
        if not has_controller(pod):
            return _step(
                state,
                StepKind.ADOPT_POD,
                f"making pod {name_of(pod)} the CNSet's own, as it is (a pool's pods do not roll)",
                target=pod,
                owner=pool_owner(state),
            )
    going = sorted(name_of(p) for p in state.pods if is_deleting(p))
    if going:
        return _step(state, StepKind.ROLLING, f"waiting for pods {', '.join(going)} to go")
    return None


def pool_owner(state: SetState) -> dict[str, Any]:
    """The controller reference to the set a pool's pod gets, as the set gives its own pods."""
    res = SET_KINDS[state.component].sets
    meta = state.obj["metadata"]
    return {
        "apiVersion": res.api_version,
        "kind": res.kind,
        "name": meta["name"],
        "uid": meta["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }


def _retire_proxy_pod(state: SetState) -> Step | None:
    """An old proxy pod goes only while our Deployment is fully available and no
    other old pod is going, so the proxy Service always has ready endpoints."""
    old = sorted((p for p in state.pods if not has_controller(p)), key=name_of)
    if not old:
        return None
    going = [name_of(p) for p in old if is_deleting(p)]
    if going:
        return _step(state, StepKind.ROLLING, f"waiting for old pod {going[0]} to go")
    deployment = names.workload_name(Component.PROXY, state.name)
    if not _deployment_available(state.ours):
        return _step(state, StepKind.ROLLING, f"waiting for Deployment {deployment} to be available")
    return _step(
        state,
        StepKind.RETIRE_POD,
        f"removing old pod {name_of(old[0])} (Deployment {deployment} is available)",
        target=old[0],
    )


def _rolling(state: SetState) -> str | None:
    """What the roll onto our workload still waits for; None once every pod belongs
    to our workload, runs its current template and is ready, and the old ones are
    gone (so their ConfigMaps are no longer mounted)."""
    replicas = int((state.obj.get("spec") or {}).get("replicas") or 0)
    old = sorted(name_of(p) for p in state.pods if not has_controller(p) or _kept_as_it_was(state, p))
    if old:
        return f"waiting for our workload to replace old pods {', '.join(old)}"
    going = sorted(name_of(p) for p in state.pods if is_deleting(p))
    if going:
        return f"waiting for pods {', '.join(going)} to go"
    pods = _live(state.pods)
    ready = sum(1 for p in pods if podutil.is_ready(p))
    if len(pods) != replicas or ready != replicas:
        return f"waiting for {replicas} ready pods ({ready} of {len(pods)} ready)"
    if state.component is Component.CN:
        return None if condition_true(state.obj, "UpToDate") else "waiting for the CNSet to be UpToDate"
    if state.component is Component.PROXY:
        return None if _deployment_available(state.ours) else "waiting for the Deployment to be available"
    return (
        None
        if _statefulset_rolled(state.ours, _statefulset_replicas(state, replicas))
        else "waiting for the StatefulSet to finish its roll"
    )


def _kept_as_it_was(state: SetState, pod: Obj) -> bool:
    """A log store the LogSet keeps itself (below a reserved ordinal) that it adopted as
    the Go operator made it and has yet to replace from our template."""
    return (
        state.component is Component.LOG
        and has_controller(pod)
        and any(ref.get("kind") == "LogSet" for ref in pod["metadata"].get("ownerReferences") or ())
        and labels.LOGSET_TEMPLATE_HASH not in ((pod.get("metadata") or {}).get("labels") or {})
    )


def _statefulset_replicas(state: SetState, replicas: int) -> int:
    """How many of the set's pods its StatefulSet runs: all but a LogSet's own stores."""
    if state.component is not Component.LOG:
        return replicas
    annotations = (state.obj.get("metadata") or {}).get("annotations") or {}
    try:
        return ordinals.recorded(annotations, replicas).statefulset_replicas
    except ordinals.ReservedOrdinalsError:
        return replicas


def _statefulset_rolled(sts: Obj | None, replicas: int) -> bool:
    if sts is None:
        return False
    spec, status = sts.get("spec") or {}, sts.get("status") or {}
    return (
        int(status.get("observedGeneration") or 0) >= int(sts["metadata"].get("generation") or 0)
        and status.get("currentRevision") == status.get("updateRevision")
        and int(status.get("updatedReplicas") or 0) == int(spec.get("replicas") or 0) == replicas
        and int(status.get("readyReplicas") or 0) == replicas
    )


def _deployment_available(dep: Obj | None) -> bool:
    if dep is None:
        return False
    replicas = int((dep.get("spec") or {}).get("replicas") or 0)
    status = dep.get("status") or {}
    return (
        int(status.get("observedGeneration") or 0) >= int(dep["metadata"].get("generation") or 0)
        and int(status.get("updatedReplicas") or 0) == replicas
        and int(status.get("availableReplicas") or 0) >= replicas
    )


def condition_true(obj: Obj, ctype: str) -> bool:
    generation = int(obj["metadata"].get("generation") or 0)
    return any(
        c.get("type") == ctype
        and c.get("status") == "True"
        and int(c.get("observedGeneration") or generation) >= generation
        for c in (obj.get("status") or {}).get("conditions") or ()
    )


def mounted_config_maps(pods: Sequence[Obj]) -> frozenset[str]:
    return frozenset(
        str(v["configMap"].get("name"))
        for p in pods
        for v in (p.get("spec") or {}).get("volumes") or ()
        if isinstance(v.get("configMap"), Mapping)
    )


def go_operator_config_maps(
    component: Component, set_name: str, config_maps: Sequence[Obj], mounted: frozenset[str]
) -> list[Obj]:
    """The Go operator's config ConfigMaps of a set that no pod mounts: ``<set>-<c>-config``
    (operator 1.3 and later) and ``<set>-<c>-config-<7 hex>`` (earlier); ours carry the
    config-base label and are collected by the set's controller."""
    base = names.config_map_base_name(component, set_name)
    return sorted(
        (
            cm
            for cm in config_maps
            if CONFIG_HASH_LABEL not in (cm["metadata"].get("labels") or {})
            and (name_of(cm) == base or _is_legacy_name(name_of(cm), base))
            and name_of(cm) not in mounted
            and not is_deleting(cm)
        ),
        key=name_of,
    )


def _is_legacy_name(name: str, base: str) -> bool:
    return name.startswith(base) and _LEGACY_SUFFIX.fullmatch(name[len(base) :]) is not None
