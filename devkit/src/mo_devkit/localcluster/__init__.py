"""The embedded local control plane: an API server speaking the real
Kubernetes HTTP API and a workload simulator playing the controller manager,
the scheduler and the kubelets. Generic: it knows nothing of MatrixOne.
"""
