"""Fixtures for the runtime's integration tests: API clients for the
embedded control plane with short retry backoffs (a test waits seconds, not
the minutes a production backoff may take), and informer factories tuned
the same way."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from lightkube.config.kubeconfig import KubeConfig

from mo_devkit.localcluster.controlplane import ControlPlane
from mo_operator.kube.cache.informer_factory import InformerFactory
from mo_operator.kube.client.client import ApiClient
from mo_operator.kube.flowcontrol.backoff import Backoff

ClientFactory = Callable[..., ApiClient]


def fast_backoff() -> Backoff:
    return Backoff(0.05, 0.5, 2.0, jitter=0.5)


def make_client(cp: ControlPlane, name: str, **kw: Any) -> ApiClient:
    """A client whose requests show up in the server's log as ``name`` (its
    field manager and, unless given, its User-Agent)."""
    kw.setdefault("user_agent", name)
    kw.setdefault("retry_backoff", fast_backoff)
    kw.setdefault("qps", None)
    return ApiClient(KubeConfig.from_dict(cp.server.kubeconfig()), field_manager=name, **kw)


def make_informers(client: ApiClient, **kw: Any) -> InformerFactory:
    kw.setdefault("backoff", fast_backoff)
    kw.setdefault("stall_timeout", 1.0)
    return InformerFactory(client, **kw)


@pytest.fixture
async def clients(control_plane: ControlPlane) -> AsyncIterator[ClientFactory]:
    """``clients(name, **kw)`` makes an ApiClient for the control plane; all
    are closed after the test."""
    made: list[ApiClient] = []

    def factory(name: str, **kw: Any) -> ApiClient:
        c = make_client(control_plane, name, **kw)
        made.append(c)
        return c

    yield factory
    for c in made:
        await c.close()
