"""The workload simulator: plays kube-controller-manager, kube-scheduler and
the kubelets against the API, so workloads behave as on a real cluster.

Everything goes through the Kubernetes API (a lightkube ``AsyncClient``), so
the same code runs against the embedded API server (``mode="full"``) and,
playing only the kubelets of its own nodes and its own volume provisioner,
against a real kube-apiserver (``mode="kubelet"``).
"""

from .behaviour import PodBehaviour, PodVerdict
from .config import SimulatorConfig
from .rules import Effect, FailureRule, PodKill, RuleSet, rules_configmap, rules_from_configmap
from .simulator import Simulator

__all__ = [
    "Effect",
    "FailureRule",
    "PodBehaviour",
    "PodKill",
    "PodVerdict",
    "RuleSet",
    "Simulator",
    "SimulatorConfig",
    "rules_configmap",
    "rules_from_configmap",
]
