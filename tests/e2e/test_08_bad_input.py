"""Scenario 8: invalid specs are refused by the schema or the webhook with a
message naming the field, as kubectl shows it; what slips through (made while
the webhook was off) becomes a condition and an Event on the object, never a
crashed operator, and a fixed spec converges."""

from __future__ import annotations

import copy

import pytest
import yaml

from mo_operator.controllers.framework import resources as r
from mo_operator.matrixone import labels

from .harness import GROUP_VERSION, OperatorRunner, World, condition, eventually


def _cnset(name: str, **spec: object) -> dict[str, object]:
    return {
        "apiVersion": GROUP_VERSION,
        "kind": "CNSet",
        "metadata": {"name": name},
        "spec": {"replicas": 1, "image": "matrixorigin/matrixone:2.0.0", **spec},
        "deps": {"logSet": {"metadata": {"name": "mo"}}},
    }


BAD_CLUSTERS = [
    # (what is wrong, patch to a valid cluster, text kubectl must show)
    ("negative replicas", {"logService": {"replicas": -1}}, "spec.logService.replicas"),
    (
        "a size that is no quantity",
        {"logService": {"volume": {"size": "ten gigs"}}},
        "spec.logService.volume.size",
    ),
    (
        "two groups of one name",
        {"cnGroups": [{"name": "tp", "replicas": 1}, {"name": "tp", "replicas": 2}]},
        "spec.cnGroups",
    ),
    (
        "shards on more replicas than stores",
        {"logService": {"replicas": 1, "initialConfig": {"logShardReplicas": 3}}},
        "logShardReplicas",
    ),
    ("no version", {"version": None}, "spec.version"),
    # The limits (docs/webhooks.md): in the CRD schema, so the API server refuses them too.
    (
        "a hundred thousand CNs",
        {"cnGroups": [{"name": "tp", "replicas": 100_000}]},
        "spec.cnGroups[0].replicas",
    ),
    ("a hundred thousand log stores", {"logService": {"replicas": 100_000}}, "spec.logService.replicas"),
    (
        "a 64 KB image",
        {"cnGroups": [{"name": "tp", "replicas": 1, "image": "x" * 65536}]},
        "spec.cnGroups[0].image",
    ),
    (
        "a 64 KB S3 path",
        {"logService": {"sharedStorage": {"s3": {"path": "b/" + "p" * 65536}}}},
        "spec.logService.sharedStorage.s3.path",
    ),
    ("a version of thousands of digits", {"version": "9" * 5000}, "spec.version"),
    # What MatrixOne or the kubelet would refuse later.
    ("an image repository that is none", {"imageRepository": "not a repo!"}, "spec.imageRepository"),
    ("TN shards MatrixOne does not run", {"logService": {"initialConfig": {"dnShards": 2}}}, "dnShards"),
    (
        "a group whose CNSet's Services would pass 63 characters",
        {"cnGroups": [{"name": "g" * 60, "replicas": 1}]},
        "spec.cnGroups[0].name: Invalid value",
    ),
    (
        "a group whose CNSet's Services cannot be named",
        {"cnGroups": [{"name": "x.y", "replicas": 1}]},
        "spec.cnGroups[0].name: Invalid value",
    ),
    (
        "an unknown service type",
        {"cnGroups": [{"name": "tp", "replicas": 1, "serviceType": "ExternalName"}]},
        "serviceType",
    ),
]


def _merge(base: dict[str, object], patch: dict[str, object]) -> dict[str, object]:
    out = copy.deepcopy(base)
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        elif isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)  # type: ignore[arg-type]
        else:
            out[key] = value
    return out


@pytest.mark.parametrize(("what", "patch", "field"), BAD_CLUSTERS, ids=[b[0] for b in BAD_CLUSTERS])
async def test_invalid_specs_are_refused_naming_the_field(
    world: World, operator: OperatorRunner, what: str, patch: dict[str, object], field: str
) -> None:
    manifest = world.cluster_manifest("mo")
    manifest["spec"] = _merge(manifest["spec"], patch)
    result = await world.kubectl("apply", "-f", "-", input=yaml.safe_dump(manifest), check=False)
    assert result.returncode != 0, f"{what} was accepted"
    assert field in result.stderr, result.stderr
    assert await world.get(r.MATRIXONE_CLUSTERS, "mo") is None


async def test_an_invalid_update_is_refused_and_the_cluster_keeps_running(
    world: World, operator: OperatorRunner
) -> None:
    manifest = world.cluster_manifest("mo")
    await world.apply(manifest)
    await world.wait_settled(r.MATRIXONE_CLUSTERS, "mo")
    shrunk = _merge(manifest, {"spec": {"logService": {"volume": {"size": "512Mi"}}}})
    result = await world.kubectl("apply", "-f", "-", input=yaml.safe_dump(shrunk), check=False)
    assert result.returncode != 0 and "volume" in result.stderr and "decreased" in result.stderr, (
        result.stderr
    )
    # Upstream refuses any change of initialConfig once the cluster exists; it was accepted.
    reshard = _merge(manifest, {"spec": {"logService": {"initialConfig": {"logShardReplicas": 1}}}})
    result = await world.kubectl("apply", "-f", "-", input=yaml.safe_dump(reshard), check=False)
    assert (
        result.returncode != 0
        and "spec.logService.initialConfig: initialConfig is immutable" in result.stderr
    ), result.stderr
    moved = _merge(manifest, {"spec": {"logService": {"sharedStorage": {"s3": {"path": "elsewhere/mo"}}}}})
    result = await world.kubectl("apply", "-f", "-", input=yaml.safe_dump(moved), check=False)
    assert result.returncode != 0 and "sharedStorage" in result.stderr, result.stderr
    assert (await world.wait_settled(r.MATRIXONE_CLUSTERS, "mo"))["status"]["phase"] == "Ready"


async def test_initial_config_is_immutable_from_the_start(world: World, operator: OperatorRunner) -> None:
    """Before HAKeeper bootstrapped too: the LogSet's initialConfig is what it bootstraps from."""
    manifest = world.cluster_manifest("mo")
    await world.apply(manifest)
    reshard = _merge(manifest, {"spec": {"logService": {"initialConfig": {"logShardReplicas": 1}}}})
    result = await world.kubectl("apply", "-f", "-", input=yaml.safe_dump(reshard), check=False)
    assert result.returncode != 0 and "initialConfig is immutable" in result.stderr, result.stderr


async def test_what_slips_past_the_webhook_becomes_a_condition_not_a_crash(
    world: World, operator_runner: OperatorRunner
) -> None:
    # The objects are written while no webhook runs (failurePolicy aside: none is registered yet).
    await world.apply(world.cluster_manifest("mo"))
    no_deps = _cnset("orphan")
    del no_deps["deps"]
    await world.apply(world.for_cluster(no_deps))
    await world.apply(
        world.for_cluster(_cnset("weird", cnLabels=[{"key": "", "values": ["a"]}], memoryLimitPercent=150))
    )
    bad_logset = world.for_cluster(
        {
            "apiVersion": GROUP_VERSION,
            "kind": "LogSet",
            "metadata": {"name": "too-few"},
            "spec": {
                "replicas": 1,
                "image": "matrixorigin/matrixone:2.0.0",
                "volume": {"size": "1Gi"},
                "sharedStorage": {"s3": {"path": "bucket/too-few"}},
                "initialConfig": {"logShardReplicas": 3},
            },
        }
    )
    await world.apply(bad_logset)
    await world.apply(world.cluster_manifest("dotted", cnGroups=[{"name": "x.y", "replicas": 1}]))
    await operator_runner.start()

    # A valid cluster converges next to them: the operator is alive and well.
    await world.wait_settled(r.MATRIXONE_CLUSTERS, "mo")
    for res, name, field in (
        (r.CNSETS, "orphan", "deps"),
        (r.CNSETS, "weird", "spec.cnLabels[0].key"),
        (r.LOGSETS, "too-few", "logShardReplicas"),
        (r.MATRIXONE_CLUSTERS, "dotted", "spec.cnGroups[0].name"),
    ):
        obj = await eventually(
            lambda res=res, name=name: _invalid(world, res, name), message=f"{name} reported"
        )
        ready = condition(obj, "Ready")
        assert ready["reason"] == "InvalidSpec" and field in ready["message"], ready
        events = await world.kubectl(
            "get", "events", "--field-selector", f"involvedObject.name={name}", "-o", "yaml"
        )
        assert "InvalidSpec" in events.stdout and field in events.stdout
        assert not await world.list(r.PODS, **{labels.INSTANCE: name}), "nothing is built from a bad spec"

    # Fixing the spec (with the webhook now in place) converges.
    fixed = _merge(bad_logset, {"spec": {"initialConfig": {"logShardReplicas": 1}}})
    await world.apply(fixed)
    await world.wait_settled(r.LOGSETS, "too-few")


async def _invalid(world: World, res: object, name: str) -> dict[str, object] | None:
    obj = await world.get(res, name)
    return obj if condition(obj, "Ready").get("reason") == "InvalidSpec" else None


async def test_a_missing_secret_is_reported_and_its_pods_wait_for_it(
    world: World, operator: OperatorRunner
) -> None:
    """A Secret the spec names that does not exist: the pods that need it do not start
    (the simulator's kubelet plays a real one), the sets say so in ResolvedRefs and a
    Warning Event, and creating the Secret lets the cluster come up. (The cluster went
    Ready on the simulator, and nothing named the missing Secret.)"""
    manifest = world.cluster_manifest("mo")
    manifest["spec"]["logService"]["sharedStorage"]["s3"]["secretRef"] = {"name": "s3-keys"}
    await world.apply(manifest)

    async def reported() -> dict[str, object] | None:
        logset = await world.get(r.LOGSETS, "mo")
        return logset if condition(logset, "ResolvedRefs").get("reason") == "SecretNotFound" else None

    logset = await eventually(reported, message="the LogSet names the missing Secret")
    assert (
        'Secret "s3-keys" (spec.sharedStorage.s3.secretRef)' in condition(logset, "ResolvedRefs")["message"]
    )

    async def waiting_pod() -> dict[str, object] | None:
        for pod in await world.pods(**{labels.INSTANCE: "mo", labels.COMPONENT: "LogSet"}):
            for status in pod.get("status", {}).get("containerStatuses") or []:
                if status.get("state", {}).get("waiting", {}).get("reason") == "CreateContainerConfigError":
                    return status
        return None

    status = await eventually(waiting_pod, message="a log pod waits for its environment")
    assert status["state"]["waiting"]["message"] == 'secret "s3-keys" not found'
    events = await world.kubectl("get", "events", "--field-selector", "reason=SecretNotFound", "-o", "yaml")
    assert "s3-keys" in events.stdout and "Warning" in events.stdout
    assert condition(await world.get(r.MATRIXONE_CLUSTERS, "mo"), "Ready").get("status") != "True"

    secret = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "s3-keys"},
        "stringData": {"AWS_ACCESS_KEY_ID": "id", "AWS_SECRET_ACCESS_KEY": "key"},
    }
    await world.apply(world.for_cluster(secret))
    await world.wait_settled(r.MATRIXONE_CLUSTERS, "mo", timeout=120)

    async def resolved() -> bool:
        return condition(await world.get(r.LOGSETS, "mo"), "ResolvedRefs").get("status") == "True"

    await eventually(resolved, message="the LogSet finds the Secret (its lookups are remembered 10 s)")
