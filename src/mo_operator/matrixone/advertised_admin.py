"""Where a simulated MatrixOne's admin server answers, as a kubeconfig
advertises it (a cluster extension kubectl ignores).

Kept out of ``matrixone.simulated`` so that ``mo-operator run`` can look
whether its kubeconfig names one without importing the simulation, which a
production operator never runs.
"""

from __future__ import annotations

from pathlib import Path

import yaml

EXTENSION = "mo-operator.matrixorigin.io/simulated-admin"
"""Name of the kubeconfig cluster extension that carries the admin URL and token."""


def advertised_admin(kubeconfig: str | Path) -> tuple[str, str] | None:
    """``(url, token)`` of the admin server the kubeconfig's current cluster advertises, if any."""
    config = yaml.safe_load(Path(kubeconfig).read_text()) or {}
    current = config.get("current-context")
    contexts = {c["name"]: c["context"] for c in config.get("contexts") or ()}
    cluster_name = (contexts.get(current) or {}).get("cluster")
    for cluster in config.get("clusters") or ():
        if cluster.get("name") != cluster_name:
            continue
        for extension in cluster["cluster"].get("extensions") or ():
            if extension.get("name") == EXTENSION:
                data = extension.get("extension") or {}
                return str(data["url"]), str(data["token"])
    return None
