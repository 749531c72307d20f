"""BucketClaims are indexed by their path's unique id: ``Caches.list`` with that label
is a lookup, and answers what a pass over every cached claim would answer."""

from __future__ import annotations

from typing import Any

import pytest

from mo_operator.controllers.framework import resources as r
from mo_operator.controllers.steps.bucketclaims import claims_of_path
from mo_operator.kube.cache.cache import Store
from mo_operator.matrixone import buckets, labels

from .test_env import build, obj, put

S3_A = {"path": "bucket/a"}
S3_B = {"path": "bucket/b", "endpoint": "http://minio:9000"}


def claim(name: str, namespace: str, s3: dict[str, Any] | None, **more_labels: str) -> dict[str, Any]:
    found = {**more_labels}
    if s3 is not None:
        found[labels.BUCKET_UNIQUE_ID] = buckets.unique_id(s3)
    return obj("BucketClaim", name, namespace, meta={"labels": found})


def scan(caches: Any, namespace: str | None, match: dict[str, str]) -> list[str]:
    """What a pass over every cached claim finds."""
    return sorted(
        f"{o['metadata']['namespace']}/{o['metadata']['name']}"
        for o in caches.list(r.BUCKETCLAIMS, namespace)
        if all((o["metadata"].get("labels") or {}).get(k) == v for k, v in match.items())
    )


def names(found: list[Any]) -> list[str]:
    return sorted(f"{o['metadata']['namespace']}/{o['metadata']['name']}" for o in found)


@pytest.mark.parametrize("namespaces", [(), ("a", "b")], ids=["all", "scoped"])
def test_claims_of_a_path_are_found_by_index_in_every_namespace(
    namespaces: tuple[str, ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    caches, _ = build(namespaces)
    put(
        caches,
        r.BUCKETCLAIMS,
        claim("bucket-1", "a", S3_A, **{labels.INSTANCE: "mo"}),
        claim("bucket-2", "b", S3_A),
        claim("bucket-3", "a", S3_B),
        claim("old", "b", None),
    )
    uid_a = buckets.unique_id(S3_A)
    cases: list[tuple[str | None, dict[str, str]]] = [
        (None, {buckets.UNIQUE_ID: uid_a}),
        ("a", {buckets.UNIQUE_ID: uid_a}),
        ("b", {buckets.UNIQUE_ID: uid_a}),
        ("c", {buckets.UNIQUE_ID: uid_a}),
        (None, {buckets.UNIQUE_ID: uid_a, labels.INSTANCE: "mo"}),
        (None, {buckets.UNIQUE_ID: buckets.unique_id(S3_B)}),
        (None, {buckets.UNIQUE_ID: "no-such-path"}),
    ]
    expected = [scan(caches, ns, match) for ns, match in cases]
    assert expected[0] == ["a/bucket-1", "b/bucket-2"]

    def refuse(*_a: Any, **_k: Any) -> Any:
        raise AssertionError("a pass over the cache where an index lookup was due")

    monkeypatch.setattr(Store, "list", refuse)
    assert [names(caches.list(r.BUCKETCLAIMS, ns, match)) for ns, match in cases] == expected
    assert names(claims_of_path(caches, S3_A)) == ["a/bucket-1", "b/bucket-2"]
    assert names(claims_of_path(caches, S3_B)) == ["a/bucket-3"]


def test_the_index_follows_changes() -> None:
    caches, _ = build()
    put(caches, r.BUCKETCLAIMS, claim("bucket-1", "a", S3_A))
    assert names(claims_of_path(caches, S3_A)) == ["a/bucket-1"]
    put(caches, r.BUCKETCLAIMS, claim("bucket-1", "a", S3_B))  # relabelled (a new path)
    assert claims_of_path(caches, S3_A) == []
    assert names(claims_of_path(caches, S3_B)) == ["a/bucket-1"]
    informer = caches.informers(r.BUCKETCLAIMS)[0]
    informer.store.remove("a/bucket-1")
    assert claims_of_path(caches, S3_B) == []
