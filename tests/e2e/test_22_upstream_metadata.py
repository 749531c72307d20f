"""What scripts written for the Go operator read with ``kubectl get -o yaml`` is
what it would show: a BucketClaim in use carries upstream's ``recyclable``
condition (False, reason InUse) first, our Ready after it, and the cluster and
its sets list upstream's Ready and Synced before ours; and upstream's finalizers
(``matrixorigin.io/BucketClaim``, ``matrixorigin.io/bucket-data-finalizer``);
released, it is recyclable; a claim also carrying the finalizer earlier versions
of this operator used is deleted all the same. Log, TN and CN pods carry
upstream's ``matrixorigin.io/config-suffix``, naming the config each runs, and it
changes with the config.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import yaml

from mo_operator.controllers.framework import resources as r
from mo_operator.matrixone import labels

from .harness import OperatorRunner, World, eventually

Obj = dict[str, Any]
UPSTREAM_FINALIZERS = {"matrixorigin.io/BucketClaim", "matrixorigin.io/bucket-data-finalizer"}
OLD_FINALIZER = "matrixorigin.io/bucketclaim"


async def _get_yaml(world: World, *args: str) -> Obj:
    out = await world.kubectl("get", *args, "-o", "yaml")
    loaded = yaml.safe_load(out.stdout)
    assert isinstance(loaded, dict)
    return loaded


def _condition(obj: Mapping[str, Any], ctype: str) -> Mapping[str, Any]:
    found = [c for c in (obj.get("status") or {}).get("conditions") or () if c["type"] == ctype]
    assert len(found) == 1, (ctype, (obj.get("status") or {}).get("conditions"))
    return found[0]


async def _claim_name(world: World) -> str | None:
    found = await world.list(r.BUCKETCLAIMS, **{labels.CLUSTER: "mo"})
    return found[0]["metadata"]["name"] if found else None


def _config_map_of(pod: Mapping[str, Any]) -> str:
    return str(next(v["configMap"]["name"] for v in pod["spec"]["volumes"] if v["name"] == "config"))


async def _suffixes(world: World, component: str) -> dict[str, str]:
    pods = await _get_yaml(world, "pods", "-l", f"{labels.COMPONENT}={component}")
    return {
        p["metadata"]["name"]: p["metadata"].get("annotations", {}).get(labels.CONFIG_SUFFIX, "")
        for p in pods["items"]
    }


async def _recyclable(world: World, name: str) -> bool:
    claim = await world.get(r.BUCKETCLAIMS, name)
    conditions = ((claim or {}).get("status") or {}).get("conditions") or ()
    return any(c["type"] == "recyclable" and c["status"] == "True" for c in conditions)


async def test_buckets_and_pods_show_upstreams_metadata(world: World, operator: OperatorRunner) -> None:
    manifest = world.cluster_manifest(
        "mo",
        logService={
            "replicas": 1,
            "volume": {"size": "1Gi"},
            "sharedStorage": {"s3": {"path": "bucket/meta"}},
        },
        proxy={"replicas": 1},
    )
    await world.apply(manifest)
    await world.wait_settled(r.MATRIXONE_CLUSTERS, "mo", timeout=90)
    name = await eventually(lambda: _claim_name(world), message="the cluster's BucketClaim")

    # The claim in use, as kubectl shows it.
    claim = await _get_yaml(world, "bucketclaim", name)
    assert claim["status"]["state"] == "InUse"
    recyclable = _condition(claim, "recyclable")
    assert (recyclable["status"], recyclable["reason"]) == ("False", "InUse")
    assert claim["status"]["conditions"][0] == recyclable, "upstream's e2e reads conditions[0]"
    assert _condition(claim, "Ready")["status"] == "True"
    # The cluster and its sets list upstream's framework conditions first too.
    for kind in ("matrixonecluster", "logset", "dnset", "cnset", "proxyset"):
        for obj in (await _get_yaml(world, kind))["items"]:
            types = [c["type"] for c in obj["status"]["conditions"]]
            assert types[:2] == ["Ready", "Synced"], (kind, types)
    assert set(claim["metadata"]["finalizers"]) == UPSTREAM_FINALIZERS

    # Every log, TN and CN pod names the config it runs (the cluster defaults to
    # operatorVersion 1.3.0, from which upstream sets the annotation).
    for component in ("LogSet", "DNSet", "CNSet"):
        pods = await _get_yaml(world, "pods", "-l", f"{labels.COMPONENT}={component}")
        assert pods["items"], component
        for pod in pods["items"]:
            suffix = pod["metadata"]["annotations"][labels.CONFIG_SUFFIX]
            assert suffix and _config_map_of(pod).endswith(f"-{suffix}"), pod["metadata"]["name"]
    proxies = (await _get_yaml(world, "pods", "-l", f"{labels.COMPONENT}=ProxySet"))["items"]
    assert proxies and all(
        labels.CONFIG_SUFFIX not in (p["metadata"].get("annotations") or {}) for p in proxies
    )

    # A config change gives the CN pods a new suffix.
    before = await _suffixes(world, "CNSet")
    manifest["spec"]["cnGroups"][0]["config"] = '[cn.txn]\nmode = "pessimistic"\n'
    await world.apply(manifest)

    async def rolled() -> bool:
        now = await _suffixes(world, "CNSet")
        return len(now) == len(before) and all(s and s not in before.values() for s in now.values())

    await eventually(rolled, timeout=90, message="CN pods run the new config, under a new suffix")

    # Released, the claim is recyclable; one that also carries the finalizer of an
    # earlier version of this operator is deleted all the same.
    await world.kubectl("delete", "matrixonecluster", "mo", "--wait=false")
    await eventually(lambda: _recyclable(world, name), timeout=90, message="the released claim is recyclable")
    claim = await _get_yaml(world, "bucketclaim", name)
    assert claim["status"]["state"] == "Released"
    patch = yaml.safe_dump({"metadata": {"finalizers": [*claim["metadata"]["finalizers"], OLD_FINALIZER]}})
    await world.kubectl("patch", "bucketclaim", name, "--type=merge", "-p", patch)
    await world.kubectl("delete", "bucketclaim", name, "--wait=false")
    await eventually(
        lambda: _gone(world, name), timeout=60, message="the claim goes, every finalizer removed"
    )


async def _gone(world: World, name: str) -> bool:
    return await world.get(r.BUCKETCLAIMS, name) is None
