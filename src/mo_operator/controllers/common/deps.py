"""Dependencies on the dependent side: how a TN, CN or proxy set finds the
log service it runs against, or says what it waits for.

A set names its log service in ``deps``: a LogSet (by name, in its own
namespace unless told otherwise) or an external HAKeeper by address. A
LogSet is usable once it reports its discovery address, which it does once
its HAKeeper has bootstrapped; from then on the address never changes, so a
set keeps reconciling through the log service's own rolls and hiccups
instead of freezing whenever the LogSet is briefly not Ready. Waiting is a
condition (reason and message), not an error: nothing is retried in a hot
loop, and the LogSet's own changes wake the waiting sets (``Watches``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from mo_operator.kube.objects import mapping_at, view
from mo_operator.matrixone import version
from mo_operator.matrixone.discovery import HAKeeperEndpoint, active_ordinals, hakeeper_service_addresses

from . import resources as r
from .env import Caches
from .meta import logset_ref as logset_ref


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


def resolve(caches: Caches, obj: Mapping[str, Any], spec: Mapping[str, Any]) -> LogService | Waiting:
    """The log service of set ``obj`` (with admitted ``spec``), or why it must wait."""
    external = mapping_at(obj, "deps", "externalLogSet").get("haKeeperEndpoint")
    if external:
        return LogService(HAKeeperEndpoint(str(external)))
    ref = logset_ref(obj)
    if ref is None:
        return Waiting("NoLogService", "deps names neither a logSet nor an externalLogSet")
    namespace, name = ref
    logset = caches.get(r.LOGSETS, namespace, name)
    if logset is None:
        return Waiting("WaitingForLogSet", f"LogSet {namespace}/{name} does not exist yet")
    body = view(logset)
    discovery = body.status.get("discovery") or {}
    if not discovery.get("address"):
        return Waiting("WaitingForLogSet", f"LogSet {namespace}/{name} has not bootstrapped its HAKeeper yet")
    address = f"{discovery['address']}:{discovery.get('port')}"
    addresses: tuple[str, ...] = ()
    if not version.has_feature(version.version_of(spec), version.MOFeature.DISCOVERY_FIXED):
        replicas = int(body.spec.get("replicas") or 0)
        addresses = tuple(hakeeper_service_addresses(name, namespace, active_ordinals(replicas)))
    storage = body.spec.get("sharedStorage") or {}
    return LogService(HAKeeperEndpoint(address, addresses), storage, logset)
