"""The representative clusters whose rendered objects the golden files hold, and how
they are captured from a running operator and written down.

Each case is a namespace with one MatrixOneCluster (and, for the pool case, a CNPool
and a CNClaim): every component (log, TN, CN groups, proxy, webui, a pool's CNs),
each MatrixOne version line the operator gates behaviour on (``matrixone/version.py``:
before 1.1.2 nothing, 1.1.2 and 1.2 the pipeline, session and lock-migration
features, from 2.0 the fixed discovery and sharding), S3 and shared-filesystem
storage, custom TOML, exported metrics (both discovery schemes), the object
storage's custom CA (its only TLS) and the pool with a bound claim.

What is captured is what the operator wrote, read back from the API server: each
StatefulSet's and Deployment's spec, each CN pod (the CNSet makes them itself, so a
CN's pod is its template), each Service and each ConfigMap's data (the TOML),
normalised: nothing the server, the scheduler or the workload controllers add
(uids, timestamps, resourceVersions, cluster IPs, node names, status) and nothing
that moves with the cluster's life (a CN's store UUID, its drain timestamps).
"""

from __future__ import annotations

import copy
import functools
import os
from pathlib import Path
from typing import Any

import yaml

from mo_devkit.testing.cleanup import NAMESPACES
from mo_devkit.testing.manifests import GROUP_VERSION, cluster_manifest
from mo_devkit.testing.waiting import condition, eventually, is_settled
from mo_operator.controllers.framework import resources as r
from mo_operator.kube.client.client import ApiClient
from mo_operator.matrixone import labels

Obj = dict[str, Any]

GOLDEN_DIR = Path(__file__).resolve().parents[2] / "golden"
UPDATE = os.environ.get("MO_UPDATE_GOLDEN") == "1"
"""``MO_UPDATE_GOLDEN=1``: write the captured objects as the new golden files."""

CLUSTER = "mo"
S3_SECRET = "s3-credentials"
CREDENTIAL = "mo-credential"
CA_SECRET = "s3-ca"
POOL_SELECTOR = {"matchLabels": {"pool": "default"}}
METRICS_POD: Obj = {"exportToPrometheus": True, "promDiscoveryScheme": "Pod"}
METRICS_SERVICE: Obj = {"exportToPrometheus": True, "promDiscoveryScheme": "Service"}
LOG_TOML = '[log]\nlevel = "debug"\n'
CN_TOML = '[cn.txn]\nmode = "pessimistic"\n\n[cn.frontend]\nlowerCaseTableNames = 0\n'
TN_TOML = '[tn.Txn.Storage]\nbackend = "TAE"\n'


def _log(**extra: Any) -> Obj:
    return {"replicas": 1, "volume": {"size": "1Gi"}, **extra}


def _s3(path: str, **extra: Any) -> Obj:
    return {"s3": {"path": path, **extra}}


def _cn(name: str, replicas: int = 1, **extra: Any) -> Obj:
    return {"name": name, "replicas": replicas, "scalingConfig": {"minDelaySeconds": 0}, **extra}


def _secret(name: str, namespace: str, data: dict[str, str]) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": name, "namespace": namespace},
        "stringData": data,
    }


def _cluster(namespace: str, version: str, **spec: Any) -> Obj:
    manifest = cluster_manifest(CLUSTER, version=version, **spec)
    manifest["metadata"]["namespace"] = namespace
    return manifest


def _v1_1(ns: str) -> list[Obj]:
    """1.1.0, before every version-gated feature: log, TN and CN on S3, written as a Go
    operator user's older manifests have them (the deprecated ``dn`` and ``tp``)."""
    cluster = _cluster(ns, "1.1.0", logService=_log(sharedStorage=_s3("bucket/v1-1")))
    spec = cluster["spec"]
    del spec["tn"], spec["cnGroups"]
    spec["dn"] = {"replicas": 1}
    spec["tp"] = {"replicas": 1, "scalingConfig": {"minDelaySeconds": 0}}
    return [cluster]


def _v1_2(ns: str) -> list[Obj]:
    """1.2.3 (pipeline info, session source, lock migration), a proxy, a shared filesystem,
    and the pod-level options: the binary in memory, extra service arguments, GOMEMLIMIT,
    DNS-based identity, an overlay."""
    overlay = {"env": [{"name": "EXTRA", "value": "1"}], "podAnnotations": {"team": "db"}}
    return [
        _cluster(
            ns,
            "1.2.3",
            logService=_log(sharedStorage={"fileSystem": {"path": "/mnt/shared"}}),
            tn={
                "replicas": 1,
                "serviceArgs": ["-debug-http=:6060"],
                "memoryLimitPercent": 80,
                "resources": {"limits": {"memory": "2Gi"}},
            },
            cnGroups=[_cn("tp", dnsBasedIdentity=True, overlay=overlay)],
            proxy={"replicas": 1},
            memoryFsSize="512Mi",
        )
    ]


def _v2_0(ns: str) -> list[Obj]:
    """2.0.0 with every optional feature of a cluster: S3 with credentials and a custom CA,
    custom TOML in each set, metrics exported both ways, a cache volume, two CN groups,
    the proxy, the web console and pods spread over hosts."""
    storage = _s3(
        "bucket/v2-0",
        type="minio",
        endpoint="https://minio.example:9000",
        secretRef={"name": S3_SECRET},
        certificateRef={"name": CA_SECRET, "files": ["ca.crt"]},
    )
    credential = _secret(CREDENTIAL, ns, {"username": "dump", "password": "golden"})
    credential["metadata"]["labels"] = {
        labels.NAMESPACE: ns,
        labels.INSTANCE: CLUSTER,
        labels.COMPONENT: "MatrixOneCluster",
        **labels.cluster_labels(CLUSTER),
    }
    return [
        credential,  # the operator's is random, and the web console's config holds it
        _secret(S3_SECRET, ns, {"AWS_ACCESS_KEY_ID": "id", "AWS_SECRET_ACCESS_KEY": "key"}),
        _secret(CA_SECRET, ns, {"ca.crt": "-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----\n"}),
        _cluster(
            ns,
            "2.0.0",
            logService=_log(sharedStorage=storage, config=LOG_TOML, **METRICS_POD),
            tn={"replicas": 1, "cacheVolume": {"size": "1Gi"}, "config": TN_TOML, **METRICS_SERVICE},
            cnGroups=[
                _cn(
                    "tp",
                    config=CN_TOML,
                    cacheVolume={"size": "1Gi"},
                    resources={"requests": {"cpu": "500m", "memory": "1Gi"}, "limits": {"memory": "1Gi"}},
                    **METRICS_POD,
                ),
                _cn("ap", **METRICS_SERVICE),
            ],
            proxy={"replicas": 1, **METRICS_POD},
            webui={"replicas": 1},
            topologySpread=["kubernetes.io/hostname"],
        ),
    ]


def _v2_1_pool(ns: str) -> list[Obj]:
    """2.1.0 with CNs from a pool instead of CN groups: a pool of one idle CN and a bound claim."""
    pool = {
        "apiVersion": GROUP_VERSION,
        "kind": "CNPool",
        "metadata": {"name": "pool", "namespace": ns},
        "spec": {
            "template": {"image": "matrixorigin/matrixone:2.1.0", "scalingConfig": {"minDelaySeconds": 0}},
            "podLabels": {"pool": "default"},
            "deps": {"logSet": {"metadata": {"name": CLUSTER}}},
            "strategy": {"updateStrategy": {}, "scaleStrategy": {"maxIdle": 1}},
        },
    }
    claim = {
        "apiVersion": GROUP_VERSION,
        "kind": "CNClaim",
        "metadata": {"name": "claim", "namespace": ns},
        "spec": {"selector": POOL_SELECTOR, "cnLabels": [{"key": "role", "values": ["app"]}]},
    }
    cluster = _cluster(
        ns, "2.1.0", logService=_log(sharedStorage=_s3("bucket/v2-1")), cnGroups=[], proxy={"replicas": 1}
    )
    return [cluster, pool, claim]


CASES = {
    "v1.1-dn-tp-s3": _v1_1,
    "v1.2-proxy-filesystem": _v1_2,
    "v2.0-all-features": _v2_0,
    "v2.1-cn-pool-and-claim": _v2_1_pool,
}
"""Each case's name (its golden file, ``tests/golden/<name>.yaml``) and its objects."""


def namespace_of(case: str) -> str:
    return "golden-" + case.replace(".", "-")


RESOURCES = {
    "Secret": r.SECRETS,
    "MatrixOneCluster": r.MATRIXONE_CLUSTERS,
    "CNPool": r.CNPOOLS,
    "CNClaim": r.CNCLAIMS,
}


async def create_cases(client: ApiClient, timeout: float = 120.0) -> None:
    """Every case's namespace and objects; a claim once its pool has an idle CN, so that
    the claim binds the pool's first CN and the pool refills with the second, whatever
    the timing (a claim made first may find two CNs starting and bind either)."""
    claims: list[Obj] = []
    for case, objects in CASES.items():
        namespace = namespace_of(case)
        await client.create(NAMESPACES, {"metadata": {"name": namespace}})
        for obj in objects(namespace):
            if obj["kind"] == "CNClaim":
                claims.append(obj)
            else:
                await client.create(RESOURCES[obj["kind"]], obj, namespace)
    for claim in claims:
        namespace = claim["metadata"]["namespace"]
        await eventually(
            functools.partial(_has_idle_cn, client, namespace), timeout, message=f"{namespace}: an idle CN"
        )
        await client.create(r.CNCLAIMS, claim, namespace)


async def _has_idle_cn(client: ApiClient, namespace: str) -> bool:
    selector = f"{labels.POOL_PHASE}={labels.POOL_PHASE_IDLE}"
    pods = (await client.list(r.PODS, namespace, label_selector=selector)).items
    return any(condition(p, "Ready").get("status") == "True" for p in pods)


async def _case_settled(client: ApiClient, case: str) -> bool:
    """The case's cluster settled, its claims bound, its pool refilled, and every pod
    Ready with the load the operator records on a CN (so what is captured is what a
    settled cluster keeps)."""
    namespace = namespace_of(case)
    if not is_settled(await client.get_or_none(r.MATRIXONE_CLUSTERS, CLUSTER, namespace)):
        return False
    for claim in (await client.list(r.CNCLAIMS, namespace)).items:
        if (claim.get("status") or {}).get("phase") != "Bound":
            return False
    pods = (await client.list(r.PODS, namespace)).items
    pooled = [p for p in pods if (p["metadata"].get("labels") or {}).get("pool") == "default"]
    if (await client.list(r.CNPOOLS, namespace)).items and len(pooled) < 2:  # a bound CN, an idle one
        return False
    for pod in pods:
        meta = pod["metadata"]
        if meta.get("deletionTimestamp") or condition(pod, "Ready").get("status") != "True":
            return False
        cn = (meta.get("labels") or {}).get(labels.COMPONENT) == "CNSet"
        if cn and labels.STORE_SCORE not in (meta.get("annotations") or {}):
            return False
    return True


async def wait_settled(client: ApiClient, timeout: float = 120.0) -> None:
    """Every case's cluster settled, its claims bound and its pool refilled."""
    for case in CASES:
        await eventually(functools.partial(_case_settled, client, case), timeout, message=f"{case} settles")


# ------------------------------------------------------------------ capture
SERVER_METADATA = ("uid", "resourceVersion", "creationTimestamp", "generation", "managedFields", "selfLink")
SERVER_ANNOTATIONS = (
    "deployment.kubernetes.io/revision",  # the Deployment controller's
    "matrixorigin.io/applied-hash",  # hashes the owner's uid with the object
    "matrixorigin.io/score",  # a CN's sessions and start time, as HAKeeper last said
)
SERVICE_ADDRESSES = ("clusterIP", "clusterIPs")
SIMULATOR_ANNOTATIONS = "simulated.matrixorigin.io/"
"""What the simulated MatrixOne and kubelets note on a pod: the dev kit's, not the operator's."""
POD_PLACEMENT = ("nodeName",)
TOKEN_VOLUME = "kube-api-access-"
"""The service account token volume admission adds to a pod, under a random name."""
MOVING_POD_LABELS = (labels.CN_UUID,)
"""A CN's store UUID, made when its pod is."""


def _metadata(meta: Obj) -> Obj:
    out = {k: v for k, v in meta.items() if k not in SERVER_METADATA}
    annotations = {
        k: v
        for k, v in (out.get("annotations") or {}).items()
        if k not in SERVER_ANNOTATIONS and not k.startswith(SIMULATOR_ANNOTATIONS)
    }
    if annotations:
        out["annotations"] = annotations
    else:
        out.pop("annotations", None)
    if out.get("ownerReferences"):
        out["ownerReferences"] = [
            {k: v for k, v in ref.items() if k != "uid"} for ref in out["ownerReferences"]
        ]
    return out


def normalise(obj: Obj) -> Obj:
    """What the operator decided of ``obj``, without what the server and the cluster's
    life add."""
    obj = copy.deepcopy(obj)
    obj.pop("status", None)
    obj["metadata"] = _metadata(obj["metadata"])
    spec = obj.get("spec") or {}
    if obj["kind"] == "Service":
        for key in SERVICE_ADDRESSES:
            spec.pop(key, None)
    if obj["kind"] == "Pod":
        for key in POD_PLACEMENT:
            spec.pop(key, None)
        spec["volumes"] = [v for v in spec.get("volumes") or () if not v["name"].startswith(TOKEN_VOLUME)]
        for container in spec.get("containers") or ():
            mounts = container.get("volumeMounts") or ()
            container["volumeMounts"] = [m for m in mounts if not m["name"].startswith(TOKEN_VOLUME)]
        pod_labels = obj["metadata"].get("labels") or {}
        for key in MOVING_POD_LABELS:
            if key in pod_labels:
                pod_labels[key] = "<store uuid>"
    if obj["kind"] == "StatefulSet":
        for claim in spec.get("volumeClaimTemplates") or ():
            claim.pop("status", None)
            claim["metadata"] = _metadata(claim.get("metadata") or {})
    return obj


def _ours(obj: Obj) -> bool:
    """Written by the operator: owned by one of our kinds (a CN pod by its CNSet)."""
    refs = obj["metadata"].get("ownerReferences") or ()
    return any(ref.get("apiVersion", "").startswith("core.matrixorigin.io/") for ref in refs)


CAPTURED = (r.STATEFULSETS, r.DEPLOYMENTS, r.PODS, r.SERVICES, r.CONFIGMAPS)
"""The objects whose change a user sees as rolled pods (or a moved endpoint): the
workloads' pod templates, the CN pods, the Services and the ConfigMaps (the TOML)."""


async def capture(client: ApiClient, case: str) -> list[Obj]:
    """The case's objects the operator wrote, normalised, in a stable order."""
    namespace = namespace_of(case)
    found: list[Obj] = []
    for res in CAPTURED:
        for obj in (await client.list(res, namespace)).items:
            obj.setdefault("apiVersion", f"{res.group}/{res.version}" if res.group else res.version)
            obj.setdefault("kind", res.kind)
            if _ours(obj) and not obj["metadata"].get("deletionTimestamp"):
                found.append(normalise(obj))
    order = {res.kind: i for i, res in enumerate(CAPTURED)}
    return sorted(found, key=lambda o: (order[o["kind"]], o["metadata"]["name"]))


# -------------------------------------------------------------------- files
class _Dumper(yaml.SafeDumper):
    """Block style for multi-line strings, so a TOML reads as the file it is."""


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    style = "|" if "\n" in value and not any(line != line.rstrip() for line in value.splitlines()) else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str)

HEADER = (
    "# Golden file: what the operator renders for the case {case!r} of\n"
    "# tests/integration/golden/cases.py, read back from the API server.\n"
    "# Do not edit: regenerate with MO_UPDATE_GOLDEN=1 (docs/design.md), and say in\n"
    "# CHANGELOG.md which pods users will see rolled and why.\n"
)


def render(case: str, objects: list[Obj]) -> str:
    body = yaml.dump_all(objects, Dumper=_Dumper, sort_keys=True, default_flow_style=False, width=100)
    return HEADER.format(case=case) + body


def golden_path(case: str) -> Path:
    return GOLDEN_DIR / f"{case}.yaml"


def load(case: str) -> list[Obj]:
    """The committed golden objects of ``case``."""
    return [d for d in yaml.safe_load_all(golden_path(case).read_text()) if d]
