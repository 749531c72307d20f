"""What the Go operator writes for one set: its config ConfigMap and its pod template.

Built from the set objects as they stand (spec and the LogSet's status), following the
Go operator's source (matrixone-operator ``pkg/controllers/...``; each fact names its
file), not our own renderer or pod template, so that a takeover test compares our
operator's output with what upstream left rather than with itself. Only what a
cluster of ``operatorVersion`` 1.3.0 (the version upstream's MatrixOneCluster webhook
sets on create) on MatrixOne 2.x writes is covered: one ConfigMap per set holding
``start.sh`` and ``<toml>-<suffix>``, pods told the suffix by the
``matrixorigin.io/config-suffix`` annotation. The TOML's text is written by our TOML
writer (upstream's is go-toml): the keys and values are upstream's, the layout of the
text is not, and nothing reads it as text.
"""

from __future__ import annotations

import copy
import json
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from xxhash import xxh64_intdigest as xxh64

from mo_operator.matrixone import labels, names
from mo_operator.matrixone.component import Component
from mo_operator.matrixone.config.tomlconfig import deep_merge, dumps, parse_user_config, set_in

Obj = dict[str, Any]
START_SCRIPTS = Path(__file__).parent / "data" / "upstream-start"
OPERATOR_VERSION = (
    "1.3.0"  # api/core/v1alpha1/operator_version.go (LatestOpVersion), set by the cluster webhook
)
IN_PLACE_UPDATE_READY = "InPlaceUpdateReady"  # kruise-api apps/pub (readiness gate of every set's pods)
KRUISE_POD_READY = "KruisePodReady"  # kruise-api apps/pub (CN readiness gate, cnset/resource.go)
CONFIG_SUFFIX_ENV = "CONFIG_SUFFIX"  # common/template.go ConfigSuffixEnvKey
DATA_PATH = "/var/lib/matrixone"  # common/template.go DataPath
CONFIG_PATH = {  # logset/sts.go configPath; common/configmap.go ConfigPath
    Component.LOG: "/etc/logservice",
    Component.TN: "/etc/matrixone/config",
    Component.CN: "/etc/matrixone/config",
    Component.PROXY: "/etc/matrixone/config",
}
CONFIG_FILE = {  # logset/configmap.go configFile; common/configmap.go ConfigFile
    Component.LOG: "logservice.toml",
    Component.TN: "config.toml",
    Component.CN: "config.toml",
    Component.PROXY: "config.toml",
}
_SCRIPT = {Component.LOG: "log.sh", Component.TN: "dn.sh", Component.CN: "cn.sh", Component.PROXY: "proxy.sh"}


def digest(text: str) -> str:
    """common/configmap.go DataDigest: the first 7 hex digits of xxhash64 (``%x``, unpadded)."""
    return f"{xxh64(text.encode()):x}"[:7]


def hash_finalizer(prefix: str, namespace: str, name: str) -> str:
    """utils/utils.go MakeHashFinalizer: ``<prefix>-<7 hex of xxhash64("<ns>:<name>")>``."""
    return f"{prefix}-{digest(f'{namespace}:{name}')}"


# ------------------------------------------------------------------------------ TOML
def _shared_fileservice(
    storage: Mapping[str, Any], cache: Mapping[str, Any] | None, name: str, sub: str
) -> Obj:
    """common/fileservice.go sharedFileServiceConfig."""
    fs: Obj = {"name": name}
    s3 = storage.get("s3")
    if isinstance(s3, Mapping):
        fs["backend"] = "MINIO" if s3.get("type") == "minio" else "S3"
        parts = str(s3.get("path") or "").strip("/").split("/", 1)
        prefix = f"{parts[1].strip('/')}/{sub}" if len(parts) > 1 else sub
        conf: Obj = {
            "endpoint": s3.get("endpoint") or "s3.us-west-2.amazonaws.com",
            "bucket": parts[0],
            "key-prefix": prefix,
        }
        files = (s3.get("certificateRef") or {}).get("files")
        if files:
            conf["cert-files"] = [f"/etc/s3-ssl/{f}" for f in files]
        fs["s3"] = conf
    file_system = storage.get("fileSystem")
    if isinstance(file_system, Mapping):
        fs["backend"] = "DISK-ETL" if name == "ETL" else "DISK"
        fs["data-dir"] = file_system.get("path")
    sizes: Obj = {}
    if cache is None:
        sizes["memory-capacity"] = "1B"
    else:
        if cache.get("memoryCacheSize") is not None:
            sizes["memory-capacity"] = f"{cache['memoryCacheSize']}B"
        if cache.get("diskCacheSize") is not None:
            sizes["disk-capacity"] = f"{cache['diskCacheSize']}B"
            sizes["disk-path"] = f"{DATA_PATH}/disk-cache"
    if sizes:
        fs["cache"] = sizes
    return fs


def _with_fileservices(
    spec: Mapping[str, Any], storage: Mapping[str, Any], cache: Mapping[str, Any] | None
) -> Obj:
    """The user's config with common/fileservice.go FileServiceConfig merged over it
    (TomlConfig.MergeDeep: the operator's entries win, named lists merge by name)."""
    local = f"{DATA_PATH}/data"
    defaults = {
        "data-dir": local,
        "fileservice": [
            {"name": "LOCAL", "backend": "DISK", "data-dir": local},
            _shared_fileservice(storage, cache, "S3", "data"),
            _shared_fileservice(storage, None, "ETL", "etl"),
        ],
    }
    return deep_merge(parse_user_config(spec.get("config")), defaults)


def upstream_toml(component: Component, obj: Mapping[str, Any], logset: Mapping[str, Any]) -> str:
    """The TOML the Go operator renders for set ``obj`` (MatrixOne ≥ 2.0: discovery address)."""
    spec, ls_spec = obj["spec"], logset["spec"]
    storage = ls_spec.get("sharedStorage") or {}
    discovery = (logset.get("status") or {}).get("discovery") or {}
    discovery_address = f"{discovery.get('address')}:{discovery.get('port')}"  # LogSetDiscovery.String()
    if component is Component.LOG:  # logset/configmap.go buildConfigMap
        name, namespace = obj["metadata"]["name"], obj["metadata"]["namespace"]
        doc = _with_fileservices(spec, storage, None)
        set_in(doc, ["service-type"], "LOG")
        set_in(doc, ["logservice", "deployment-id"], xxh64(name.encode()) >> 1)
        set_in(doc, ["logservice", "logservice-listen-address"], "0.0.0.0:32001")
        set_in(doc, ["hakeeper-client", "discovery-address"], f"{name}-log-discovery.{namespace}.svc:32001")
        if spec.get("replicas") == 1:
            set_in(doc, ["logservice", "gossip-allow-self-as-seed"], True)
    elif component is Component.TN:  # dnset/resource.go buildDNSetConfigMap
        alias = "tn" if "tn" in parse_user_config(spec.get("config")) else "dn"
        doc = _with_fileservices(spec, storage, spec.get("sharedStorageCache") or {})
        set_in(doc, ["hakeeper-client", "discovery-address"], discovery_address)
        set_in(doc, ["service-type"], "DN")
        set_in(doc, [alias, "listen-address"], "0.0.0.0:41010")
        set_in(doc, [alias, "lockservice", "listen-address"], "0.0.0.0:6003")
        set_in(doc, [alias, "LogtailServer", "listen-address"], "0.0.0.0:32003")
        set_in(doc, [alias, "port-base"], 41010)
    elif component is Component.CN:  # cnset/resource.go buildCNSetConfigMap
        doc = _with_fileservices(spec, storage, spec.get("sharedStorageCache") or {})
        set_in(doc, ["service-type"], "CN")
        set_in(doc, ["hakeeper-client", "discovery-address"], discovery_address)
        set_in(doc, ["cn", "role"], spec.get("role", ""))
        set_in(doc, ["cn", "lockservice", "listen-address"], "0.0.0.0:6003")
        set_in(doc, ["cn", "port-base"], 6002)
        if (spec.get("scalingConfig") or {}).get("storeDrainEnabled") is True:
            set_in(doc, ["cn", "init-work-state"], "Draining")
    else:  # proxyset/resource.go buildProxyConfigMap
        doc = parse_user_config(spec.get("config"))
        set_in(doc, ["hakeeper-client", "discovery-address"], discovery_address)
        doc = deep_merge(doc, _with_fileservices({}, storage, None))
        set_in(doc, ["service-type"], "PROXY")
        set_in(doc, ["proxy", "listen-address"], "0.0.0.0:6001")
    if spec.get("exportToPrometheus") is True:
        set_in(doc, ["observability", "enableMetricToProm"], True)
    return dumps(doc)


def start_script(component: Component) -> str:
    """start.sh as upstream renders it for operatorVersion 1.3.0 (data/upstream-start/README.md)."""
    return (START_SCRIPTS / _SCRIPT[component]).read_text()


def config_map(component: Component, obj: Mapping[str, Any], logset: Mapping[str, Any]) -> tuple[Obj, str]:
    """``<set>-<c>-config`` with ``start.sh`` and ``<toml>-<suffix>`` (common/configmap.go
    ensureConfigMap, gate InplaceConfigmapUpdate), owned by the set; and the suffix."""
    meta = obj["metadata"]
    text = upstream_toml(component, obj, logset)
    suffix = digest(text)
    ref = {
        "apiVersion": obj["apiVersion"],
        "kind": obj["kind"],
        "name": meta["name"],
        "uid": meta["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }
    cm = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": names.config_map_base_name(component, meta["name"]),  # <set>-<c>-config in every *set
            "namespace": meta["namespace"],
            "labels": labels.sub_resource_labels(component, meta["name"], meta["namespace"]),
            "ownerReferences": [ref],  # recon CreateOwned
        },
        "data": {"start.sh": start_script(component), f"{CONFIG_FILE[component]}-{suffix}": text},
    }
    return cm, suffix


def parsed_toml(config_map: Mapping[str, Any], component: Component) -> Obj:
    """The TOML a ConfigMap holds under the component's file name, suffixed or not."""
    data = config_map.get("data") or {}
    plain = CONFIG_FILE[component]
    key = next(k for k in sorted(data) if k == plain or k.startswith(f"{plain}-"))
    return tomllib.loads(data[key])


# ------------------------------------------------------------------------ pod template
def _field_env(name: str, path: str) -> Obj:
    return {"name": name, "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": path}}}


def _env(component: Component, set_name: str, spec: Mapping[str, Any]) -> list[Obj]:
    """The main container's env, in upstream's order (logset/sts.go, dnset/resource.go,
    cnset/resource.go syncPodSpec; common/podset.go syncMainContainer for the proxy)."""
    pod_name = _field_env("POD_NAME", "metadata.name")
    namespace = _field_env("NAMESPACE", "metadata.namespace")
    pod_ip = _field_env("POD_IP", "status.podIP")
    headless = {"name": "HEADLESS_SERVICE_NAME", "value": names.headless_service_name(component, set_name)}
    suffix = _field_env(CONFIG_SUFFIX_ENV, f"metadata.annotations['{labels.CONFIG_SUFFIX}']")
    env = {
        Component.LOG: [pod_name, namespace, pod_ip, headless, suffix],
        Component.TN: [pod_name, namespace, headless, suffix],
        Component.CN: [pod_name, namespace, headless, pod_ip, suffix],
        Component.PROXY: [pod_name, namespace, suffix],
    }[component]
    if component is Component.TN and spec.get("dnsBasedIdentity"):
        env.append({"name": "HOSTNAME_UUID", "value": "y"})
    return env


def _storage_env(storage: Mapping[str, Any]) -> list[Obj]:
    """common/fileservice.go SetStorageProviderConfig: S3 credentials by reference, region."""
    s3 = storage.get("s3")
    if not isinstance(s3, Mapping):
        return []
    env: list[Obj] = []
    secret = (s3.get("secretRef") or {}).get("name")
    for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY") if secret else ():
        env.append({"name": key, "valueFrom": {"secretKeyRef": {"name": secret, "key": key}}})
    env.append({"name": "AWS_REGION", "value": s3.get("region") or "us-west-2"})
    return env


def _upsert(items: list[Obj], extra: list[Obj]) -> list[Obj]:
    """util.UpsertByKey by ``name``."""
    out = list(items)
    for item in extra:
        at = next((i for i, have in enumerate(out) if have.get("name") == item.get("name")), None)
        if at is None:
            out.append(copy.deepcopy(item))
        else:
            out[at] = copy.deepcopy(item)
    return out


def _mounts(component: Component, spec: Mapping[str, Any]) -> list[Obj]:
    config = {"name": "config", "readOnly": True, "mountPath": CONFIG_PATH[component]}
    if component is Component.LOG:  # logset/sts.go syncPodSpec
        return [
            {"name": "mo-data", "mountPath": DATA_PATH},
            {"name": "bootstrap", "readOnly": True, "mountPath": "/etc/bootstrap"},
            config,
            {"name": "gossip", "readOnly": True, "mountPath": "/etc/gossip"},
        ]
    if component in (Component.TN, Component.CN) and spec.get("cacheVolume"):  # dnset, cnset resource.go
        return [config, {"name": "mo-data", "mountPath": DATA_PATH}]
    return [config]


def _annotations(component: Component, spec: Mapping[str, Any], suffix: str) -> dict[str, str]:
    """common/podset.go SyncPodMeta, cnset/resource.go syncPodMeta, the config suffix."""
    out: dict[str, str] = {}
    image = str(spec.get("image") or "")
    version = spec.get("semanticVersion") or (image.rsplit(":", 1)[1] if ":" in image else "")
    if version:
        out[labels.SEMANTIC_VERSION] = str(version)
    out[labels.OPERATOR_VERSION] = OPERATOR_VERSION
    if component is Component.CN:
        out[labels.CN_LABEL] = json.dumps(spec.get("labels"), separators=(",", ":"))
        if spec.get("podManagementPolicy"):
            out["matrixorigin.io/pod-management-policy"] = str(spec["podManagementPolicy"])
    out[labels.CONFIG_SUFFIX] = suffix
    out.update((spec.get("overlay") or {}).get("podAnnotations") or {})  # Overlay.OverlayPodMeta
    return out


_POD_OVERLAY = (
    "tolerations",
    "affinity",
    "imagePullSecrets",
    "serviceAccountName",
    "securityContext",
    "priorityClassName",
    "terminationGracePeriodSeconds",
    "hostAliases",
    "runtimeClassName",
    "dnsConfig",
    "shareProcessNamespace",
    "initContainers",
)
"""api/core/v1alpha1/common_helpers.go OverlayPodSpec fields copied as they are."""


def pod_template(
    component: Component, obj: Mapping[str, Any], logset: Mapping[str, Any], config_map_name: str, suffix: str
) -> Obj:
    """The pod template of the set's Kruise workload."""
    meta, spec = obj["metadata"], obj["spec"]
    set_name, namespace = meta["name"], meta["namespace"]
    overlay = spec.get("overlay") or {}
    storage = (logset["spec"].get("sharedStorage")) or {}
    main: Obj = {
        "name": "main",  # api/core/v1alpha1 ContainerMain
        "image": spec["image"],
        "command": ["/bin/sh", f"{CONFIG_PATH[component]}/start.sh"],
        "env": _upsert(
            _upsert(_env(component, set_name, spec), overlay.get("env") or []), _storage_env(storage)
        ),
        "volumeMounts": _upsert(_mounts(component, spec), overlay.get("volumeMounts") or []),
    }
    if spec.get("serviceArgs"):
        main["args"] = list(spec["serviceArgs"])
    if spec.get("resources"):
        main["resources"] = copy.deepcopy(spec["resources"])
    if overlay.get("imagePullPolicy"):
        main["imagePullPolicy"] = overlay["imagePullPolicy"]
    if component is Component.PROXY:  # proxyset/resource.go syncMainContainer
        main["readinessProbe"] = {"tcpSocket": {"port": 6001}, "failureThreshold": 2, "periodSeconds": 5}
    volumes: list[Obj] = []
    if component is Component.LOG:  # logset/sts.go syncPodSpec
        volumes += [
            {"name": "bootstrap", "configMap": {"name": names.log_bootstrap_config_map_name(set_name)}},
            {"name": "gossip", "configMap": {"name": names.log_gossip_config_map_name(set_name)}},
        ]
    volumes.append(
        {"name": "config", "configMap": {"name": config_map_name}}
    )  # common/configmap.go SyncConfigMap
    gates = [IN_PLACE_UPDATE_READY]
    if component is Component.CN:  # cnset/resource.go syncPodSpec
        gates = [labels.CN_STORE_READINESS, KRUISE_POD_READY, IN_PLACE_UPDATE_READY]
    pod_spec: Obj = {
        "containers": [main],
        "volumes": _upsert(volumes, overlay.get("volumes") or []),
        "readinessGates": [{"conditionType": g} for g in gates],
    }
    if spec.get("nodeSelector"):
        pod_spec["nodeSelector"] = dict(spec["nodeSelector"])
    if component is Component.CN:  # cnset/resource.go buildCNSet: the headless Service names the pods
        pod_spec["subdomain"] = names.headless_service_name(component, set_name)
    for key in _POD_OVERLAY:
        if overlay.get(key) not in (None, []):
            pod_spec[key] = copy.deepcopy(overlay[key])
    pod_labels = labels.sub_resource_labels(
        component, set_name, namespace
    )  # common/template.go SubResourceLabels
    cluster = (meta.get("labels") or {}).get(labels.CLUSTER)
    if cluster:  # mocluster/controller.go setOverlay: every set's overlay.podLabels names its cluster
        pod_labels[labels.CLUSTER] = cluster
    pod_labels.update(overlay.get("podLabels") or {})  # Overlay.OverlayPodMeta
    return {
        "metadata": {"labels": pod_labels, "annotations": _annotations(component, spec, suffix)},
        "spec": pod_spec,
    }
