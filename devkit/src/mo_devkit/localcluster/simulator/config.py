"""How the simulated cluster looks and how fast it moves.

``mode="full"`` plays kube-controller-manager, kube-scheduler and the
kubelets (for the embedded control plane). ``mode="kubelet"`` plays only the
kubelets of its own Nodes and the provisioner of its own StorageClass, for a
real API server whose controller manager and scheduler do the rest (as kwok
does); those Nodes carry a taint and a label that only test pods tolerate
and select. ``mode="controllers"`` is the other half: kube-controller-manager
and kube-scheduler with no Nodes, kubelets or provisioner, so that the embedded
API server looks like the kubelet-less cluster the kubelet mode expects.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

SIMULATED_LABEL = "localcluster.dev/simulated"
PROVISIONER = "localcluster.dev/simulated"


@dataclass
class SimulatorConfig:
    mode: Literal["full", "kubelet", "controllers"] = "full"

    # --- nodes
    nodes: int = 3
    node_prefix: str = "sim-node-"
    node_cpu: str = "16"
    node_memory: str = "64Gi"
    node_pods: int = 110
    node_labels: dict[str, str] = field(default_factory=dict)
    #: Taints on every simulated node; None: none in full mode, the
    #: ``localcluster.dev/simulated=true:NoSchedule`` taint in kubelet mode.
    node_taints: list[dict[str, Any]] | None = None

    # --- kubelet timing (seconds)
    #: From binding to containers running (image pull, container start).
    start_delay: float = 0.2
    #: From running to ready, for containers with a readinessProbe.
    ready_delay: float = 0.2
    #: How long containers of run-to-completion pods (restartPolicy Never or
    #: OnFailure) run before they exit 0.
    run_duration: float = 0.5
    #: Kubernetes durations (termination grace periods, crash back-off,
    #: toleration seconds, Job back-off) are multiplied by this.
    time_scale: float = 0.01
    #: Kubelet Lease renewal (the kubelet's default is 10s) and the interval
    #: at which it re-posts an unchanged node status.
    node_lease_interval: float = 10.0
    node_status_interval: float = 60.0
    #: How long a node may miss its Lease before the node lifecycle
    #: controller calls it unreachable (kube-controller-manager: 40s).
    node_monitor_grace_period: float = 40.0

    # --- storage
    #: The StorageClass the simulator provisions for; None: ``standard``
    #: (the default class) in full mode, ``localcluster-simulated`` (not
    #: default) in kubelet mode.
    storage_class: str | None = None
    provisioner: str = PROVISIONER
    volume_binding_mode: Literal["Immediate", "WaitForFirstConsumer"] = "Immediate"

    # --- test controls
    rules_namespace: str = "localcluster-system"
    rules_configmap: str = "simulator-rules"

    # --- plumbing
    #: Watches are relisted this often (a stalled stream must not freeze the cluster).
    relist_period: float = 60.0

    def __post_init__(self) -> None:
        if self.mode not in ("full", "kubelet", "controllers"):
            raise ValueError(f"mode must be 'full', 'kubelet' or 'controllers', not {self.mode!r}")
        if self.node_taints is None:
            self.node_taints = (
                [{"key": SIMULATED_LABEL, "value": "true", "effect": "NoSchedule"}]
                if self.mode == "kubelet"
                else []
            )
        if self.mode == "kubelet":
            self.node_labels = {SIMULATED_LABEL: "true", **self.node_labels}
        if self.storage_class is None:
            self.storage_class = "standard" if self.mode == "full" else "localcluster-simulated"

    @property
    def full(self) -> bool:
        return self.mode == "full"

    @property
    def plays_controllers(self) -> bool:
        """kube-controller-manager and kube-scheduler: workloads, scheduling, claim binding."""
        return self.mode in ("full", "controllers")

    @property
    def plays_kubelets(self) -> bool:
        """Nodes, their kubelets, and the provisioner of the simulator's StorageClass."""
        return self.mode in ("full", "kubelet")

    def node_names(self) -> list[str]:
        return [f"{self.node_prefix}{i}" for i in range(self.nodes)]

    def scaled(self, seconds: float) -> float:
        return max(0.0, seconds * self.time_scale)

    def pod_toleration(self) -> dict[str, Any]:
        """The toleration a test pod needs to run on simulated nodes in kubelet mode."""
        return {"key": SIMULATED_LABEL, "operator": "Equal", "value": "true", "effect": "NoSchedule"}

    def pod_node_selector(self) -> dict[str, str]:
        return {SIMULATED_LABEL: "true"} if self.mode == "kubelet" else {}
