"""An in-memory Kubernetes API server that behaves like kube-apiserver where a
controller or kubectl can tell the difference."""
