"""Columns and cells of the built-in kinds, as kube-apiserver's printers
compute them (``pkg/printers/internalversion/printers.go``: ``printPod``,
``printService``, ``printDeployment``, ...; the server prints the wide form).
The expected cells are what ``kubectl get -o wide`` shows for such objects."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from mo_devkit.localcluster.apiserver.builtins import builtin_type
from mo_devkit.localcluster.apiserver.tables import to_table

NOW = datetime(2024, 6, 1, 12, 0, 0, tzinfo=UTC)
AGO_2D = (NOW - timedelta(days=2)).strftime("%Y-%m-%dT%H:%M:%SZ")
AGO_5M = (NOW - timedelta(minutes=5)).strftime("%Y-%m-%dT%H:%M:%SZ")
AGO_90S = (NOW - timedelta(seconds=90)).strftime("%Y-%m-%dT%H:%M:%SZ")


def table(api_version: str, kind: str, obj: dict[str, Any]) -> tuple[list[str], list[Any]]:
    rt = builtin_type(api_version, kind)
    assert rt is not None
    t = to_table(rt, [obj], now=NOW)
    return [c["name"] for c in t["columnDefinitions"]], t["rows"][0]["cells"]


def meta(name: str = "x", **extra: Any) -> dict[str, Any]:
    return {"name": name, "namespace": "ns", "creationTimestamp": AGO_2D, **extra}


def running(name: str, restarts: int = 0, ready: bool = True) -> dict[str, Any]:
    return {
        "name": name,
        "ready": ready,
        "restartCount": restarts,
        "state": {"running": {"startedAt": AGO_2D}},
    }


POD_COLUMNS = [
    "Name",
    "Ready",
    "Status",
    "Restarts",
    "Age",
    "IP",
    "Node",
    "Nominated Node",
    "Readiness Gates",
]


def pod(spec: dict[str, Any], status: dict[str, Any], **metadata: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta("p", **metadata),
        "spec": spec,
        "status": status,
    }


def test_running_pod() -> None:
    obj = pod(
        {
            "containers": [{"name": "a"}, {"name": "b"}],
            "nodeName": "n1",
            "readinessGates": [{"conditionType": "G"}],
        },
        {
            "phase": "Running",
            "podIPs": [{"ip": "10.1.0.4"}],
            "conditions": [{"type": "Ready", "status": "True"}, {"type": "G", "status": "True"}],
            "containerStatuses": [running("a"), running("b", ready=False)],
        },
    )
    columns, cells = table("v1", "Pod", obj)
    assert columns == POD_COLUMNS
    assert cells == ["p", "1/2", "Running", "0", "2d", "10.1.0.4", "n1", "<none>", "1/1"]


def test_crash_looping_pod_with_last_restart() -> None:
    status = {
        "phase": "Running",
        "containerStatuses": [
            {
                "name": "a",
                "ready": False,
                "restartCount": 4,
                "state": {"waiting": {"reason": "CrashLoopBackOff"}},
                "lastState": {"terminated": {"exitCode": 1, "finishedAt": AGO_5M}},
            }
        ],
    }
    _, cells = table("v1", "Pod", pod({"containers": [{"name": "a"}]}, status))
    assert cells[1:4] == ["0/1", "CrashLoopBackOff", "4 (5m ago)"]


def test_pending_pod_and_init_containers() -> None:
    spec = {"initContainers": [{"name": "i1"}, {"name": "i2"}], "containers": [{"name": "a"}]}
    waiting = {"name": "i2", "restartCount": 0, "state": {"waiting": {"reason": "PodInitializing"}}}
    done = {"name": "i1", "restartCount": 0, "state": {"terminated": {"exitCode": 0}}}
    assert table("v1", "Pod", pod(spec, {"phase": "Pending", "initContainerStatuses": [done, waiting]}))[1][
        1:4
    ] == [
        "0/1",
        "Init:1/2",
        "0",
    ]
    failed = {"name": "i1", "restartCount": 2, "state": {"terminated": {"exitCode": 3}}}
    assert table("v1", "Pod", pod(spec, {"phase": "Pending", "initContainerStatuses": [failed]}))[1][2:4] == [
        "Init:ExitCode:3",
        "2",
    ]
    pulling = {"name": "i1", "restartCount": 0, "state": {"waiting": {"reason": "ErrImagePull"}}}
    assert (
        table("v1", "Pod", pod(spec, {"phase": "Pending", "initContainerStatuses": [pulling]}))[1][2]
        == "Init:ErrImagePull"
    )
    assert table("v1", "Pod", pod({"containers": [{"name": "a"}]}, {"phase": "Pending"}))[1][1:4] == [
        "0/1",
        "Pending",
        "0",
    ]


def test_sidecar_init_containers_count_as_containers() -> None:
    spec = {"initContainers": [{"name": "side", "restartPolicy": "Always"}], "containers": [{"name": "a"}]}
    status = {
        "phase": "Running",
        "conditions": [{"type": "Initialized", "status": "True"}],
        "initContainerStatuses": [
            {"name": "side", "started": True, "ready": True, "restartCount": 1, "state": {"running": {}}}
        ],
        "containerStatuses": [running("a")],
    }
    assert table("v1", "Pod", pod(spec, status))[1][1:4] == ["2/2", "Running", "1"]


def test_terminating_and_finished_pods() -> None:
    spec = {"containers": [{"name": "a"}]}
    terminating = pod(
        spec, {"phase": "Running", "containerStatuses": [running("a")]}, deletionTimestamp=AGO_5M
    )
    assert table("v1", "Pod", terminating)[1][2] == "Terminating"
    completed = pod(
        spec,
        {
            "phase": "Succeeded",
            "containerStatuses": [
                {"name": "a", "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}
            ],
        },
    )
    rt = builtin_type("v1", "Pod")
    assert rt is not None
    row = to_table(rt, [completed], now=NOW)["rows"][0]
    assert row["cells"][1:3] == ["0/1", "Completed"]
    assert row["conditions"] == [
        {
            "type": "Completed",
            "status": "True",
            "reason": "Succeeded",
            "message": "The pod has completed successfully.",
        }
    ]
    killed = pod(
        spec,
        {
            "phase": "Failed",
            "containerStatuses": [{"name": "a", "state": {"terminated": {"exitCode": 137, "signal": 9}}}],
        },
    )
    assert table("v1", "Pod", killed)[1][2] == "Signal:9"


@pytest.mark.parametrize(
    ("spec", "status", "cells"),
    [
        (
            {
                "type": "ClusterIP",
                "clusterIPs": ["10.96.0.10"],
                "ports": [{"port": 53, "protocol": "UDP"}, {"port": 9153, "protocol": "TCP"}],
                "selector": {"k8s-app": "dns"},
            },
            {},
            ["ClusterIP", "10.96.0.10", "<none>", "53/UDP,9153/TCP", "2d", "k8s-app=dns"],
        ),
        (
            {"type": "ClusterIP", "clusterIPs": ["None"]},
            {},
            ["ClusterIP", "None", "<none>", "<none>", "2d", "<none>"],
        ),
        (
            {
                "type": "NodePort",
                "clusterIPs": ["10.0.0.1"],
                "ports": [{"port": 80, "nodePort": 30080, "protocol": "TCP"}],
                "externalIPs": ["1.2.3.4"],
            },
            {},
            ["NodePort", "10.0.0.1", "1.2.3.4", "80:30080/TCP", "2d", "<none>"],
        ),
        (
            {
                "type": "LoadBalancer",
                "clusterIPs": ["10.0.0.2"],
                "ports": [{"port": 443, "nodePort": 31443, "protocol": "TCP"}],
            },
            {},
            ["LoadBalancer", "10.0.0.2", "<pending>", "443:31443/TCP", "2d", "<none>"],
        ),
        (
            {"type": "LoadBalancer", "clusterIPs": ["10.0.0.2"]},
            {"loadBalancer": {"ingress": [{"ip": "5.6.7.8"}, {"hostname": "lb.example.com"}]}},
            ["LoadBalancer", "10.0.0.2", "5.6.7.8,lb.example.com", "<none>", "2d", "<none>"],
        ),
        (
            {"type": "ExternalName", "externalName": "db.example.com"},
            {},
            ["ExternalName", "<none>", "db.example.com", "<none>", "2d", "<none>"],
        ),
    ],
)
def test_services(spec: dict[str, Any], status: dict[str, Any], cells: list[Any]) -> None:
    columns, got = table("v1", "Service", {"metadata": meta("svc"), "spec": spec, "status": status})
    assert columns == ["Name", "Type", "Cluster-IP", "External-IP", "Port(s)", "Age", "Selector"]
    assert got == ["svc", *cells]


def test_workloads() -> None:
    template = {
        "spec": {"containers": [{"name": "mo", "image": "mo:1"}, {"name": "sidecar", "image": "s:2"}]}
    }
    selector = {
        "matchLabels": {"app": "mo"},
        "matchExpressions": [{"key": "tier", "operator": "In", "values": ["b", "a"]}],
    }
    deploy = {
        "metadata": meta("d"),
        "spec": {"replicas": 3, "selector": selector, "template": template},
        "status": {"readyReplicas": 2, "updatedReplicas": 3, "availableReplicas": 2},
    }
    assert table("apps/v1", "Deployment", deploy) == (
        ["Name", "Ready", "Up-to-date", "Available", "Age", "Containers", "Images", "Selector"],
        ["d", "2/3", 3, 2, "2d", "mo,sidecar", "mo:1,s:2", "app=mo,tier in (a,b)"],
    )
    sts = {
        "metadata": meta("s"),
        "spec": {"replicas": 3, "template": template},
        "status": {"readyReplicas": 1},
    }
    assert table("apps/v1", "StatefulSet", sts) == (
        ["Name", "Ready", "Age", "Containers", "Images"],
        ["s", "1/3", "2d", "mo,sidecar", "mo:1,s:2"],
    )
    rs = {
        "metadata": meta("r"),
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "mo"}}, "template": template},
        "status": {"replicas": 2, "readyReplicas": 1},
    }
    assert table("apps/v1", "ReplicaSet", rs) == (
        ["Name", "Desired", "Current", "Ready", "Age", "Containers", "Images", "Selector"],
        ["r", 2, 2, 1, "2d", "mo,sidecar", "mo:1,s:2", "app=mo"],
    )
    ds = {
        "metadata": meta("ds"),
        "spec": {"selector": {}, "template": {"spec": {"nodeSelector": {"os": "linux"}, "containers": []}}},
        "status": {"desiredNumberScheduled": 3, "numberReady": 2},
    }
    assert table("apps/v1", "DaemonSet", ds)[1] == ["ds", 3, 0, 2, 0, 0, "os=linux", "2d", "", "", "<none>"]
    owner = {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "web", "controller": True}
    rev = {"metadata": meta("web-7d", ownerReferences=[owner]), "revision": 4}
    assert table("apps/v1", "ControllerRevision", rev) == (
        ["Name", "Controller", "Revision", "Age"],
        ["web-7d", "statefulset.apps/web", 4, "2d"],
    )


def test_jobs() -> None:
    start = (NOW - timedelta(minutes=12)).strftime("%Y-%m-%dT%H:%M:%SZ")
    end = (NOW - timedelta(minutes=2)).strftime("%Y-%m-%dT%H:%M:%SZ")
    template = {"spec": {"containers": [{"name": "j", "image": "busybox"}]}}
    done = {
        "metadata": meta("j"),
        "spec": {"completions": 1, "template": template},
        "status": {"succeeded": 1, "startTime": start, "completionTime": end},
    }
    columns, cells = table("batch/v1", "Job", done)
    assert columns == ["Name", "Completions", "Duration", "Age", "Containers", "Images", "Selector"]
    assert cells == ["j", "1/1", "10m", "2d", "j", "busybox", "<none>"]
    running_job = {
        "metadata": meta("j"),
        "spec": {"parallelism": 3, "template": template},
        "status": {"startTime": start},
    }
    assert table("batch/v1", "Job", running_job)[1][1:3] == ["0/1 of 3", "12m"]
    assert table("batch/v1", "Job", {"metadata": meta("j"), "spec": {}})[1][1:3] == ["0/1", ""]


def test_config_objects() -> None:
    assert table(
        "v1", "ConfigMap", {"metadata": meta("c"), "data": {"a": "1", "b": "2"}, "binaryData": {"c": "AA=="}}
    ) == (["Name", "Data", "Age"], ["c", 3, "2d"])
    assert table("v1", "Secret", {"metadata": meta("s"), "type": "Opaque", "data": {"a": "MQ=="}}) == (
        ["Name", "Type", "Data", "Age"],
        ["s", "Opaque", 1, "2d"],
    )
    assert table("v1", "ServiceAccount", {"metadata": meta("sa")}) == (
        ["Name", "Secrets", "Age"],
        ["sa", 0, "2d"],
    )
    assert table("v1", "Namespace", {"metadata": meta("n"), "status": {"phase": "Active"}}) == (
        ["Name", "Status", "Age"],
        ["n", "Active", "2d"],
    )
    assert table(
        "coordination.k8s.io/v1", "Lease", {"metadata": meta("l"), "spec": {"holderIdentity": "op-1"}}
    ) == (["Name", "Holder", "Age"], ["l", "op-1", "2d"])
    hooks = {"metadata": meta("h"), "webhooks": [{}, {}]}
    assert table("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration", hooks)[1] == [
        "h",
        2,
        "2d",
    ]


def test_storage() -> None:
    pvc = {
        "metadata": meta("data-mo-0"),
        "spec": {"volumeName": "pv-1", "storageClassName": "standard"},
        "status": {
            "phase": "Bound",
            "capacity": {"storage": "10Gi"},
            "accessModes": ["ReadWriteOnce", "ReadOnlyMany"],
        },
    }
    columns, cells = table("v1", "PersistentVolumeClaim", pvc)
    assert columns == [
        "Name",
        "Status",
        "Volume",
        "Capacity",
        "Access Modes",
        "StorageClass",
        "VolumeAttributesClass",
        "Age",
        "VolumeMode",
    ]
    assert cells == ["data-mo-0", "Bound", "pv-1", "10Gi", "RWO,ROX", "standard", "<unset>", "2d", "<unset>"]
    pending = {
        "metadata": meta("p", annotations={"volume.beta.kubernetes.io/storage-class": "old"}),
        "spec": {"resources": {"requests": {"storage": "1Gi"}}},
        "status": {"phase": "Pending"},
    }
    assert table("v1", "PersistentVolumeClaim", pending)[1][1:6] == ["Pending", "", "", "", "old"]
    pv = {
        "metadata": meta("pv-1"),
        "spec": {
            "capacity": {"storage": "10Gi"},
            "accessModes": ["ReadWriteOnce"],
            "persistentVolumeReclaimPolicy": "Delete",
            "claimRef": {"namespace": "ns", "name": "data-mo-0"},
            "storageClassName": "standard",
            "volumeMode": "Filesystem",
        },
        "status": {"phase": "Bound"},
    }
    assert table("v1", "PersistentVolume", pv)[1] == [
        "pv-1",
        "10Gi",
        "RWO",
        "Delete",
        "Bound",
        "ns/data-mo-0",
        "standard",
        "<unset>",
        "",
        "2d",
        "Filesystem",
    ]
    sc = {
        "metadata": meta("standard", annotations={"storageclass.kubernetes.io/is-default-class": "true"}),
        "provisioner": "local",
    }
    assert table("storage.k8s.io/v1", "StorageClass", sc) == (
        ["Name", "Provisioner", "ReclaimPolicy", "VolumeBindingMode", "AllowVolumeExpansion", "Age"],
        ["standard (default)", "local", "Delete", "Immediate", False, "2d"],
    )


def test_nodes() -> None:
    node = {
        "metadata": meta(
            "n1", labels={"node-role.kubernetes.io/control-plane": "", "kubernetes.io/role": "worker"}
        ),
        "spec": {"unschedulable": True},
        "status": {
            "conditions": [
                {"type": "MemoryPressure", "status": "False"},
                {"type": "Ready", "status": "True"},
            ],
            "nodeInfo": {"kubeletVersion": "v1.30.0"},
            "addresses": [{"type": "InternalIP", "address": "192.0.2.1"}],
        },
    }
    columns, cells = table("v1", "Node", node)
    assert columns == [
        "Name",
        "Status",
        "Roles",
        "Age",
        "Version",
        "Internal-IP",
        "External-IP",
        "OS-Image",
        "Kernel-Version",
        "Container-Runtime",
    ]
    assert cells == [
        "n1",
        "Ready,SchedulingDisabled",
        "control-plane,worker",
        "2d",
        "v1.30.0",
        "192.0.2.1",
        "<none>",
        "<unknown>",
        "<unknown>",
        "<unknown>",
    ]
    assert table("v1", "Node", {"metadata": meta("n2"), "status": {}})[1][1:3] == ["Unknown", "<none>"]


def test_events_of_both_apis() -> None:
    columns, cells = table(
        "v1",
        "Event",
        {
            "metadata": meta("e1"),
            "involvedObject": {"kind": "Pod", "name": "mo-0", "fieldPath": "spec.containers{mo}"},
            "type": "Warning",
            "reason": "BackOff",
            "message": "Back-off restarting\n",
            "firstTimestamp": AGO_2D,
            "lastTimestamp": AGO_90S,
            "count": 7,
            "source": {"component": "kubelet", "host": "n1"},
        },
    )
    assert columns == [
        "Last Seen",
        "Type",
        "Reason",
        "Object",
        "Subobject",
        "Source",
        "Message",
        "First Seen",
        "Count",
        "Name",
    ]
    assert cells == [
        "90s",
        "Warning",
        "BackOff",
        "pod/mo-0",
        "spec.containers{mo}",
        "kubelet, n1",
        "Back-off restarting",
        "2d",
        7,
        "e1",
    ]
    new_api = {
        "apiVersion": "events.k8s.io/v1",
        "metadata": meta("e2"),
        "regarding": {"kind": "StatefulSet", "name": "mo"},
        "type": "Normal",
        "reason": "Scaled",
        "note": "scaled to 3",
        "eventTime": "2024-06-01T11:54:59.500000Z",
        "reportingController": "mo-operator",
    }
    assert table("events.k8s.io/v1", "Event", new_api)[1] == [
        "5m",
        "Normal",
        "Scaled",
        "statefulset/mo",
        "",
        "mo-operator",
        "scaled to 3",
        "5m",
        1,
        "e2",
    ]
    series = {**new_api, "series": {"count": 4, "lastObservedTime": "2024-06-01T11:59:30.000000Z"}}
    assert table("events.k8s.io/v1", "Event", series)[1][0] == "30s"
    assert table("events.k8s.io/v1", "Event", series)[1][8] == 4


def test_policy_and_rbac() -> None:
    pdb = {"metadata": meta("pdb"), "spec": {"minAvailable": "50%"}, "status": {"disruptionsAllowed": 1}}
    assert table("policy/v1", "PodDisruptionBudget", pdb) == (
        ["Name", "Min Available", "Max Unavailable", "Allowed Disruptions", "Age"],
        ["pdb", "50%", "N/A", 1, "2d"],
    )
    binding = {
        "metadata": meta("rb"),
        "roleRef": {"kind": "ClusterRole", "name": "edit"},
        "subjects": [
            {"kind": "User", "name": "alice"},
            {"kind": "Group", "name": "devs"},
            {"kind": "ServiceAccount", "namespace": "ns", "name": "op"},
            {"kind": "User", "name": "bob"},
        ],
    }
    assert table("rbac.authorization.k8s.io/v1", "RoleBinding", binding) == (
        ["Name", "Role", "Age", "Users", "Groups", "ServiceAccounts"],
        ["rb", "ClusterRole/edit", "2d", "alice, bob", "devs", "ns/op"],
    )


def test_endpoints() -> None:
    subset = {
        "addresses": [{"ip": f"10.0.0.{i}"} for i in range(1, 4)],
        "ports": [{"port": 80}, {"port": 443}],
    }
    assert table("v1", "Endpoints", {"metadata": meta("ep"), "subsets": [subset]})[1] == [
        "ep",
        "10.0.0.1:80,10.0.0.2:80,10.0.0.3:80 + 3 more...",
        "2d",
    ]
    assert table("v1", "Endpoints", {"metadata": meta("ep")})[1] == ["ep", "<none>", "2d"]
    headless = {"addresses": [{"ip": "10.0.0.9"}]}
    assert table("v1", "Endpoints", {"metadata": meta("ep"), "subsets": [headless]})[1][1] == "10.0.0.9"
