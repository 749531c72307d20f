"""Which kinds get which admission webhook, at which URL path and under which name.

Paths are the ones controller-runtime derives and upstream serves
(``/mutate-core-matrixorigin-io-v1alpha1-<kind>``, ``/validate-…``), so a cluster
moving from the Go operator keeps its webhook URLs. Webhook names follow our
install manifests (``m<kind>.core.matrixorigin.io``, ``v<kind>.core.matrixorigin.io``);
kubectl shows the name in every denial.

Which kinds, explicitly:

* **defaulting** (mutating): the kinds whose defaulting does more than the CRD
  schema's own defaults, which the API server applies without us:
  MatrixOneCluster, LogSet, DNSet, TNSet, CNSet, ProxySet (upstream's list, with
  TNSet, our newer name of DNSet). WebUI, BucketClaim, the backup kinds and the
  CN pool kinds have no defaulting rules, so a call for them would cost a round
  trip and a failure point for nothing (upstream's WebUI defaulter is empty).
* **validation**: every kind of ours, since every kind has rules beyond its
  schema (see :mod:`mo_operator.api.validation`), Backup (cluster-scoped)
  included. Upstream registers fewer (CNClaim's validator exists but is never
  registered); ours checks what its models check.
"""

from __future__ import annotations

from dataclasses import dataclass

from mo_operator.api.kinds import GROUP, KINDS, VERSION
from mo_operator.api.ownership import CHILD_KINDS

__all__ = [
    "DEFAULTED_KINDS",
    "MUTATING_ROUTES",
    "VALIDATED_KINDS",
    "VALIDATING_ROUTES",
    "Route",
    "route",
]

DEFAULTED_KINDS: tuple[str, ...] = ("MatrixOneCluster", "LogSet", "DNSet", "TNSet", "CNSet", "ProxySet")
"""Kinds with a defaulting (mutating) webhook, in :data:`~mo_operator.api.kinds.KINDS` order."""

VALIDATED_KINDS: tuple[str, ...] = tuple(KINDS)
"""Kinds with a validating webhook: all of ours."""

_GROUP_IN_PATH = GROUP.replace(".", "-")


@dataclass(frozen=True)
class Route:
    """One kind's webhook addressing: what the configurations and the server share."""

    kind: str
    plural: str
    namespaced: bool
    scale: bool = False
    """Whether the validating webhook also reviews writes through ``/scale``: a set a
    MatrixOneCluster may own that has the subresource, so that ``kubectl scale`` of an
    owned set gets the warning that the cluster sets it back (see :mod:`.owned_sets`)."""

    @property
    def lower(self) -> str:
        return self.kind.lower()

    @property
    def mutate_path(self) -> str:
        return f"/mutate-{_GROUP_IN_PATH}-{VERSION}-{self.lower}"

    @property
    def validate_path(self) -> str:
        return f"/validate-{_GROUP_IN_PATH}-{VERSION}-{self.lower}"

    @property
    def mutating_name(self) -> str:
        return f"m{self.lower}.{GROUP}"

    @property
    def validating_name(self) -> str:
        return f"v{self.lower}.{GROUP}"

    @property
    def scope(self) -> str:
        """The ``scope`` of the configuration's rule for this kind."""
        return "Namespaced" if self.namespaced else "Cluster"


def route(kind: str) -> Route:
    """The route of one of our kinds (KeyError for any other)."""
    info = KINDS[kind]
    return Route(info.kind, info.plural, info.namespaced, info.scale is not None and kind in CHILD_KINDS)


MUTATING_ROUTES: tuple[Route, ...] = tuple(route(k) for k in DEFAULTED_KINDS)
VALIDATING_ROUTES: tuple[Route, ...] = tuple(route(k) for k in VALIDATED_KINDS)
