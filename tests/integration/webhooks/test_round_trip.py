"""Manifests written from upstream's examples go in with ``kubectl apply`` and come
back with ``kubectl get -o json`` unchanged in meaning: every field the manifest
sets is stored as written, and what was added is exactly upstream's defaulting
(UPSTREAM.md §2), applied by our webhooks on top of the CRD schema's defaults.
Re-applying the same manifest (client-side or server-side apply) is a no-op."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conftest import Kubectl
from mo_operator.api.defaulting import LATEST_OPERATOR_VERSION, default

from .conftest import MANIFESTS, Webhooks, example_files, load

Obj = dict[str, Any]
GODEBUG = {"name": "GODEBUG", "value": "madvdontneed=1,gctrace=2"}


def survives(written: Any, stored: Any, path: str = "") -> list[str]:
    """Where ``stored`` lost or changed what ``written`` set. Defaulting may add keys
    and append to lists (overlay env gets GODEBUG), never change a written value."""
    if isinstance(written, dict):
        if not isinstance(stored, dict):
            return [path]
        return [p for k, v in written.items() for p in survives(v, stored.get(k, _MISSING), f"{path}.{k}")]
    if isinstance(written, list):
        if not isinstance(stored, list) or len(stored) < len(written):
            return [path]
        return [p for i, v in enumerate(written) for p in survives(v, stored[i], f"{path}[{i}]")]
    return [] if stored == written and type(stored) is type(written) else [path]


_MISSING = object()


async def get(kubectl: Kubectl, path: Path) -> Obj:
    out = await kubectl.run("get", "-f", str(path), "-o", "json")
    obj: Obj = json.loads(out.stdout)
    return obj


def _spec(obj: Obj) -> Obj:
    return {k: v for k, v in obj.items() if k not in ("metadata", "status")}


async def test_every_upstream_example_round_trips(webhooks: Webhooks, kubectl: Kubectl) -> None:
    """One ``kubectl apply -f`` of the directory (as a user applies a folder of
    manifests), then every object read back and compared with its file."""
    await kubectl.run("apply", "-f", str(MANIFESTS))
    listed = json.loads((await kubectl.run("get", "-f", str(MANIFESTS), "-o", "json")).stdout)["items"]
    stored = {(o["kind"], o["metadata"]["name"]): o for o in listed}
    files = example_files()
    assert len(stored) == len(files)
    for name, path in files.items():
        written = load(path)
        kind = written["kind"]
        got = stored[kind, written["metadata"]["name"]]
        assert survives(_spec(written), _spec(got)) == [], name
        assert survives(written["metadata"], got["metadata"]) == [], name
        # (A written status, as in the BucketClaim example, is not stored: every kind
        # of ours has a status subresource, so only controllers write status.)
        assert _spec(got) == _spec(default(kind, written)), f"{name}: exactly upstream's defaulting added"
    assert webhooks.server.requests >= len(files)
    await kubectl.run("apply", "-f", str(MANIFESTS))
    again = json.loads((await kubectl.run("get", "-f", str(MANIFESTS), "-o", "json")).stdout)["items"]
    assert [o["metadata"]["resourceVersion"] for o in again] == [
        o["metadata"]["resourceVersion"] for o in listed
    ], "re-applying the same manifests writes nothing"


async def test_upstreams_defaults_as_stored(webhooks: Webhooks, kubectl: Kubectl) -> None:
    files = example_files()
    for name in ("logset", "cnset", "dnset", "matrixonecluster", "cnset-full"):
        await kubectl.run("apply", "-f", str(files[name]))
    logset = (await get(kubectl, files["logset"]))["spec"]
    assert logset["initialConfig"] == {"logShardReplicas": 3, "logShards": 1, "dnShards": 1}
    assert logset["storeFailureTimeout"] == "30m0s"  # written, kept
    assert logset["pvcRetentionPolicy"] == logset["sharedStorage"]["s3"]["s3RetentionPolicy"] == "Retain"
    assert logset["overlay"]["env"] == [GODEBUG]
    cnset = (await get(kubectl, files["cnset"]))["spec"]
    assert (cnset["serviceType"], cnset["role"]) == ("ClusterIP", "TP")
    assert cnset["updateStrategy"] == {"maxSurge": 1, "maxUnavailable": 0}
    assert cnset["overlay"]["env"] == [GODEBUG]
    full = (await get(kubectl, files["cnset-full"]))["spec"]
    assert full["scalingConfig"]["storeDrainTimeout"] == "5m0s"
    assert full["sharedStorageCache"] == {"memoryCacheSize": "1Gi", "diskCacheSize": "18Gi"}
    assert full["overlay"]["env"] == [{"name": "TZ", "value": "UTC"}, GODEBUG]
    dnset = (await get(kubectl, files["dnset"]))["spec"]
    assert "sharedStorageCache" not in dnset, "no memory request, no cache default"
    mo = (await get(kubectl, files["matrixonecluster"]))["spec"]
    assert mo["operatorVersion"] == LATEST_OPERATOR_VERSION
    assert mo["logService"]["initialConfig"]["logShardReplicas"] == 3
    assert mo["tn"]["sharedStorageCache"] == {"diskCacheSize": "9Gi"}
    assert mo["cnGroups"][0]["serviceType"] == "ClusterIP" and "role" not in mo["cnGroups"][0]
    assert "image" not in mo["tn"], "images stay derived from spec.version"


async def test_server_side_apply_keeps_create_only_fields_a_manifest_stops_setting(
    webhooks: Webhooks, kubectl: Kubectl, tmp_path: Path
) -> None:
    """Server-side apply removes a field its manager set before and no longer sets.
    operatorVersion (set on create, never lowered) and the immutable initialConfig
    then come back from the stored object through the defaulting webhook, so the
    apply succeeds and changes nothing, instead of being denied as a downgrade."""
    path = example_files()["matrixonecluster"]
    pinned = load(path)
    pinned["spec"]["operatorVersion"] = LATEST_OPERATOR_VERSION
    pinned["spec"]["logService"]["initialConfig"] = {"logShardReplicas": 3, "logShards": 1, "dnShards": 1}
    first = tmp_path / "pinned.yaml"
    first.write_text(json.dumps(pinned))
    await kubectl.run("apply", "--server-side", "-f", str(first))
    stored = await get(kubectl, path)
    await kubectl.run("apply", "--server-side", "-f", str(path))
    again = await get(kubectl, path)
    assert again["spec"] == stored["spec"]
    assert again["metadata"]["generation"] == stored["metadata"]["generation"]
