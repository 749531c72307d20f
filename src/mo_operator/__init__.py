"""The MatrixOne operator for Kubernetes.

Layers (one-way, checked by import-linter): ``kube`` is the generic controller
runtime and ``localcluster`` the embedded control plane; neither knows
MatrixOne. ``api`` types our kinds, ``matrixone`` holds MatrixOne knowledge,
``controllers`` and ``webhooks`` use them all, ``cli`` wires the commands.
"""
