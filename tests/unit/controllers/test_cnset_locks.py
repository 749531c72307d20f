"""Which CNs have their lock tables moved before they stop: upstream's ``LockMigration``
gate (1.2.x and 2.x), read from the version the pod runs."""

from __future__ import annotations

from typing import Any

import pytest

from mo_operator.api.base import parse
from mo_operator.api.common import PodSet
from mo_operator.controllers.cnset.locks import migrates_locks
from mo_operator.matrixone import labels


def pod_set(**fields: Any) -> PodSet:
    return parse(PodSet, {"replicas": 1, **fields})


def _pod(version: str | None = None) -> dict[str, Any]:
    annotations = {labels.SEMANTIC_VERSION: version} if version else {}
    return {"metadata": {"name": "tp-cn-0", "annotations": annotations}}


@pytest.mark.parametrize(
    ("version", "migrates"),
    [
        ("1.1.3", False),
        ("1.2.0", True),
        ("1.2.3", True),
        ("1.3.0", True),
        ("2.0.0", True),
        ("2.2.1", True),
        ("3.0.0", False),
        ("0.8.1", False),
    ],
)
def test_the_version_gate_is_upstreams(version: str, migrates: bool) -> None:
    assert migrates_locks(_pod(version), pod_set()) is migrates


def test_the_pods_own_version_decides_during_a_roll() -> None:
    spec = pod_set(image="matrixorigin/matrixone:2.0.0")
    assert not migrates_locks(_pod("1.1.3"), spec), "an old pod leaves on its own version's terms"
    assert migrates_locks(_pod(), spec), "without the annotation, the spec's version"


def test_an_unknown_version_moves_no_lock() -> None:
    assert not migrates_locks(_pod(), pod_set(image="matrixorigin/matrixone:latest"))
