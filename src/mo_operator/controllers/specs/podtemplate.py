"""The pod template of a MatrixOne set: the main container the operator
builds from a ``PodSet`` spec, then the user's ``overlay`` over it.

Every set (log, TN, CN, proxy) runs the same shape of pod: one ``main``
container running the rendered ``start.sh`` from the set's immutable
ConfigMap, the downward-API environment the script derives its identity
from, object-storage credentials by Secret reference (never by value), and
the version annotations. The overlay rules follow upstream's
``OverlayPodMeta``/``OverlayPodSpec``/``OverlayMainContainer`` so that
manifests written for it build the same pods; we also apply
``startupProbe``, which upstream validates and then forgets.

The template is written the way the API server stores it (canonical
quantities, no empty lists), so comparing it with the cached workload
settles (see ``desired.py``).
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic.alias_generators import to_snake

from mo_operator.api.common import (
    POD_OVERLAY_FIELDS,
    MainContainerOverlay,
    Overlay,
    PodSet,
    SharedStorageProvider,
)
from mo_operator.api.k8s import ResourceRequirements
from mo_operator.kube.meta.objects import annotations_of
from mo_operator.kube.meta.quantity import canonical_quantity, quantity_value
from mo_operator.matrixone import labels, layout, ports
from mo_operator.matrixone.component import Component
from mo_operator.matrixone.version import LATEST_OPERATOR_VERSION, operator_version, version_annotations

from .prometheus import discovered_by_pod, scrape_annotations

Obj = dict[str, Any]

TERMINATION_GRACE_SECONDS = 30
_NO_OVERLAY = Overlay()
_SUFFIXED = frozenset({Component.LOG, Component.TN, Component.CN})
"""Components whose pods carry upstream's config-suffix annotation (not the proxy's)."""


@dataclass
class PodTemplateInput:
    """What a set contributes to its pod template besides the PodSet spec."""

    component: Component
    set_name: str
    namespace: str
    spec: PodSet
    image: str
    config_map: str
    """Name of the immutable ConfigMap the pods run (the pod spec names the exact config)."""
    selector_labels: Mapping[str, str]
    shared_storage: SharedStorageProvider | None = None
    extra_labels: Mapping[str, str] = field(default_factory=dict)
    extra_env: Sequence[Obj] = ()
    extra_volumes: Sequence[Obj] = ()
    extra_mounts: Sequence[Obj] = ()
    readiness_gates: Sequence[str] = ()
    headless_service: str | None = None
    image_pull_policy: str | None = None
    restart_at: str | None = None
    """The set's ``matrixorigin.io/restart-at`` annotation: a new value rolls every pod."""


def restart_stamp(obj: Mapping[str, Any]) -> str | None:
    """The object's ``matrixorigin.io/restart-at`` annotation, if any."""
    value = annotations_of(obj).get(labels.RESTART_AT)
    return str(value) if value else None


def canonical_resources(resources: ResourceRequirements | None) -> Obj:
    """``resources`` with every quantity as the API server prints it."""
    out: Obj = {}
    if resources is None:
        return out
    for part, values in (("limits", resources.limits), ("requests", resources.requests)):
        if values:
            out[part] = {k: canonical_quantity(str(v)) for k, v in values.items()}
    return out


def canonical_size(size: int | str) -> str:
    """A volume's size as the API server prints it."""
    return canonical_quantity(str(size))


def _field_env(name: str, path: str) -> Obj:
    return {"name": name, "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": path}}}


def _gomemlimit(spec: PodSet) -> Obj | None:
    percent = spec.memory_limit_percent
    limit = ((spec.resources and spec.resources.limits) or {}).get("memory")
    if not percent or not limit:
        return None
    return {"name": layout.ENV_GOMEMLIMIT, "value": str(quantity_value(str(limit)) * int(percent) // 100)}


def _storage_env(shared_storage: SharedStorageProvider | None) -> list[Obj]:
    s3 = shared_storage.s3 if shared_storage is not None else None
    env: list[Obj] = []
    if s3 is None:
        return env
    secret = s3.secret_ref.name if s3.secret_ref is not None else None
    if secret:
        for key in (layout.ENV_AWS_ACCESS_KEY_ID, layout.ENV_AWS_SECRET_ACCESS_KEY):
            env.append({"name": key, "valueFrom": {"secretKeyRef": {"name": secret, "key": key}}})
    env.append({"name": layout.ENV_AWS_REGION, "value": s3.region or layout.DEFAULT_AWS_REGION})
    return env


def _certificate_secret(shared_storage: SharedStorageProvider | None) -> str | None:
    """The Secret of the object storage's CA certificates, if it names one."""
    s3 = shared_storage.s3 if shared_storage is not None else None
    cert = s3.certificate_ref if s3 is not None else None
    return cert.name if cert is not None and cert.name else None


def _upsert(items: Iterable[Mapping[str, Any]], updates: Iterable[Mapping[str, Any]]) -> list[Obj]:
    """Items by ``name``, updates replacing same-named ones in place, new ones appended."""
    out = [dict(i) for i in items]
    index = {i.get("name"): n for n, i in enumerate(out)}
    for u in updates:
        at = index.get(u.get("name"))
        if at is None:
            index[u.get("name")] = len(out)
            out.append(copy.deepcopy(dict(u)))
        else:
            out[at] = copy.deepcopy(dict(u))
    return out


def _main_container(inp: PodTemplateInput) -> Obj:
    spec = inp.spec
    env = [
        _field_env(layout.ENV_POD_NAME, "metadata.name"),
        _field_env(layout.ENV_NAMESPACE, "metadata.namespace"),
        _field_env(layout.ENV_POD_IP, "status.podIP"),
    ]
    if inp.headless_service:
        env.append({"name": layout.ENV_HEADLESS_SERVICE, "value": inp.headless_service})
    if spec.dns_based_identity and inp.component is not Component.LOG:
        # Never for log stores (as upstream): their UUIDs by ordinal are the HAKeeper's
        # bootstrap members and what a running log service knows them by, so a LogSet
        # migrated with this flag keeps its stores.
        env.append({"name": layout.ENV_HOSTNAME_UUID, "value": "y"})
    memlimit = _gomemlimit(spec)
    if memlimit is not None:
        env.append(memlimit)
    env += _storage_env(inp.shared_storage)
    env += [dict(e) for e in inp.extra_env]
    mounts: list[Obj] = [{"name": layout.CONFIG_VOLUME, "mountPath": layout.config_dir(inp.component)}]
    mounts += [dict(m) for m in inp.extra_mounts]
    if _certificate_secret(inp.shared_storage):
        mounts.append({"name": layout.S3_CERT_VOLUME, "mountPath": layout.S3_CERT_PATH, "readOnly": True})
    if spec.memory_fs_size:
        mounts.append({"name": layout.MEMORY_FS_VOLUME, "mountPath": layout.MEMORY_BIN_PATH})
        env.append({"name": layout.ENV_MO_BIN_PATH, "value": layout.MEMORY_BIN_PATH})
    container: Obj = {
        "name": layout.MAIN_CONTAINER,
        "image": inp.image,
        "command": layout.entrypoint_command(inp.component),
        "env": env,
        "volumeMounts": mounts,
        # MatrixOne writes no termination-message file; when it exits on a bad
        # config it panics to its log, which the kubelet then reports in
        # lastState.terminated.message (and so do our stalled-roll conditions).
        "terminationMessagePolicy": "FallbackToLogsOnError",
    }
    if spec.service_args:
        container["args"] = list(spec.service_args)
    resources = canonical_resources(spec.resources)
    if resources:
        container["resources"] = resources
    if inp.image_pull_policy:
        container["imagePullPolicy"] = inp.image_pull_policy
    if inp.component is Component.PROXY:
        container["readinessProbe"] = {
            "tcpSocket": {"port": ports.PROXY_SQL},
            "periodSeconds": 5,
            "failureThreshold": 2,
        }
    return container


_MAIN_OVERLAY_FIELDS = {
    field.alias or name: name for name, field in MainContainerOverlay.model_fields.items()
}
"""The JSON name of each main-container overlay field, to its attribute."""


def overlay_container(container: Obj, overlay: Mapping[str, Any]) -> None:
    """``overlay_main`` of an overlay given as JSON (a backup or restore job's): its
    main-container fields, taken as they are (the job's own admission validated them)."""
    fields = {
        attr: overlay[key] for key, attr in _MAIN_OVERLAY_FIELDS.items() if overlay.get(key) is not None
    }
    overlay_main(container, MainContainerOverlay.model_construct(**fields))


def overlay_main(container: Obj, overlay: MainContainerOverlay | None) -> None:
    """Apply a container overlay (upstream's ``OverlayMainContainer``): to the main
    container, and to the python-udf sidecar with its own overlay."""
    if overlay is None:
        return
    for key, value in (("command", overlay.command), ("args", overlay.args), ("envFrom", overlay.env_from)):
        if value:
            container[key] = copy.deepcopy(list(value))
    if overlay.env:
        container["env"] = _upsert(container.get("env") or [], overlay.env)
    if overlay.volume_mounts:
        container["volumeMounts"] = _upsert(container.get("volumeMounts") or [], overlay.volume_mounts)
    if overlay.image_pull_policy:
        container["imagePullPolicy"] = overlay.image_pull_policy
    probes = (
        ("livenessProbe", overlay.liveness_probe),
        ("readinessProbe", overlay.readiness_probe),
        ("startupProbe", overlay.startup_probe),
        ("lifecycle", overlay.lifecycle),
    )
    for key, part in probes:
        if part:
            container[key] = copy.deepcopy(dict(part))
    if overlay.main_container_security_context:
        container["securityContext"] = copy.deepcopy(dict(overlay.main_container_security_context))


def _volumes(inp: PodTemplateInput) -> list[Obj]:
    volumes: list[Obj] = [{"name": layout.CONFIG_VOLUME, "configMap": {"name": inp.config_map}}]
    volumes += [dict(v) for v in inp.extra_volumes]
    cert = _certificate_secret(inp.shared_storage)
    if cert:
        volumes.append({"name": layout.S3_CERT_VOLUME, "secret": {"secretName": cert}})
    if inp.spec.memory_fs_size:
        size = canonical_quantity(str(inp.spec.memory_fs_size))
        volumes.append({"name": layout.MEMORY_FS_VOLUME, "emptyDir": {"medium": "Memory", "sizeLimit": size}})
    return volumes


def _spread(keys: Sequence[str], selector: Mapping[str, str]) -> list[Obj]:
    return [
        {
            "maxSkew": 1,
            "topologyKey": key,
            "whenUnsatisfiable": "DoNotSchedule",
            "labelSelector": {"matchLabels": dict(selector)},
        }
        for key in keys
    ]


_POD_OVERLAY_ATTRS = tuple((key, to_snake(key)) for key in POD_OVERLAY_FIELDS)


def overlay_pod(pod_spec: Obj, overlay: Overlay) -> None:
    """Copy the overlay's pod fields into ``pod_spec``, as given (every pod we build,
    the WebUI's included, takes the same ones)."""
    for key, attr in _POD_OVERLAY_ATTRS:
        value = getattr(overlay, attr)
        if value is not None and value != []:
            pod_spec[key] = copy.deepcopy(value)


def pod_labels(inp: PodTemplateInput) -> dict[str, str]:
    """The pod's labels: the overlay's, then ours (ours win: the selector depends on them)."""
    overlay = inp.spec.overlay
    own = overlay.pod_labels if overlay is not None else None
    return {**(own or {}), **inp.extra_labels, **inp.selector_labels}


def config_suffix(inp: PodTemplateInput) -> dict[str, str]:
    """Upstream's ``matrixorigin.io/config-suffix`` annotation, on log, TN and CN pods of
    operatorVersion 1.3.0 and later (as upstream gates it): which config the pod runs,
    changing exactly when the config does. Upstream's value (7 hex digits of xxhash64 of
    the TOML) names a key of one shared ConfigMap; ours is the content hash our
    ConfigMap's name ends with, since each config is a ConfigMap of its own."""
    if inp.component not in _SUFFIXED or operator_version(inp.spec) < LATEST_OPERATOR_VERSION:
        return {}
    return {labels.CONFIG_SUFFIX: inp.config_map.rsplit("-", 1)[-1]}


def pod_template(inp: PodTemplateInput) -> Obj:
    """The pod template (metadata and spec) of a set."""
    spec = inp.spec
    overlay = spec.overlay or _NO_OVERLAY
    main = _main_container(inp)
    overlay_main(main, overlay)
    containers = [main]
    if overlay.sidecar_containers:
        containers += [copy.deepcopy(dict(c)) for c in overlay.sidecar_containers]
    pod_spec: Obj = {
        "containers": containers,
        "volumes": _upsert(_volumes(inp), overlay.volumes or []),
        "terminationGracePeriodSeconds": TERMINATION_GRACE_SECONDS,
    }
    if spec.node_selector:
        pod_spec["nodeSelector"] = dict(spec.node_selector)
    if spec.topology_spread:
        pod_spec["topologySpreadConstraints"] = _spread(spec.topology_spread, inp.selector_labels)
    if inp.readiness_gates:
        pod_spec["readinessGates"] = [{"conditionType": g} for g in inp.readiness_gates]
    overlay_pod(pod_spec, overlay)
    annotations = {
        **(overlay.pod_annotations or {}),
        **version_annotations(spec),
        **config_suffix(inp),
    }
    if inp.restart_at:
        annotations[labels.RESTART_AT] = inp.restart_at
    if discovered_by_pod(spec):
        annotations.update(scrape_annotations())
    metadata: Obj = {"labels": pod_labels(inp)}
    if annotations:
        metadata["annotations"] = annotations
    return {"metadata": metadata, "spec": pod_spec}
