"""Defaulting: what the API server's schema defaults and upstream's mutating webhooks
fill into an object (``pkg/webhook/*_webhook.go``, ``utils.go``).

Every rule only fills what is absent, so defaulting a defaulted object changes
nothing. Two upstream rules are deliberately not copied:

* images are not filled from ``spec.version``: a stored image would pin the
  component, and a later change of ``version`` would no longer upgrade it. The
  controller derives ``<imageRepository>:<version>`` each time instead.
* a TN's memory cache is defaulted only when its memory request is non-zero, as
  upstream does for CNs; upstream sets a zero-size cache for a TN without a request.

And one upstream default is changed: a LogSet that sets neither ``pvcRetentionPolicy``
nor ``s3RetentionPolicy`` gets ``Retain`` for both (upstream: ``Delete``), so the log
service's volumes and the object-storage data survive the deletion of a cluster unless
its manifest asks otherwise. If only one is set, the other still copies it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Final

from pydantic import ValidationError

from mo_operator.kube.meta.quantity import Quantity, format_quantity, quantity_value

from .base import parse
from .kinds import kind_info
from .normalize import kind_schema, prune_nulls, too_deep_at

__all__ = [
    "DEFAULT_GODEBUG",
    "DEFAULT_RETENTION_POLICY",
    "DEFAULT_STORE_DRAIN_TIMEOUT",
    "DEFAULT_STORE_FAILURE_TIMEOUT",
    "LATEST_OPERATOR_VERSION",
    "default",
]

Obj = dict[str, Any]

LATEST_OPERATOR_VERSION: Final = "1.3.0"
"""``spec.operatorVersion`` a new MatrixOneCluster gets (in-place config map updates)."""
DEFAULT_GODEBUG: Final = "madvdontneed=1,gctrace=2"
DEFAULT_STORE_FAILURE_TIMEOUT: Final = "10m0s"
"""Written as Go prints ``metav1.Duration`` (``10m0s``), so objects read the same as upstream's."""
DEFAULT_STORE_DRAIN_TIMEOUT: Final = "5m0s"
DEFAULT_RETENTION_POLICY: Final = "Retain"
"""``pvcRetentionPolicy`` and ``s3RetentionPolicy`` of a LogSet that sets neither (upstream: Delete)."""
_HA_REPLICAS: Final = 3


@dataclass(frozen=True)
class _Context:
    creating: bool
    default_args: Mapping[str, Sequence[str]] = field(default_factory=dict)


def _schema_defaults(obj: Any, schema: Mapping[str, Any] | None) -> None:
    """Fill the schema's ``default`` values into objects that exist (never creating the parent)."""
    if schema is None:
        return
    if isinstance(obj, dict):
        props = schema.get("properties", {})
        for name, prop in props.items():
            if name not in obj and "default" in prop:
                obj[name] = prop["default"]
        extra = schema.get("additionalProperties")
        for name, value in obj.items():
            _schema_defaults(value, props.get(name, extra if isinstance(extra, dict) else None))
    elif isinstance(obj, list):
        for item in obj:
            _schema_defaults(item, schema.get("items"))


def _service_args(spec: Obj, component: str, ctx: _Context) -> None:
    """An empty ``serviceArgs`` gets the operator's configured default args of the component."""
    args = ctx.default_args.get(component)
    if not spec.get("serviceArgs") and args:
        spec["serviceArgs"] = list(args)


def _podset(spec: Obj) -> None:
    env = spec.setdefault("overlay", {}).setdefault("env", [])
    if not any(e.get("name") == "GODEBUG" for e in env):
        env.append({"name": "GODEBUG", "value": DEFAULT_GODEBUG})
    if spec.get("exportToPrometheus") is True:
        spec.setdefault("promDiscoveryScheme", "Service")


def _scaled(size: int | str, numerator: int, denominator: int) -> str:
    """``size * numerator / denominator`` as Go computes it on ``Quantity.Value()``, in the size's format."""
    q = Quantity.parse(str(size))
    return format_quantity(Decimal(quantity_value(q) * numerator // denominator), q.format)


def _caches(spec: Obj) -> None:
    cache = spec.get("sharedStorageCache", {})
    memory = ((spec.get("resources") or {}).get("requests") or {}).get("memory")
    if memory is not None and quantity_value(str(memory)) != 0:
        cache.setdefault("memoryCacheSize", _scaled(memory, 1, 2))
    if "cacheVolume" in spec:
        cache.setdefault("diskCacheSize", _scaled(spec["cacheVolume"]["size"], 9, 10))
    if cache:
        spec["sharedStorageCache"] = cache


def _retention(spec: Obj) -> None:
    """PVC and S3 retention inherit from each other (upstream's rule); Retain when neither
    is set (upstream: Delete), so that deleting a cluster never deletes data nobody asked
    to delete."""
    s3 = spec["sharedStorage"].get("s3")
    if s3 is None:
        spec.setdefault("pvcRetentionPolicy", DEFAULT_RETENTION_POLICY)
        return
    policy = spec.get("pvcRetentionPolicy") or s3.get("s3RetentionPolicy") or DEFAULT_RETENTION_POLICY
    spec.setdefault("pvcRetentionPolicy", policy)
    s3.setdefault("s3RetentionPolicy", policy)


def _logset_spec(spec: Obj, ctx: _Context) -> None:
    initial = spec.setdefault("initialConfig", {})
    initial.setdefault("logShardReplicas", _HA_REPLICAS if spec["replicas"] >= _HA_REPLICAS else 1)
    initial.setdefault("logShards", 1)
    initial.setdefault("dnShards", 1)
    spec.setdefault("storeFailureTimeout", DEFAULT_STORE_FAILURE_TIMEOUT)
    _retention(spec)
    _service_args(spec, "logService", ctx)
    _podset(spec)


def _dnset_spec(spec: Obj, ctx: _Context) -> None:
    _caches(spec)
    _service_args(spec, "dn", ctx)
    _podset(spec)


def _cnset_spec(spec: Obj, ctx: _Context) -> None:
    spec.setdefault("serviceType", "ClusterIP")
    _caches(spec)
    scaling = spec.get("scalingConfig", {})
    if scaling.get("storeDrainEnabled") is True:
        scaling.setdefault("storeDrainTimeout", DEFAULT_STORE_DRAIN_TIMEOUT)
    strategy = spec.setdefault("updateStrategy", {})
    strategy.setdefault("maxSurge", 1)
    strategy.setdefault("maxUnavailable", 0)
    _service_args(spec, "cn", ctx)
    _podset(spec)


def _logset(obj: Obj, ctx: _Context) -> None:
    _logset_spec(obj["spec"], ctx)


def _dnset(obj: Obj, ctx: _Context) -> None:
    _dnset_spec(obj["spec"], ctx)


def _cnset(obj: Obj, ctx: _Context) -> None:
    _cnset_spec(obj["spec"], ctx)
    obj["spec"].setdefault("role", "TP")


def _proxyset(obj: Obj, ctx: _Context) -> None:
    _service_args(obj["spec"], "proxy", ctx)


def _cluster(obj: Obj, ctx: _Context) -> None:
    spec = obj["spec"]
    _logset_spec(spec["logService"], ctx)
    for name in ("dn", "tn"):
        if name in spec:
            _dnset_spec(spec[name], ctx)
    for name in ("tp", "ap"):
        if name in spec:
            _cnset_spec(spec[name], ctx)
    for group in spec.get("cnGroups", []):
        _cnset_spec(group, ctx)
    if ctx.creating:
        spec.setdefault("operatorVersion", LATEST_OPERATOR_VERSION)


_DEFAULTERS: Mapping[str, Callable[[Obj, _Context], None]] = {
    "MatrixOneCluster": _cluster,
    "LogSet": _logset,
    "DNSet": _dnset,
    "TNSet": _dnset,
    "CNSet": _cnset,
    "ProxySet": _proxyset,
}


def _inherit(new_spec: Obj, old_spec: Obj) -> None:
    """Fields an update may leave out and keep: those set once on create."""
    if "operatorVersion" in old_spec:
        new_spec.setdefault("operatorVersion", old_spec["operatorVersion"])


def _inherit_initial_config(new_spec: Obj, old_spec: Obj) -> None:
    """An immutable ``initialConfig`` left out keeps its stored values (its defaults depend
    on ``replicas``, which may have changed since)."""
    stored = old_spec.get("initialConfig") or {}
    if stored:
        initial = new_spec.setdefault("initialConfig", {})
        for name, value in stored.items():
            initial.setdefault(name, value)


def _from_stored(kind: str, new: Obj, old: Obj) -> None:
    if not isinstance(new.get("spec"), dict) or not isinstance(old.get("spec"), dict):
        return
    _inherit(new["spec"], old["spec"])
    if kind == "LogSet":
        _inherit_initial_config(new["spec"], old["spec"])
    elif kind == "MatrixOneCluster":
        _inherit_initial_config(new["spec"]["logService"], old["spec"]["logService"])


def _defaulted(kind: str, obj: Any, ctx: _Context, stored: Obj | None) -> tuple[Any, bool]:
    """The defaulted object, and whether it was valid enough to default."""
    info = kind_info(kind)
    if info is None or not isinstance(obj, Mapping) or too_deep_at(obj) is not None:
        return obj, False
    schema = kind_schema(info.model)
    out = prune_nulls(obj, schema)
    try:
        parse(info.model, out)
    except ValidationError:
        return out, False
    _schema_defaults(out, schema)
    if stored is not None:
        _from_stored(kind, out, stored)
    defaulter = _DEFAULTERS.get(kind)
    if defaulter is not None:
        defaulter(out, ctx)
    return out, True


def default(
    kind: str,
    obj: Any,
    *,
    old: Any = None,
    default_args: Mapping[str, Sequence[str]] | None = None,
) -> Any:
    """The object as it is stored after schema defaults and defaulting webhooks.

    ``old`` is the stored object when ``obj`` updates it (None on create). On create a
    MatrixOneCluster gets the newest ``operatorVersion``; on update, an
    ``operatorVersion`` or ``initialConfig`` value that ``obj`` leaves out keeps its
    stored value (server-side apply of the original manifest drops what the webhook
    added). ``default_args`` are the operator's default ``serviceArgs`` by component
    (``logService``, ``dn``, ``cn``, ``proxy``), from its config.

    Never raises and never mutates its arguments: an object that does not match its
    schema comes back as the API server would see it (null fields dropped) but
    otherwise untouched, for validation to reject.
    """
    args = default_args or {}
    stored: Obj | None = None
    if old is not None:
        stored_obj, valid = _defaulted(kind, old, _Context(creating=False, default_args=args), None)
        stored = stored_obj if valid else None
    out, _ = _defaulted(kind, obj, _Context(creating=old is None, default_args=args), stored)
    return out
