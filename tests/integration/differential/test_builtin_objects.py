"""Objects kube-apiserver returns for built-in kinds: the defaults it fills in
(pkg/apis/*/v1/defaults.go and the default admission plugins), the
managedFields it records, and when ``metadata.generation`` moves (only on a
spec change: pkg/registry/*/strategy.go PrepareForUpdate)."""

from __future__ import annotations

from typing import Any

from .harness import MERGE, Target, Transcript
from .harness import test_differential as test_differential

Obj = dict[str, Any]


def _container(name: str = "main", image: str = "busybox:1.36") -> Obj:
    return {"name": name, "image": image}


async def case_configmap_create_get_and_binary_data(t: Target) -> Transcript:
    """A ConfigMap comes back as sent, with identity and one managedFields
    entry for the creating manager (Update operation, FieldsV1)."""
    tr = Transcript()
    body = {"metadata": {"name": "cm", "labels": {"a": "b"}}, "data": {"k": "v"}, "binaryData": {"b": "AAE="}}
    tr.add("create", await t.post(t.ns_path("configmaps"), body))
    tr.add("get", await t.get(t.ns_path("configmaps", "cm")))
    return tr


async def case_pod_defaults(t: Target) -> Transcript:
    """A minimal Pod gets the scheduler, DNS, restart and grace defaults, the
    default ServiceAccount, the not-ready/unreachable tolerations
    (DefaultTolerationSeconds) and per-container pull policy and
    termination-message defaults."""
    tr = Transcript()
    body = {
        "metadata": {"name": "p"},
        "spec": {
            "containers": [
                {
                    **_container(),
                    "ports": [{"containerPort": 80}],
                    "readinessProbe": {"tcpSocket": {"port": 80}},
                },
                _container("side", "nginx"),
            ],
            "volumes": [{"name": "c", "configMap": {"name": "x"}}],
        },
    }
    tr.add("create", await t.post(t.ns_path("pods"), body))
    return tr


async def case_service_defaults(t: Target) -> Transcript:
    """A ClusterIP Service gets an allocated IP, single-stack IPv4, targetPort
    = port, TCP, no session affinity; a NodePort one also an external traffic
    policy (its node port is allocated and normalised away by the test)."""
    tr = Transcript()
    svc = {"metadata": {"name": "s"}, "spec": {"selector": {"a": "b"}, "ports": [{"port": 80}]}}
    tr.add("clusterip", await t.post(t.ns_path("services"), svc))
    headless = {
        "metadata": {"name": "h"},
        "spec": {"clusterIP": "None", "ports": [{"port": 81, "name": "x"}]},
    }
    tr.add("headless", await t.post(t.ns_path("services"), headless))
    return tr


async def case_statefulset_defaults(t: Target) -> Transcript:
    """A StatefulSet's defaults (OrderedReady, RollingUpdate with partition 0,
    retention Retain, history 10) and its claim templates' (Filesystem, Pending)."""
    tr = Transcript()
    body = {
        "metadata": {"name": "ss"},
        "spec": {
            "selector": {"matchLabels": {"app": "ss"}},
            "serviceName": "ss",
            "template": {"metadata": {"labels": {"app": "ss"}}, "spec": {"containers": [_container()]}},
            "volumeClaimTemplates": [
                {
                    "metadata": {"name": "data"},
                    "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
                }
            ],
        },
    }
    tr.add("create", await t.post(t.ns_path("statefulsets", group="apps"), body))
    return tr


async def case_deployment_defaults(t: Target) -> Transcript:
    """A Deployment's defaults: one replica, 25%/25% rolling update, history
    10, a 600 s progress deadline, and the pod template's."""
    tr = Transcript()
    body = {
        "metadata": {"name": "d"},
        "spec": {
            "selector": {"matchLabels": {"app": "d"}},
            "template": {"metadata": {"labels": {"app": "d"}}, "spec": {"containers": [_container()]}},
        },
    }
    reply = await t.post(t.ns_path("deployments", group="apps"), body)
    # kube-controller-manager writes the status of the real one at once;
    # what the API server itself returns is the create response.
    tr.add("create", reply)
    return tr


async def case_job_defaults_and_generated_selector(t: Target) -> Transcript:
    """A Job without a selector gets one on its own uid, and its template the
    matching controller-uid and job-name labels (old and new keys)."""
    tr = Transcript()
    body = {
        "metadata": {"name": "j"},
        "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [_container()]}}},
    }
    tr.add("create", await t.post(t.ns_path("jobs", group="batch", version="v1"), body))
    return tr


async def case_generation_moves_on_spec_only(t: Target) -> Transcript:
    """generation starts at 1 and moves on a spec change only: not on a
    label change, not on a status write."""
    tr = Transcript()
    body = {
        "metadata": {"name": "d"},
        "spec": {
            "replicas": 0,
            "selector": {"matchLabels": {"app": "d"}},
            "template": {"metadata": {"labels": {"app": "d"}}, "spec": {"containers": [_container()]}},
        },
    }
    path = t.ns_path("deployments", "d", group="apps")
    created = await t.post(t.ns_path("deployments", group="apps"), body)
    tr.add("created generation", created.body["metadata"].get("generation"))
    labelled = await t.patch(path, {"metadata": {"labels": {"x": "y"}}}, MERGE)
    tr.add("after label", labelled.body["metadata"].get("generation"))
    status = await t.patch(path + "/status", {"status": {"observedGeneration": 7}}, MERGE)
    tr.add("after status", [status.code, status.body["metadata"].get("generation")])
    spec = await t.patch(path, {"spec": {"replicas": 2}}, MERGE)
    tr.add("after spec", spec.body["metadata"].get("generation"))
    return tr


async def case_deployment_status_keeps_annotations_not_labels_or_spec(t: Target) -> Transcript:
    """deployments/status keeps the annotations a write sends (how
    kube-controller-manager records deployment.kubernetes.io/revision) without
    moving generation, and resets labels and spec (deploymentStatusStrategy);
    the same annotation change through the main resource moves generation."""
    tr = Transcript()
    body = {
        "metadata": {"name": "d", "labels": {"app": "d"}},
        "spec": {
            "replicas": 0,
            "selector": {"matchLabels": {"app": "d"}},
            "template": {"metadata": {"labels": {"app": "d"}}, "spec": {"containers": [_container()]}},
        },
    }
    path = t.ns_path("deployments", "d", group="apps")
    await t.post(t.ns_path("deployments", group="apps"), body)
    status = await t.patch(
        path + "/status",
        {
            "metadata": {"annotations": {"deployment.kubernetes.io/revision": "1"}, "labels": {"x": "y"}},
            "spec": {"replicas": 3},
            "status": {"observedGeneration": 1},
        },
        MERGE,
    )
    meta = status.body["metadata"]
    tr.add(
        "status write",
        [
            status.code,
            meta.get("generation"),
            meta.get("annotations"),
            meta.get("labels"),
            status.body["spec"]["replicas"],
        ],
    )
    got = (await t.get(path)).body
    tr.add("read back", [got["metadata"].get("generation"), got["metadata"].get("annotations")])
    main = await t.patch(
        path, {"metadata": {"annotations": {"deployment.kubernetes.io/revision": "2"}}}, MERGE
    )
    tr.add("main resource", [main.code, main.body["metadata"].get("generation")])
    return tr


async def case_pvc_protection_and_deletion(t: Target) -> Transcript:
    """A new claim gets the pvc-protection finalizer (StorageObjectInUseProtection
    admission) and Pending; its delete answers with the claim, now deleting,
    which stays until kube-controller-manager finds no pod using it."""
    tr = Transcript()
    pvc = {
        "metadata": {"name": "c"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
    }
    tr.add("create", await t.post(t.ns_path("persistentvolumeclaims"), pvc))
    deleted = await t.delete(t.ns_path("persistentvolumeclaims", "c"))
    meta = deleted.body["metadata"]
    tr.add(
        "delete", [deleted.code, deleted.body["kind"], meta.get("finalizers"), "deletionTimestamp" in meta]
    )
    return tr


async def case_generate_name(t: Target) -> Transcript:
    """generateName: the server appends five random characters; the name is
    returned and usable at once."""
    tr = Transcript()
    created = await t.post(t.ns_path("configmaps"), {"metadata": {"generateName": "gen-"}})
    name = created.body["metadata"]["name"]
    tr.add(
        "create", [created.code, name.startswith("gen-"), len(name), created.body["metadata"]["generateName"]]
    )
    tr.add("get", (await t.get(t.ns_path("configmaps", name))).code)
    tr.add("neither", await t.post(t.ns_path("configmaps"), {"metadata": {}}))
    return tr


async def case_secret_string_data_and_type(t: Target) -> Transcript:
    """stringData is write-only: merged into data, base64, over data's keys;
    the type defaults to Opaque and may not change."""
    tr = Transcript()
    body = {"metadata": {"name": "s"}, "data": {"a": "eA==", "b": "eQ=="}, "stringData": {"b": "z", "c": "w"}}
    created = await t.post(t.ns_path("secrets"), body)
    tr.add("create", [created.body.get("type"), created.body.get("data"), "stringData" in created.body])
    changed = await t.patch(t.ns_path("secrets", "s"), {"type": "kubernetes.io/tls"}, MERGE)
    tr.add("type change", changed)
    return tr


async def case_nodeport_service(t: Target) -> Transcript:
    """A NodePort Service gets a node port from the range and the external
    traffic policy default; asking for a port outside the range is 422."""
    tr = Transcript()
    svc = {"metadata": {"name": "np"}, "spec": {"type": "NodePort", "ports": [{"port": 80}]}}
    created = await t.post(t.ns_path("services"), svc)
    spec = created.body["spec"]
    port = spec["ports"][0]
    tr.add(
        "create",
        [spec.get("externalTrafficPolicy"), 30000 <= port.get("nodePort", 0) <= 32767, port.get("protocol")],
    )
    bad = {"metadata": {"name": "bad"}, "spec": {"type": "NodePort", "ports": [{"port": 80, "nodePort": 80}]}}
    tr.add("out of range", await t.post(t.ns_path("services"), bad))
    return tr
