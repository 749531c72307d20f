"""Dependencies on the dependent side: how a TN, CN or proxy set finds the
log service it runs against, or says what it waits for.

A set names its log service in ``deps``: a LogSet (by name, in its own
namespace unless told otherwise) or an external HAKeeper by address; a CNSet
may also name its DNSet. The rules are upstream's (matrixone-operator
``api/core/v1alpha1/*_types.go`` ``GetDependencies``): a DNSet, CNSet or
ProxySet starts once its LogSet is Ready at its latest generation
(Ready follows the log stores' pods, and the LogSet publishes its discovery
address as soon as its discovery Service and StatefulSet exist: no HAKeeper
round trip), a CNSet also once its DNSet is. MatrixOne's processes wait for
their HAKeeper themselves. Once a set has started it keeps reconciling
through the log service's own rolls and hiccups instead of freezing whenever
the LogSet is briefly not Ready (upstream polls the dependencies before every
round; the cluster's ordered rolls already keep the order). Waiting is a
condition (reason and message), not an error: nothing is retried in a hot
loop, and the LogSet's (and DNSet's) own changes wake the waiting sets
(``Watches``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from mo_operator.api.common import PodSet
from mo_operator.kube.meta.objects import annotations_of, mapping_at, meta_of, namespace_of, view
from mo_operator.matrixone import reserved, version
from mo_operator.matrixone.discovery import HAKeeperEndpoint, hakeeper_service_addresses

from ..framework import resources as r
from ..framework.env import Caches
from ..framework.meta import logset_ref as logset_ref


@dataclass(frozen=True)
class LogService:
    """The log service a set runs against."""

    endpoint: HAKeeperEndpoint
    shared_storage: Mapping[str, Any] = field(default_factory=dict)
    """The LogSet's ``spec.sharedStorage``; empty for an external log service (the set's
    own ``config`` must then say where the data lives)."""
    logset: Mapping[str, Any] | None = None
    """The LogSet as cached; None for an external log service."""

    @property
    def discovery_address(self) -> str:
        return self.endpoint.discovery_address


@dataclass(frozen=True)
class Waiting:
    """Why a set cannot run yet."""

    reason: str
    message: str


def ready_at_generation(obj: Mapping[str, Any]) -> bool:
    """Upstream's dependency test (controller-runtime ``recon.IsReady`` and
    ``IsSyncedWithLatestGeneration``): ``Ready`` True in a status written for the
    object's latest generation. Upstream's ``Synced`` is True on every round that
    applied the spec, which our ``observedGeneration`` says; our ``Synced`` settling is
    a non-urgent status change (``kube/controller/status_policy.py``), written up to a window late,
    so waiting for it would only delay every dependent by that window."""
    body = view(obj)
    ready = body.condition("Ready")
    current = int(body.status.get("observedGeneration") or 0) == int(body.meta.generation or 0)
    return current and ready is not None and ready.get("status") == "True"


def _dnset_of(caches: Caches, obj: Mapping[str, Any]) -> tuple[str, str, Mapping[str, Any] | None] | None:
    """The DNSet (or TNSet) a CNSet's ``deps.dnSet`` names, if it names one."""
    ref = meta_of(mapping_at(obj, "deps", "dnSet"))
    if not ref.name:
        return None
    namespace = ref.namespace or namespace_of(obj)
    found = caches.get(r.DNSETS, namespace, ref.name) or caches.get(r.TNSETS, namespace, ref.name)
    return namespace, ref.name, found


def _waiting(namespace: str, name: str, dnset: tuple[str, str, Mapping[str, Any] | None] | None) -> Waiting:
    """Why a set waits, in the same words for its whole wait: a message that moved on
    with each step of its LogSet would be a status change of its own at each step."""
    if dnset is None:
        return Waiting("WaitingForLogSet", f"waiting for LogSet {namespace}/{name} to be Ready")
    tn_namespace, tn_name, _ = dnset
    return Waiting(
        "WaitingForDependencies",
        f"waiting for LogSet {namespace}/{name} and DNSet {tn_namespace}/{tn_name} to be Ready",
    )


def resolve(
    caches: Caches, obj: Mapping[str, Any], spec: PodSet, *, started: bool = True
) -> LogService | Waiting:
    """The log service of set ``obj`` (with admitted ``spec``), or why it must wait.
    ``started``: the set runs already, and only needs the LogSet's address to go on."""
    external = mapping_at(obj, "deps", "externalLogSet").get("haKeeperEndpoint")
    if external:
        return LogService(HAKeeperEndpoint(str(external)))
    ref = logset_ref(obj)
    if ref is None:
        return Waiting("NoLogService", "deps names neither a logSet nor an externalLogSet")
    namespace, name = ref
    logset = caches.get(r.LOGSETS, namespace, name)
    dnset = _dnset_of(caches, obj) if not started else None
    waiting = _waiting(namespace, name, dnset)
    if logset is None:
        return waiting
    body = view(logset)
    discovery = body.status.get("discovery") or {}
    if not discovery.get("address"):
        return waiting
    if not started and not ready_at_generation(logset):
        return waiting
    if dnset is not None and (dnset[2] is None or not ready_at_generation(dnset[2])):
        return waiting
    address = f"{discovery['address']}:{discovery.get('port')}"
    addresses: tuple[str, ...] = ()
    runs = version.version_from(spec.semantic_version, spec.image)
    if not version.has_feature(runs, version.MOFeature.DISCOVERY_FIXED):
        replicas = int(body.spec.get("replicas") or 0)
        addresses = tuple(hakeeper_service_addresses(name, namespace, _live(logset, replicas)))
    storage = body.spec.get("sharedStorage") or {}
    return LogService(HAKeeperEndpoint(address, addresses), storage, logset)


def _live(logset: Mapping[str, Any], replicas: int) -> Sequence[int]:
    """The LogSet's store ordinals (around the ordinals a taken-over LogSet reserves);
    0.. for a record the LogSet itself refuses (its condition says why)."""
    try:
        return reserved.recorded(annotations_of(logset), replicas).live
    except reserved.ReservedOrdinalsError:
        return range(replicas)
