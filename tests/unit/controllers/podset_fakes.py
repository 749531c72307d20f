"""A log service, a set and its cluster after a round's applies landed, shared by the
skeleton's actor and decision tests."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from mo_operator.controllers.specs.pods import format_time

from .controller_fakes import NOW

Obj = dict[str, Any]
NS = "ns"


def logset(*, bootstrapped: bool = True) -> Obj:
    status: Obj = {}
    if bootstrapped:  # published, Ready and Synced: what a dependent set starts on
        status = {
            "discovery": {"address": f"mo-log-discovery.{NS}.svc", "port": 32001},
            "conditions": [
                {"type": "Ready", "status": "True", "reason": "AllStoresReady"},
                {"type": "Synced", "status": "True", "reason": "Synced"},
            ],
        }
    return {
        "apiVersion": "core.matrixorigin.io/v1alpha1",
        "kind": "LogSet",
        "metadata": {"name": "mo", "namespace": NS, "uid": "uid-log"},
        "spec": {"replicas": 3, "volume": {"size": "1Gi"}, "sharedStorage": {"s3": {"path": "b/mo"}}},
        "status": status,
    }


def a_set(kind: str, replicas: int = 2) -> Obj:
    return {
        "apiVersion": "core.matrixorigin.io/v1alpha1",
        "kind": kind,
        "metadata": {"name": "mo", "namespace": NS, "uid": f"uid-{kind}", "generation": 1},
        "spec": {"replicas": replicas, "image": "matrixorigin/matrixone:2.0.0"},
        "deps": {"logSet": {"metadata": {"name": "mo", "namespace": NS}}},
    }


def pod(i: int, labels_: dict[str, str], *, ready: bool = True, since: float = NOW - 50) -> Obj:
    return {
        "kind": "Pod",
        "metadata": {
            "name": f"mo-{i}",
            "namespace": NS,
            "uid": f"uid-pod-{i}",
            "labels": labels_,
            "creationTimestamp": format_time(NOW - 100),
        },
        "spec": {"volumes": []},
        "status": {
            "conditions": [
                {
                    "type": "Ready",
                    "status": "True" if ready else "False",
                    "lastTransitionTime": format_time(since),
                }
            ]
        },
    }


def landed(applied: Iterable[Mapping[str, Any]], replicas: int) -> tuple[list[Obj], list[Obj]]:
    """The objects ``applied`` as the server holds them once the workload controller
    rolled them (its status complete), and its pods, ready on its template and config."""
    objects, pods = [], []
    for sent in applied:
        obj = dict(sent, metadata={**sent["metadata"], "uid": f"uid-{sent['metadata']['name']}"})
        obj["metadata"]["resourceVersion"] = "1"
        if obj["kind"] in ("StatefulSet", "Deployment"):
            obj["metadata"]["generation"] = 1
            obj["status"] = {
                "observedGeneration": 1,
                "replicas": replicas,
                "readyReplicas": replicas,
                "updatedReplicas": replicas,
                "availableReplicas": replicas,
                "currentRevision": "rev1",
                "updateRevision": "rev1",
            }
            template = obj["spec"]["template"]
            pod_labels = {**template["metadata"]["labels"], "controller-revision-hash": "rev1"}
            for i in range(replicas):
                p = pod(i, pod_labels)
                p["spec"] = template["spec"]
                pods.append(p)
        objects.append(obj)
    return objects, pods
