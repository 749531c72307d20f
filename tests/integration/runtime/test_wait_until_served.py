"""Waiting for the API server to serve what the informers will watch, from its
discovery documents: on the embedded server and, when ``MO_TEST_KUBECONFIG``
names one, on the real kube-apiserver (whose discovery the embedded one
imitates). A CRD of a group of the test's own stands for ours."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
from collections.abc import AsyncIterator

import pytest

from mo_devkit.localcluster.controlplane import ControlPlane
from mo_operator.kube.client.client import ApiClient
from mo_operator.kube.client.discovery import unserved, wait_until_served
from mo_operator.kube.client.resource import Resource
from mo_operator.kube.meta.errors import ApiError

from .conftest import make_client
from .ledger import eventually

CRDS = Resource("apiextensions.k8s.io", "v1", "CustomResourceDefinition", "customresourcedefinitions", False)
PODS = Resource("", "v1", "Pod", "pods", True)
NO_SUCH_APPS_KIND = Resource("apps", "v1", "Nope", "nopes", True)


def widgets(group: str) -> Resource:
    return Resource(group, "v1", "Widget", "widgets", True)


def widget_crd(group: str) -> dict[str, object]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"widgets.{group}"},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"kind": "Widget", "plural": "widgets", "singular": "widget", "listKind": "WidgetList"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
                    },
                }
            ],
        },
    }


@pytest.fixture(params=["embedded", "real"])
async def api(request: pytest.FixtureRequest) -> AsyncIterator[ApiClient]:
    if request.param == "embedded":
        plane = ControlPlane(simulate_workloads=False)
        await plane.start()
        client = make_client(plane, "discovery-test")
        try:
            yield client
        finally:
            await client.close()
            await plane.stop()
        return
    kubeconfig = os.environ.get("MO_TEST_KUBECONFIG")
    if not kubeconfig:
        pytest.skip("needs a real API server: MO_TEST_KUBECONFIG (or KUBEBUILDER_ASSETS)")
    client = ApiClient.from_kubeconfig(kubeconfig, field_manager="discovery-test", qps=None)
    try:
        yield client
    finally:
        await client.close()


@pytest.fixture
async def group(api: ApiClient) -> AsyncIterator[str]:
    """A group no server serves yet; its CRD (if a test made it) is deleted afterwards."""
    name = f"t{secrets.token_hex(3)}.discovery.test"
    yield name
    with contextlib.suppress(ApiError):
        await api.delete(CRDS, f"widgets.{name}")


async def test_unserved_names_what_discovery_does_not_list(api: ApiClient, group: str) -> None:
    """An unknown kind of a served group version, and a whole unknown group version."""
    missing = await unserved(api, [PODS, NO_SUCH_APPS_KIND, widgets(group)])
    assert sorted(map(str, missing)) == sorted(["nopes.apps", f"widgets.{group}"])


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


async def test_the_wait_says_once_what_is_missing_and_ends_when_it_is_served(
    api: ApiClient, group: str, caplog: pytest.LogCaptureFixture
) -> None:
    clock = Clock()
    polls = api.rest.requests_made

    def said() -> list[str]:
        return [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]

    with caplog.at_level(logging.INFO, logger="mo_operator.kube.client.discovery"):
        waiting = asyncio.create_task(
            wait_until_served(
                api,
                [PODS, widgets(group)],
                explain=lambda missing: "missing: " + ", ".join(map(str, missing)),
                poll_seconds=0.02,
                remind_seconds=60.0,
                clock=clock,
            )
        )
        try:
            start = polls["get", "discovery"]
            await eventually(lambda: polls["get", "discovery"] >= start + 20, 30, "twenty discovery requests")
            assert said() == [f"missing: widgets.{group}"], "said once, not at each poll"
            clock.now += 61
            await eventually(lambda: len(said()) == 2, 30, "the reminder a minute later")
            await api.create(CRDS, widget_crd(group))
            await asyncio.wait_for(waiting, 30)
        finally:
            waiting.cancel()
            await asyncio.gather(waiting, return_exceptions=True)
    assert "now serves every resource" in caplog.records[-1].getMessage()
