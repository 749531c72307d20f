"""The python-udf sidecar of a CN pod (``spec.pythonUdfSidecar``), as upstream's
cnset template builds it: MatrixOne's Python UDF server started on the port the
CN's ``python-udf-client.server-address`` points at, on localhost, then the
sidecar's own overlay, which may replace any of it (command included)."""

from __future__ import annotations

from typing import Any, Final

from mo_operator.api.cnset import CNSetSpec
from mo_operator.matrixone import layout, ports

from ..specs.podtemplate import canonical_resources, overlay_main

__all__ = ["PYTHON_UDF_IMAGE", "python_udf_command", "python_udf_sidecar"]

PYTHON_UDF_IMAGE: Final = "composer000/mo-python-udf-server:latest"
"""Upstream's default image of the UDF server."""

Obj = dict[str, Any]


def python_udf_command(port: int) -> list[str]:
    """Upstream's start command: the server listens on localhost only, where the CN
    (the only client) reaches it, so nothing else in the pod's network sees it."""
    return ["/bin/bash", "-c", f"python -u server.py --address=localhost:{port}"]


def python_udf_sidecar(spec: CNSetSpec) -> Obj | None:
    """The sidecar container of a CN set's pods; None unless the sidecar is enabled."""
    udf = spec.python_udf_sidecar
    if udf is None or not udf.enabled:
        return None
    port = int(udf.port or ports.CN_PYTHON_UDF_DEFAULT)
    sidecar: Obj = {
        "name": layout.PYTHON_UDF_CONTAINER,
        "image": udf.image or PYTHON_UDF_IMAGE,
        "command": python_udf_command(port),
        "ports": [{"name": "udf", "containerPort": port}],
    }
    resources = canonical_resources(udf.resources)
    if resources:
        sidecar["resources"] = resources
    overlay_main(sidecar, udf.overlay)
    return sidecar
