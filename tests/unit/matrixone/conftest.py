"""Specs shaped like the CRDs' JSON, shared by the config tests."""

from __future__ import annotations

from typing import Any

import pytest

from mo_operator.matrixone.discovery import HAKeeperEndpoint, logset_endpoint


@pytest.fixture
def s3_storage() -> dict[str, Any]:
    return {"s3": {"path": "my-bucket/clusters/mo", "region": "eu-west-1"}}


@pytest.fixture
def minio_storage() -> dict[str, Any]:
    return {"s3": {"type": "minio", "path": "/bucket/", "endpoint": "http://minio.minio:9000"}}


@pytest.fixture
def fs_storage() -> dict[str, Any]:
    return {"fileSystem": {"path": "/mnt/nfs/mo"}}


@pytest.fixture
def endpoint() -> HAKeeperEndpoint:
    return logset_endpoint("mo", "ns", [0, 1, 2])


@pytest.fixture
def log_spec(s3_storage: dict[str, Any]) -> dict[str, Any]:
    return {
        "replicas": 3,
        "image": "matrixorigin/matrixone:1.2.3",
        "sharedStorage": s3_storage,
        "volume": {"size": "10Gi"},
        "initialConfig": {"logShards": 1, "dnShards": 1, "logShardReplicas": 3},
    }
