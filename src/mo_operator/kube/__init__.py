"""The generic controller runtime, one package per concept as in
controller-runtime's ``pkg/``: ``meta`` at the bottom, then ``client``, then
``cache``, ``recorder`` and ``leaderelection``, then ``controller``,
``webhook`` and ``healthz``, and ``manager`` on top (docs/design.md).

It knows nothing of MatrixOne and never imports the local cluster.
"""
