"""The default ``serviceArgs`` of the Go operator's ConfigMap reach the defaulting
webhook: a set that sets none gets its component's, one that sets its own keeps
them (upstream: "when serviceArgs is empty, copy the defaults")."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest
from api.conftest import example

from mo_operator.cli.operator_config import load_operator_config
from mo_operator.kube.webhook.server import WebhookServer
from mo_operator.kube.webhook.serving_certs import GeneratedCerts
from mo_operator.webhooks import register

from .conftest import Served


@pytest.fixture
async def configured(tmp_path: Path) -> AsyncIterator[Served]:
    (tmp_path / "defaultArgs").write_text("cn: [-debug-http=:6060]\nproxy: [-p]\n")
    config = load_operator_config(tmp_path)
    certs = GeneratedCerts(["127.0.0.1"])
    server = WebhookServer(certs, host="127.0.0.1", port=0)
    register(server, default_args=config.default_args)
    await server.start()
    try:
        async with aiohttp.ClientSession() as session:
            yield Served(server, certs, session)
    finally:
        await server.stop()


async def test_a_cnset_without_service_args_gets_the_configured_ones(configured: Served) -> None:
    cnset = example("cnset")
    cnset["spec"].pop("serviceArgs", None)
    _, defaulted = await configured.mutate("CNSet", "CREATE", cnset)
    assert defaulted["spec"]["serviceArgs"] == ["-debug-http=:6060"]


async def test_own_service_args_are_kept(configured: Served) -> None:
    cnset = example("cnset")
    cnset["spec"]["serviceArgs"] = ["-mine"]
    _, defaulted = await configured.mutate("CNSet", "CREATE", cnset)
    assert defaulted["spec"]["serviceArgs"] == ["-mine"]


async def test_a_component_without_configured_args_gets_none(configured: Served) -> None:
    dnset = example("dnset")
    dnset["spec"].pop("serviceArgs", None)
    _, defaulted = await configured.mutate("DNSet", "CREATE", dnset)
    assert "serviceArgs" not in defaulted["spec"]
