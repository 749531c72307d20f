"""The MatrixOne operator for Kubernetes.

Layers (one-way, checked by import-linter): ``kube`` is the generic controller
runtime and knows nothing of MatrixOne. ``api`` types our kinds, ``matrixone``
holds MatrixOne knowledge, ``controllers`` and ``webhooks`` use them all,
``cli`` wires the commands. The dev kit (``mo_devkit``: the embedded control
plane, the simulated MatrixOne, the test kit, the demo) is a distribution of
its own on top, which this package never imports.

``__version__`` is the installed distribution's, whose one source is
pyproject.toml: ``mo-operator --version``, ``mo_operator_build_info`` and the
checks on the chart, the manifests and the Dockerfile all read it. It is read
on first use: importing this package must cost nothing, since the console
script's entry installs its signal handlers first and imports the package to do
so (``cli/entry.py``); ``importlib.metadata`` alone takes a tenth of a second.
"""

from typing import Any


def __getattr__(name: str) -> Any:
    if name != "__version__":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import metadata

    try:
        version = metadata.version("mo-operator")
    except metadata.PackageNotFoundError:  # a source tree never installed
        version = "unknown"
    globals()["__version__"] = version
    return version
