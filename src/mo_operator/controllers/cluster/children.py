"""The child sets a MatrixOneCluster asks for: a pure function of its spec.

Names and inheritance follow upstream: the LogSet, DNSet and ProxySet are
named like the cluster, each CN group is the CNSet ``<mo>-<group>`` (``tp``
and ``ap`` for the deprecated fields). Children take the cluster's image
(``<imageRepository>:<version>``) unless they name their own, and its
``nodeSelector``, ``topologySpread``, ``semanticVersion``,
``operatorVersion``, ``memoryFsSize`` and ``imagePullPolicy`` unless they set
their own. CNs get the cluster's initial password (``DEFAULT_PASSWORD``, by
Secret reference) and, behind a proxy, ``cn.frontend.proxy-enabled``.

Each child is returned as the defaulting webhook would store it, so that
comparing it with the stored child settles instead of fighting the webhook.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mo_operator.api.base import dump
from mo_operator.api.cluster import MatrixOneClusterSpec
from mo_operator.api.common import PodSet
from mo_operator.api.defaulting import default
from mo_operator.kube.client.resource import Resource
from mo_operator.kube.meta.frozen import as_json, thaw
from mo_operator.kube.meta.objects import mapping_at, meta_of, spec_of
from mo_operator.matrixone import labels, layout, names
from mo_operator.matrixone.config import cn as cn_config
from mo_operator.matrixone.version import default_image

from ..framework import resources as r
from ..framework.desired import stamped
from ..framework.meta import owner_reference
from ..specs.podtemplate import restart_stamp
from .restore import restored_log_spec

Obj = dict[str, Any]

INHERITED: Mapping[str, str] = {
    "nodeSelector": "node_selector",
    "topologySpread": "topology_spread",
    "semanticVersion": "semantic_version",
    "operatorVersion": "operator_version",
    "memoryFsSize": "memory_fs_size",
}
"""The cluster's fields a child takes unless it sets its own: JSON name, model attribute."""
ROLE_LOG, ROLE_TN, ROLE_CN, ROLE_PROXY, ROLE_WEBUI = "log", "tn", "cn", "proxy", "webui"


@dataclass(frozen=True)
class Child:
    """One child set: which role it plays, its resource and its desired object."""

    role: str
    resource: Resource
    obj: Obj

    @property
    def name(self) -> str:
        return str(self.obj["metadata"]["name"])

    @property
    def label(self) -> str:
        """How conditions name it: ``LogSet mo``."""
        return f"{self.resource.kind} {self.name}"


def _inherit(spec: PodSet, cluster: MatrixOneClusterSpec, restart_at: str | None = None) -> Obj:
    """The child's spec as JSON, with what it takes from the cluster."""
    out = dump(spec)
    out["image"] = spec.image or default_image(cluster.version, cluster.image_repository)
    for key, attr in INHERITED.items():
        value = getattr(cluster, attr)
        if out.get(key) in (None, [], {}) and value not in (None, [], {}):
            out[key] = copy.deepcopy(value)
    if cluster.image_pull_policy or restart_at:
        overlay = dump(spec.overlay) if spec.overlay is not None else {}
        if cluster.image_pull_policy:
            overlay.setdefault("imagePullPolicy", cluster.image_pull_policy)
        if restart_at:
            written = spec.overlay.pod_annotations if spec.overlay is not None else None
            overlay["podAnnotations"] = {**(written or {}), labels.RESTART_AT: restart_at}
        out["overlay"] = overlay
    return out


def _keep_initial_config(log_spec: Obj, cluster: Mapping[str, Any], old: Mapping[str, Any] | None) -> Obj:
    """``log_spec`` whose ``initialConfig`` keeps the stored LogSet's values where the
    cluster's own spec names none: admission defaults them from today's ``replicas``
    (``logShardReplicas``), but they were decided when the LogSet was made."""
    stored = mapping_at(old, "spec", "initialConfig")
    written = mapping_at(cluster, "spec", "logService", "initialConfig")
    kept = {k: copy.deepcopy(v) for k, v in stored.items() if k not in written}
    if kept:
        log_spec["initialConfig"] = {**(log_spec.get("initialConfig") or {}), **kept}
    return log_spec


def _ref(name: str, namespace: str) -> Obj:
    return {"metadata": {"name": name, "namespace": namespace}}


def _child(
    cluster: Mapping[str, Any],
    kind: str,
    name: str,
    spec: Obj,
    old: Mapping[str, Any] | None,
    deps: Obj | None = None,
) -> Obj:
    meta = cluster["metadata"]
    obj: Obj = {
        "apiVersion": cluster["apiVersion"],
        "kind": kind,
        "metadata": {
            "name": name,
            "namespace": meta.get("namespace") or "",
            "labels": labels.cluster_labels(meta["name"]),
            "ownerReferences": [owner_reference(cluster)],
        },
        "spec": spec,
    }
    if deps is not None:
        obj["deps"] = deps
    return DEFAULTED.default(kind, obj, old)


class Defaulted:
    """Children as the defaulting webhook would store them, remembered.

    Defaulting parses the child, and the stored child it updates, against the
    schema: the larger part of a cluster's reconcile, which runs on every change
    of any child's status although the children it renders rarely change. The
    result is a function of the child and of the stored child's spec (its
    create-only defaults), which a stored object's ``uid`` and ``generation``
    name; a stored child without them is defaulted afresh. Only the children of the
    clusters reconciled last are kept (``size``): a cache of every child would cost
    the operator's memory what it saves in CPU."""

    def __init__(self, size: int = 512) -> None:
        self.size = size
        self._found: OrderedDict[tuple[str, bytes, tuple[str, int] | None], Obj] = OrderedDict()

    def default(self, kind: str, obj: Obj, old: Mapping[str, Any] | None) -> Obj:
        """``default(kind, obj, old=old)``, as a copy the caller may change."""
        stored_as: tuple[str, int] | None = None
        if old is not None:
            meta = meta_of(old)
            if not meta.uid or not meta.generation:
                fresh: Obj = default(kind, obj, old=old)
                return fresh
            stored_as = (meta.uid, meta.generation)
        text = json.dumps(obj, sort_keys=True, separators=(",", ":"), default=as_json)
        key = (kind, hashlib.sha256(text.encode()).digest(), stored_as)
        found = self._found.get(key)
        if found is None:
            found = self._found[key] = default(kind, obj, old=old)
            while len(self._found) > self.size:
                self._found.popitem(last=False)
        else:
            self._found.move_to_end(key)
        return copy.deepcopy(found)


DEFAULTED = Defaulted()
"""The operator's: one process, one cluster controller."""


def cn_groups(spec: MatrixOneClusterSpec) -> list[tuple[str, PodSet]]:
    """``(group name, CNSet spec)`` of every CN group, the deprecated tp/ap first."""
    groups: list[tuple[str, PodSet]] = [(g, group) for g in ("tp", "ap") if (group := getattr(spec, g))]
    groups.extend((group.name, group) for group in spec.cn_groups or ())
    return groups


def desired_children(
    cluster: Mapping[str, Any],
    spec: MatrixOneClusterSpec,
    stored: Mapping[tuple[str, str], Mapping[str, Any]],
) -> list[Child]:
    """Every child of ``cluster`` (its admitted ``spec``), in dependency order: log, TN, CNs,
    proxy, web console.

    ``stored`` holds the children as cached, by (kind, name), for the create-only
    defaults (those already stored keep their values)."""
    meta = cluster["metadata"]
    restart_at = restart_stamp(cluster)
    namespace, mo = meta.get("namespace") or "", meta["name"]
    base = names.cluster_child_name(mo)
    logset_ref = {"logSet": _ref(base, namespace)}
    log_spec = _keep_initial_config(
        _inherit(spec.log_service, spec, restart_at), cluster, stored.get(("LogSet", base))
    )
    if spec.restore_from:
        log_spec = restored_log_spec(log_spec)
    children = [
        Child(ROLE_LOG, r.LOGSETS, _child(cluster, "LogSet", base, log_spec, stored.get(("LogSet", base))))
    ]
    tn = spec.tn or spec.dn
    if tn:
        children.append(
            Child(
                ROLE_TN,
                r.DNSETS,
                _child(
                    cluster,
                    "DNSet",
                    base,
                    _inherit(tn, spec, restart_at),
                    stored.get(("DNSet", base)),
                    dict(logset_ref),
                ),
            )
        )
    password = {
        "name": layout.ENV_DEFAULT_PASSWORD,
        "valueFrom": {"secretKeyRef": {"name": names.credential_secret_name(mo), "key": "password"}},
    }
    for group, group_spec in cn_groups(spec):
        cn_spec = _inherit(group_spec, spec, restart_at)
        cn_spec.pop("name", None)
        overlay = dict(cn_spec.get("overlay") or {})
        env = [e for e in overlay.get("env") or () if e.get("name") != layout.ENV_DEFAULT_PASSWORD]
        overlay["env"] = [*env, password]
        cn_spec["overlay"] = overlay
        if spec.proxy:
            cn_spec["config"] = cn_config.with_proxy_frontend(group_spec.config)
        name = names.cn_group_cnset_name(mo, group)
        deps = {**logset_ref, "dnSet": _ref(base, namespace)} if tn else dict(logset_ref)
        children.append(
            Child(
                ROLE_CN, r.CNSETS, _child(cluster, "CNSet", name, cn_spec, stored.get(("CNSet", name)), deps)
            )
        )
    if spec.proxy:
        children.append(
            Child(
                ROLE_PROXY,
                r.PROXYSETS,
                _child(
                    cluster,
                    "ProxySet",
                    base,
                    _inherit(spec.proxy, spec, restart_at),
                    stored.get(("ProxySet", base)),
                    dict(logset_ref),
                ),
            )
        )
    if spec.webui:
        webui = _child(
            cluster, "WebUI", base, _inherit(spec.webui, spec, restart_at), stored.get(("WebUI", base))
        )
        children.append(Child(ROLE_WEBUI, r.WEBUIS, webui))
    return children


@dataclass(frozen=True)
class Rendering:
    """A cluster's children (``desired_children``) and each one's desired object stamped
    with its applied hash, by label."""

    children: tuple[Child, ...]
    wants: Mapping[str, Obj]


class Renderings:
    """Each cluster's rendering, remembered while nothing it is made of changed.

    A cluster reconciles on every status change of any child, and its children change
    far more seldom: rendering, defaulting and hashing them was the larger part of its
    decision. A rendering is a function of the cluster's admitted spec (``admit``
    answers with the same model while the spec is unchanged), its identity and restart
    stamp, and the stored children's specs (their ``uid`` and ``generation``); a
    cluster or stored child without them renders afresh. Renderings are shared: no
    caller changes one. One per cluster, for the clusters reconciled last (``size``)."""

    def __init__(self, size: int = 128) -> None:
        self.size = size
        self._found: OrderedDict[str, tuple[MatrixOneClusterSpec, tuple[Any, ...], Rendering]] = OrderedDict()

    def of(
        self,
        cluster: Mapping[str, Any],
        spec: MatrixOneClusterSpec,
        stored: Mapping[tuple[str, str], Mapping[str, Any]],
    ) -> Rendering:
        uid = meta_of(cluster).uid
        facts = self._facts(cluster, spec, stored)
        if not uid or facts is None:
            return self._render(cluster, spec, stored)
        found = self._found.get(uid)
        if found is not None and found[0] is spec and found[1] == facts:
            self._found.move_to_end(uid)
            return found[2]
        rendering = self._render(cluster, spec, stored)
        self._found[uid] = (spec, facts, rendering)
        self._found.move_to_end(uid)
        while len(self._found) > self.size:
            self._found.popitem(last=False)
        return rendering

    @staticmethod
    def _render(
        cluster: Mapping[str, Any],
        spec: MatrixOneClusterSpec,
        stored: Mapping[tuple[str, str], Mapping[str, Any]],
    ) -> Rendering:
        children = tuple(desired_children(cluster, spec, stored))
        return Rendering(children, {child.label: stamped(child.obj) for child in children})

    @staticmethod
    def _facts(
        cluster: Mapping[str, Any],
        spec: MatrixOneClusterSpec,
        stored: Mapping[tuple[str, str], Mapping[str, Any]],
    ) -> tuple[Any, ...] | None:
        """What a rendering reads besides the spec: the cluster's name, kind and restart
        stamp, each stored child's uid and generation (None: a child to render afresh)."""
        meta = meta_of(cluster)
        children: list[tuple[str, str, str, int] | tuple[str, str]] = []
        for resource, name in child_keys(meta.name, spec):
            old = stored.get((resource.kind, name))
            if old is None:
                children.append((resource.kind, name))
                continue
            old_meta = meta_of(old)
            if not old_meta.uid or not old_meta.generation:
                return None
            children.append((resource.kind, name, old_meta.uid, old_meta.generation))
        head = (cluster.get("apiVersion"), meta.namespace, meta.name, restart_stamp(cluster))
        return (*head, tuple(children))


RENDERINGS = Renderings()
"""The operator's: one process, one cluster controller."""


def child_keys(cluster_name: str, spec: MatrixOneClusterSpec) -> list[tuple[Resource, str]]:
    """Where each child ``desired_children`` makes lives (its resource and name), known
    from the spec without making them: what a reconcile reads before it decides."""
    base = names.cluster_child_name(cluster_name)
    keys = [(r.LOGSETS, base)]
    if spec.tn or spec.dn:
        keys.append((r.DNSETS, base))
    keys.extend((r.CNSETS, names.cn_group_cnset_name(cluster_name, group)) for group, _ in cn_groups(spec))
    if spec.proxy:
        keys.append((r.PROXYSETS, base))
    if spec.webui:
        keys.append((r.WEBUIS, base))
    return keys


NON_ROLLING: Mapping[str, frozenset[str]] = {
    "LogSet": frozenset(
        {"replicas", "storeFailureTimeout", "failedPodStrategy", "pvcRetentionPolicy", "podDisruptionBudget"}
    ),
    "DNSet": frozenset({"replicas", "podDisruptionBudget"}),
    "CNSet": frozenset(
        {
            "replicas",
            "cnLabels",
            "serviceType",
            "serviceAnnotations",
            "nodePort",
            "updateStrategy",
            "terminationPolicy",
            "podsToDelete",
            "pauseUpdate",
            "reusePVC",
            "podDisruptionBudget",
        }
    ),
    "ProxySet": frozenset(
        {
            "replicas",
            "serviceType",
            "serviceAnnotations",
            "nodePort",
            "minReadySeconds",
            "podDisruptionBudget",
        }
    ),
    "WebUI": frozenset({"replicas", "serviceType"}),
}
"""Spec fields whose change does not touch the pods: they apply at once, even while an
earlier component of the cluster is still rolling."""


def held(desired: Mapping[str, Any], stored: Mapping[str, Any]) -> Obj:
    """``desired`` with every field that would roll pods kept as ``stored`` has it,
    for a child whose turn to roll has not come."""
    keep = NON_ROLLING.get(str(desired["kind"]), frozenset())
    spec: Obj = thaw(dict(spec_of(stored)))
    wanted = spec_of(desired)
    for key in keep:
        if key in wanted:
            spec[key] = copy.deepcopy(wanted[key])
        else:
            spec.pop(key, None)
    return {**desired, "spec": spec}


def with_finalizer(desired: Mapping[str, Any], cached: Mapping[str, Any] | None) -> Obj:
    """``desired`` as applied, carrying the finalizer of the child's own controller
    when the child is made, and for as long as the stored child carries it.

    The child is then born with its finalizer, and its controller does not patch it
    on in a write of its own. The finalizer is left out of the comparison with the
    stored child (the applied hash and the subset check): it is the child
    controller's, added by it to a child made before, and removed by it when it
    finalizes; applying it again once that removal landed would be adding a
    finalizer to an object being deleted, which the API server refuses, and
    dropping it from an apply that carried it would remove it."""
    finalizer = labels.finalizer(str(desired["kind"]).lower())
    if cached is not None and finalizer not in meta_of(cached).finalizers:
        return dict(desired)
    meta = dict(desired.get("metadata") or {})
    meta["finalizers"] = [finalizer]
    return {**desired, "metadata": meta}
