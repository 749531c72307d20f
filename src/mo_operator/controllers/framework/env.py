"""What every MatrixOne controller reaches: the API client, the shared caches,
the MatrixOne admin interface, the settings and the clock.

One ``Env`` is built at start-up (``controllers/operator.py``) and handed to
every actor, so the actors hold no connections, informers or records of their
own writes, and tests can build one around fakes.

The caches are the shared informers, scoped to what we manage: our kinds in
full, and the built-in objects we create only when they carry
``matrixorigin.io/component`` (every object the operator creates does), so a
large cluster's unrelated Pods and ConfigMaps never enter our memory.
"""

from __future__ import annotations

import builtins
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from mo_operator.kube.cache.cache import IndexFunc
from mo_operator.kube.cache.informer import SharedInformer
from mo_operator.kube.cache.informer_factory import InformerFactory
from mo_operator.kube.cache.reads import check_read
from mo_operator.kube.client.resource import Resource
from mo_operator.kube.manager.adapters import Client
from mo_operator.kube.meta.objects import labels_of, namespace_of
from mo_operator.kube.meta.selectors import as_selector
from mo_operator.matrixone import labels
from mo_operator.matrixone.admin import MOAdminProvider
from mo_operator.settings import Settings

from . import resources as r
from .meta import logset_ref
from .references import ReferenceLookup
from .unseen import Unseen

MANAGED_SELECTOR = labels.COMPONENT
"""Label selector (key exists) of every built-in object the operator creates."""

LOGSET_REF_INDEX = "logset-ref"
"""Index of sets by the ``namespace/name`` of the LogSet their ``deps`` name."""
LABEL_INDEXES: Mapping[Resource, str] = {r.BUCKETCLAIMS: labels.BUCKET_UNIQUE_ID}
"""Labels the caches index, by resource: ``Caches.list`` with one of them in its
``match_labels`` is a lookup rather than a pass over every cached object (the LogSet
controller finds the claim of its S3 path, in any namespace, on every reconcile)."""

OUR_KINDS: tuple[Resource, ...] = (
    r.MATRIXONE_CLUSTERS,
    r.LOGSETS,
    r.DNSETS,
    r.TNSETS,
    r.CNSETS,
    r.PROXYSETS,
    r.WEBUIS,
    r.BUCKETCLAIMS,
    r.BACKUPJOBS,
    r.RESTOREJOBS,
    r.BACKUPSCHEDULES,
    r.BACKUPS,
    r.CNPOOLS,
    r.CNCLAIMS,
    r.CNCLAIMSETS,
)
OWNED_KINDS: tuple[Resource, ...] = (
    r.STATEFULSETS,
    r.DEPLOYMENTS,
    r.SERVICES,
    r.CONFIGMAPS,
    r.PODS,
    r.PVCS,
    r.SECRETS,
    r.JOBS,
    r.PDBS,
)
READ_KINDS: tuple[Resource, ...] = (r.STORAGECLASSES,)
"""Objects others own that the controllers read in full: StorageClasses (few, cluster-wide),
whether a claim may grow."""


def logset_ref_key(obj: Mapping[str, Any]) -> Iterable[str]:
    """The LogSet a set depends on, as ``namespace/name`` (index function)."""
    ref = logset_ref(obj)
    return () if ref is None else (f"{ref[0]}/{ref[1]}",)


def label_index_name(key: str) -> str:
    return f"label:{key}"


def label_key(key: str) -> IndexFunc:
    """The index function of label ``key``: its value, if the object has it."""

    def index(obj: Mapping[str, Any]) -> Iterable[str]:
        value = labels_of(obj).get(key)
        return (value,) if isinstance(value, str) else ()

    return index


class Caches:
    """The shared informers the controllers read from, by resource.

    Scoped to some namespaces, a resource has one informer per namespace
    (each lists and watches only its namespace, which is all the RBAC of a
    namespaced install allows); reads route to the right one. Every read is
    checked (``kube.cache.reads.check_read``): a reconcile reading a cache that has
    not synced raises instead of deciding from a partial list.
    """

    def __init__(self, informers: InformerFactory, namespaces: Iterable[str] = ()) -> None:
        self.factory = informers
        self.namespaces = tuple(namespaces)
        self._informers: dict[Resource, dict[str | None, SharedInformer]] = {}
        dependents: Mapping[str, IndexFunc] = {LOGSET_REF_INDEX: logset_ref_key}
        for res in OUR_KINDS:
            indexers = dependents if res in (r.DNSETS, r.TNSETS, r.CNSETS, r.PROXYSETS) else None
            if res in LABEL_INDEXES:
                key = LABEL_INDEXES[res]
                indexers = {**(indexers or {}), label_index_name(key): label_key(key)}
            self._informers[res] = self._scoped(res, None, indexers)
        for res in OWNED_KINDS:
            self._informers[res] = self._scoped(res, MANAGED_SELECTOR, None)
        for res in READ_KINDS:
            self._informers[res] = self._scoped(res, None, None)

    def _scoped(
        self, res: Resource, selector: str | None, indexers: Mapping[str, IndexFunc] | None
    ) -> dict[str | None, SharedInformer]:
        scopes: tuple[str | None, ...] = self.namespaces if self.namespaces and res.namespaced else (None,)
        return {ns: self.factory.informer(res, ns, selector, indexers=indexers) for ns in scopes}

    def informers(self, res: Resource) -> list[SharedInformer]:
        """Every informer of ``res`` (one per watched namespace): the event sources of a controller."""
        return list(self._informers[res].values())

    def get(self, res: Resource, namespace: str, name: str) -> Mapping[str, Any] | None:
        scopes = self._informers[res]
        informer = scopes.get(namespace) if None not in scopes else scopes[None]
        if informer is None:
            return None
        check_read(informer, str(res))
        return informer.get(namespace or None, name)

    def list(
        self, res: Resource, namespace: str | None = None, match_labels: Mapping[str, str] | None = None
    ) -> builtins.list[Mapping[str, Any]]:
        """Cached objects in ``namespace`` (all when None) carrying every label of ``match_labels``."""
        selector = None if match_labels is None else {"matchLabels": dict(match_labels)}
        scopes = self._informers[res]
        if namespace is not None and None not in scopes:
            one = scopes.get(namespace)
            informers: builtins.list[SharedInformer] = [] if one is None else [one]
        else:
            informers = builtins.list(scopes.values())
        for informer in informers:
            check_read(informer, str(res))
        indexed = LABEL_INDEXES.get(res)
        if match_labels is not None and indexed is not None and indexed in match_labels:
            rest = as_selector(selector)
            return [
                o
                for informer in informers
                for o in informer.store.by_index(label_index_name(indexed), match_labels[indexed])
                if (namespace is None or namespace_of(o) == namespace) and rest.matches_object(o)
            ]
        return [o for informer in informers for o in informer.store.list(namespace, selector)]

    def by_index(self, res: Resource, index: str, value: str) -> builtins.list[Mapping[str, Any]]:
        informers = builtins.list(self._informers[res].values())
        for informer in informers:
            check_read(informer, str(res))
        return [o for informer in informers for o in informer.store.by_index(index, value)]


@dataclass
class Env:
    """Everything an actor may use besides the object it reconciles."""

    client: Client
    caches: Caches
    admin: MOAdminProvider
    settings: Settings = field(default_factory=Settings)
    clock: Callable[[], float] = time.time
    unseen: Unseen = field(default_factory=Unseen)
    """The applies this operator made that its caches have not shown yet (``writes.applies``)."""
    references: ReferenceLookup | None = None
    """Whether the Secrets and ConfigMaps a spec names exist (``references.py``); None
    looks up nothing (tests of a controller's other concerns)."""
