"""Shared fixtures: an embedded control plane per test (fast to start), and
kubectl bound to it (the test kit's ``Kubectl``, importable from here)."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from mo_devkit.localcluster.controlplane import ControlPlane
from mo_devkit.testing.kubectl import Kubectl

__all__ = ["Kubectl"]


@pytest.fixture
async def control_plane(tmp_path: Path) -> AsyncIterator[ControlPlane]:
    """An API server only (no workload simulator), for API semantics tests."""
    cp = ControlPlane(history_size=200, simulate_workloads=False)
    await cp.start(tmp_path / "kubeconfig")
    try:
        yield cp
    finally:
        await cp.stop()


@pytest.fixture
async def kubectl(control_plane: ControlPlane) -> Kubectl:
    assert control_plane.kubeconfig_path is not None
    return Kubectl(control_plane.kubeconfig_path)


@pytest.fixture
async def client(control_plane: ControlPlane) -> AsyncIterator[Any]:
    c = control_plane.client()
    try:
        yield c
    finally:
        await c.close()


def _start_real_control_plane() -> Any:
    """envtest's convention: ``KUBEBUILDER_ASSETS`` names real control-plane
    binaries, which the suite starts itself and the e2e scenarios run against,
    as ``MO_TEST_KUBECONFIG`` (which names an existing cluster instead).

    Started while this conftest loads, before the e2e harness reads the
    variable; stopped, with its data removed, when the session ends."""
    from mo_devkit.localcluster.envtest import start_from_environment

    return start_from_environment("MO_TEST_KUBECONFIG")


_REAL_CONTROL_PLANE = _start_real_control_plane()


def pytest_report_header(config: pytest.Config) -> str:
    target = os.environ.get("MO_TEST_KUBECONFIG")
    if _REAL_CONTROL_PLANE is not None:
        return f"control plane: kube-apiserver started from KUBEBUILDER_ASSETS at {_REAL_CONTROL_PLANE.url}"
    if target:
        return f"control plane: the cluster MO_TEST_KUBECONFIG names ({target})"
    return "control plane: embedded"


def pytest_unconfigure(config: pytest.Config) -> None:
    if _REAL_CONTROL_PLANE is not None:
        _REAL_CONTROL_PLANE.stop()
        os.environ.pop("MO_TEST_KUBECONFIG", None)
