"""The MatrixOne operator for Kubernetes.

Layers (one-way, checked by import-linter): ``kube`` is the generic controller
runtime and knows nothing of MatrixOne. ``api`` types our kinds, ``matrixone``
holds MatrixOne knowledge, ``controllers`` and ``webhooks`` use them all,
``cli`` wires the commands. The dev kit (``mo_devkit``: the embedded control
plane, the simulated MatrixOne, the test kit, the demo) is a distribution of
its own on top, which this package never imports.

``__version__`` is the installed distribution's, whose one source is
pyproject.toml: ``mo-operator --version``, ``mo_operator_build_info`` and the
checks on the chart, the manifests and the Dockerfile all read it.
"""

from importlib import metadata as _metadata

try:
    __version__ = _metadata.version("mo-operator")
except _metadata.PackageNotFoundError:  # a source tree never installed
    __version__ = "unknown"
