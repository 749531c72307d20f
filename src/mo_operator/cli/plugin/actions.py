"""What ``kubectl mo`` changes, each through what the operator already acts on.

- **restart** writes ``kubectl.kubernetes.io/restartedAt`` (kubectl's own key,
  what ``kubectl rollout restart`` puts in a Deployment's pod template) into the
  pod annotations of each chosen component's ``overlay``, in the cluster's spec:
  a spec change like any other, so the cluster rolls it in dependency order
  (log → TN → CN → proxy), one pod at a time, halting on a pod that does not
  come back, and ``observedGeneration`` and ``UpToDate`` say when it is done.
  The Go operator reads ``overlay.podAnnotations`` the same way.
- **pause** and **resume** set and remove ``matrixorigin.io/skip-sync: "true"``
  (upstream's annotation) on the cluster and on each of its sets, so that no
  controller touches any part of it meanwhile.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mo_operator.controllers.framework import resources as r
from mo_operator.kube.client.client import ApiClient
from mo_operator.kube.meta.objects import name_of, spec_of
from mo_operator.matrixone import labels

from ..errors import CliError
from .view import children_of

RESTARTED_AT = "kubectl.kubernetes.io/restartedAt"
COMPONENTS = ("log", "tn", "cn", "proxy", "webui")
"""What ``--component`` accepts (also ``dn`` for ``tn``, and ``cn/<group>`` for one CN group)."""


@dataclass(frozen=True)
class Target:
    component: str
    """How the user names it: ``log``, ``tn``, ``cn/tp``..."""
    path: str
    """JSON pointer of its spec in the cluster."""
    section: Mapping[str, Any]
    guard: tuple[str, str] | None = None
    """A JSON pointer and the value it must still have (a CN group's name at its index)."""


def _targets(spec: Mapping[str, Any]) -> list[Target]:
    """Every component the cluster's spec has, in dependency order."""
    found: list[Target] = [Target("log", "/spec/logService", spec.get("logService") or {})]
    for key in ("tn", "dn"):
        if spec.get(key):
            found.append(Target("tn", f"/spec/{key}", spec[key]))
            break
    for legacy in ("tp", "ap"):
        if spec.get(legacy):
            found.append(Target(f"cn/{legacy}", f"/spec/{legacy}", spec[legacy]))
    for i, group in enumerate(spec.get("cnGroups") or ()):
        name = str(group.get("name"))
        found.append(Target(f"cn/{name}", f"/spec/cnGroups/{i}", group, (f"/spec/cnGroups/{i}/name", name)))
    for key in ("proxy", "webui"):
        if spec.get(key):
            found.append(Target(key, f"/spec/{key}", spec[key]))
    return found


def choose(spec: Mapping[str, Any], asked: Sequence[str]) -> list[Target]:
    """The components ``asked`` names (every one when none), or a CliError naming
    what the cluster does not have."""
    available = _targets(spec)
    if not asked:
        return available
    chosen: list[Target] = []
    for wanted in asked:
        key = "tn" if wanted == "dn" else wanted
        matched = [
            t for t in available if t.component == key or (key == "cn" and t.component.startswith("cn/"))
        ]
        if not matched:
            names = ", ".join(t.component for t in available)
            raise CliError(
                f"the cluster has no component {wanted!r}: it has {names} (and cn for every CN group)"
            )
        chosen.extend(t for t in matched if t not in chosen)
    return [t for t in available if t in chosen]


def restart_patch(targets: Sequence[Target], stamp: str) -> list[dict[str, Any]]:
    """A JSON patch adding ``stamp`` to each target's pod annotations, creating the
    ``overlay`` and ``podAnnotations`` it lacks; a CN group is tested to still be
    where it was read."""
    ops: list[dict[str, Any]] = []
    key = RESTARTED_AT.replace("~", "~0").replace("/", "~1")
    for t in targets:
        if t.guard is not None:
            ops.append({"op": "test", "path": t.guard[0], "value": t.guard[1]})
        overlay = t.section.get("overlay")
        if not isinstance(overlay, Mapping):
            ops.append(
                {"op": "add", "path": f"{t.path}/overlay", "value": {"podAnnotations": {RESTARTED_AT: stamp}}}
            )
        elif not isinstance(overlay.get("podAnnotations"), Mapping):
            ops.append(
                {"op": "add", "path": f"{t.path}/overlay/podAnnotations", "value": {RESTARTED_AT: stamp}}
            )
        else:
            ops.append({"op": "add", "path": f"{t.path}/overlay/podAnnotations/{key}", "value": stamp})
    return ops


def now_stamp() -> str:
    return datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


async def get_cluster(client: ApiClient, namespace: str, name: str) -> dict[str, Any]:
    found = await client.get_or_none(r.MATRIXONE_CLUSTERS, name, namespace)
    if found is None:
        raise CliError(f"MatrixOneCluster {namespace}/{name} not found")
    return found


async def restart(client: ApiClient, namespace: str, name: str, components: Sequence[str]) -> dict[str, Any]:
    cluster = await get_cluster(client, namespace, name)
    targets = choose(spec_of(cluster), components)
    stamp = now_stamp()
    await client.patch(
        r.MATRIXONE_CLUSTERS, name, restart_patch(targets, stamp), namespace, patch_type="json"
    )
    return {
        "cluster": f"{namespace}/{name}",
        "components": [t.component for t in targets],
        "restartedAt": stamp,
    }


async def set_paused(client: ApiClient, namespace: str, name: str, pause: bool) -> dict[str, Any]:
    """Pause the cluster first and its sets after (resume the other way round), so
    that no set is reconciled against a cluster in the other state."""
    cluster = await get_cluster(client, namespace, name)
    value = "true" if pause else None
    sets = [(kind, name_of(obj)) for kind, obj, _ in await children_of(client, namespace, name)]
    resources = {res.kind: res for res in (r.LOGSETS, r.DNSETS, r.TNSETS, r.CNSETS, r.PROXYSETS, r.WEBUIS)}
    order = [("MatrixOneCluster", name_of(cluster)), *sets]
    if not pause:
        order.reverse()
    patch = {"metadata": {"annotations": {labels.SKIP_SYNC: value}}}
    for kind, obj_name in order:
        res = r.MATRIXONE_CLUSTERS if kind == "MatrixOneCluster" else resources[kind]
        await client.patch(res, obj_name, patch, namespace)
    return {"cluster": f"{namespace}/{name}", "paused": pause, "objects": [f"{k} {n}" for k, n in order]}
