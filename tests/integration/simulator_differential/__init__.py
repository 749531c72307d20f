"""The workload simulator judged by the real controllers: each scenario runs on
the embedded control plane with the full simulator and on a real one
(kube-apiserver, kube-controller-manager and kube-scheduler from
``KUBEBUILDER_ASSETS``) where the simulator plays only its Nodes' kubelets,
and the two runs must show the same events in the same order and the same
outcomes; only the timings may differ."""
