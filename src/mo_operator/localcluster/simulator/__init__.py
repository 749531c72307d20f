"""The workload simulator: plays kube-controller-manager, kube-scheduler and
the kubelets against the API, so workloads behave as on a real cluster."""
