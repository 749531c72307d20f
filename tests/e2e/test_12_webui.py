"""The web console: a WebUI next to a cluster comes up, logs in with the
cluster's own credential, and that credential is kept in Secrets only."""

from __future__ import annotations

import base64
import tomllib

from mo_operator.controllers.framework import resources as r
from mo_operator.matrixone import labels

from .harness import GROUP_VERSION, OperatorRunner, World, eventually


async def test_a_console_uses_the_clusters_credential_from_a_secret(
    world: World, operator: OperatorRunner
) -> None:
    await world.apply(world.cluster_manifest("mo"))
    await world.wait_settled(r.MATRIXONE_CLUSTERS, "mo")
    await world.apply(
        world.for_cluster(
            {
                "apiVersion": GROUP_VERSION,
                "kind": "WebUI",
                "metadata": {"name": "mo"},
                "spec": {"replicas": 1, "image": "matrixorigin/matrixone:2.0.0"},
            }
        )
    )
    await world.wait_settled(r.WEBUIS, "mo")
    service = await world.get(r.SERVICES, "mo-webui")
    assert service is not None and service["spec"]["ports"][0]["port"] == 8001
    pods = await world.pods(**{labels.INSTANCE: "mo", labels.COMPONENT: "WebUI"})
    assert len(pods) == 1
    volume = next(v for v in pods[0]["spec"]["volumes"] if v["name"] == "config")
    config = await world.get(r.SECRETS, volume["secret"]["secretName"])
    assert config is not None and config["immutable"] is True
    toml = tomllib.loads(base64.b64decode(config["data"]["config.toml"]).decode())
    credential = await world.get(r.SECRETS, "mo-credential")
    assert credential is not None
    assert toml["db"]["password"] == base64.b64decode(credential["data"]["password"]).decode()
    assert toml["db"]["host"] == "mo-tp-cn" and toml["db"]["port"] == 6001
    for cm in await world.list(r.CONFIGMAPS):
        assert toml["db"]["password"] not in str(cm.get("data")), (
            f"the password leaked into {cm['metadata']['name']}"
        )


async def test_a_cluster_with_a_console_makes_and_removes_its_webui(
    world: World, operator: OperatorRunner
) -> None:
    manifest = world.cluster_manifest("mo", webui={"replicas": 1})
    await world.apply(manifest)
    cluster = await world.wait_settled(r.MATRIXONE_CLUSTERS, "mo")
    webui = await world.get(r.WEBUIS, "mo")
    assert webui is not None and webui["metadata"]["ownerReferences"][0]["uid"] == cluster["metadata"]["uid"]
    assert cluster["status"]["webui"]["conditions"]
    del manifest["spec"]["webui"]
    await world.apply(manifest)

    async def gone() -> bool:
        return await world.get(r.WEBUIS, "mo") is None

    await eventually(gone, message="the console goes with the spec")
