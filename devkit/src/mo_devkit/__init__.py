"""The MatrixOne operator's dev kit: what runs the operator without a real
Kubernetes or a real MatrixOne, for the demo, the tests and the benchmarks.

- ``localcluster``: the embedded control plane, an API server speaking the real
  Kubernetes HTTP API and a workload simulator playing the controller manager,
  the scheduler and the kubelets; it knows nothing of MatrixOne;
- ``simulated``: MatrixOne's processes on the workload simulator, serving morpc
  on loopback;
- ``testing``: the test kit scenarios and benchmarks run the operator with;
- ``cli``: the ``demo`` and ``control-plane`` commands of ``mo-operator``.

It depends on the operator (``mo_operator``), which never imports it.
"""
