"""How the operator registers its webhooks: a full server-side apply of both
configurations (URL or Service client config) that is idempotent, or the CA
written into configurations the install manifests created, leaving the rest of
them as installed."""

from __future__ import annotations

import base64
import copy
from pathlib import Path

from conftest import Kubectl
from mo_operator.kube.webhook.serving_certs import GeneratedCerts
from mo_operator.webhooks import (
    FIELD_MANAGER,
    configuration_names,
    inject_ca_bundle,
    install_webhook_configurations,
)
from mo_operator.webhooks.configurations import MUTATING_CONFIGURATION, VALIDATING_CONFIGURATION

from .conftest import Webhooks, example_files

DEPLOY_WEBHOOKS = Path(__file__).resolve().parents[3] / "deploy" / "operator" / "60-webhooks.yaml"


async def test_installing_again_writes_nothing(webhooks: Webhooks) -> None:
    before = webhooks.configurations
    assert [c["metadata"]["name"] for c in before] == list(configuration_names())
    again = await install_webhook_configurations(
        webhooks.client,
        url_base=f"https://127.0.0.1:{webhooks.server.port}",
        ca_bundle=webhooks.certs.ca_bundle,
    )
    assert [c["metadata"]["resourceVersion"] for c in again] == [
        c["metadata"]["resourceVersion"] for c in before
    ]
    managers = {m["manager"] for c in again for m in c["metadata"]["managedFields"]}
    assert managers == {FIELD_MANAGER}


async def test_a_new_ca_reaches_every_webhook_and_a_dead_webhook_fails_closed(
    webhooks: Webhooks, kubectl: Kubectl
) -> None:
    """After the CA changes, only configurations carrying the new one let objects in;
    with the server gone, failurePolicy Fail refuses writes instead of storing
    undefaulted, unvalidated objects."""
    other = GeneratedCerts(["127.0.0.1"])
    await install_webhook_configurations(
        webhooks.client, url_base=f"https://127.0.0.1:{webhooks.server.port}", ca_bundle=other.ca_bundle
    )
    logset = str(example_files()["logset"])
    result = await kubectl.run("apply", "-f", logset, check=False)
    assert result.returncode != 0 and 'failed calling webhook "mlogset.core.matrixorigin.io"' in result.stderr
    await install_webhook_configurations(
        webhooks.client,
        url_base=f"https://127.0.0.1:{webhooks.server.port}",
        ca_bundle=webhooks.certs.ca_bundle,
    )
    await kubectl.run("apply", "-f", logset)
    await webhooks.server.stop()
    result = await kubectl.run("apply", "-f", str(example_files()["cnset"]), check=False)
    assert result.returncode != 0 and 'failed calling webhook "mcnset.core.matrixorigin.io"' in result.stderr


async def test_the_ca_is_injected_into_the_installed_manifests_only(
    webhooks: Webhooks, kubectl: Kubectl
) -> None:
    """The in-cluster start-up with the plain manifests (or the chart) in place."""
    client = webhooks.client
    pairs = list(zip((MUTATING_CONFIGURATION, VALIDATING_CONFIGURATION), configuration_names(), strict=True))
    for resource, name in pairs:
        await client.delete(resource, name)
    await kubectl.run("apply", "-f", str(DEPLOY_WEBHOOKS))
    foreign = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": "someone-else", "labels": {"app.kubernetes.io/name": "other"}},
        "webhooks": [
            {
                "name": "other.example.com",
                "sideEffects": "None",
                "admissionReviewVersions": ["v1"],
                "clientConfig": {"url": "https://127.0.0.1:1/x"},
                "rules": [
                    {
                        "apiGroups": ["example.com"],
                        "apiVersions": ["v1"],
                        "operations": ["CREATE"],
                        "resources": ["x"],
                    }
                ],
            }
        ],
    }
    await client.apply(foreign, resource=VALIDATING_CONFIGURATION)
    installed = [await client.get(resource, name) for resource, name in pairs]

    ca = webhooks.certs.ca_bundle
    assert await inject_ca_bundle(client, ca) == list(configuration_names())
    encoded = base64.b64encode(ca).decode()
    for (resource, name), before in zip(pairs, installed, strict=True):
        after = await client.get(resource, name)
        expected = copy.deepcopy(before["webhooks"])
        for hook in expected:
            hook["clientConfig"]["caBundle"] = encoded
        assert after["webhooks"] == expected, "only the caBundle changed"
    foreign_hook = (await client.get(VALIDATING_CONFIGURATION, "someone-else"))["webhooks"][0]
    assert "caBundle" not in foreign_hook["clientConfig"], "configurations without our label are not ours"
    assert await inject_ca_bundle(client, ca) == [], "the same CA again writes nothing"
    # Re-applying the manifests (which set no caBundle) keeps the CA.
    await kubectl.run("apply", "-f", str(DEPLOY_WEBHOOKS))
    again = await client.get(MUTATING_CONFIGURATION, configuration_names()[0])
    assert {h["clientConfig"].get("caBundle") for h in again["webhooks"]} == {encoded}
