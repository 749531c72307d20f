"""Store UUIDs, the HAKeeper bootstrap decision and the xxhash behind the deployment ID."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest
from xxhash import xxh64_intdigest as xxh64

from mo_operator.matrixone import bootstrap, identity
from mo_operator.matrixone.config.log import deployment_id


def test_ordinal_uuids_follow_upstream_scheme() -> None:
    assert identity.log_store_uuid(0) == "00000000-0000-0000-0000-000000000000"
    assert identity.log_store_uuid(11) == "00000000-0000-0000-0000-00000000000b"
    assert identity.tn_store_uuid(0) == "00000000-0000-0000-0000-100000000000"
    assert identity.tn_store_uuid(255) == "00000000-0000-0000-0000-1000000000ff"


def test_cn_uuid_matches_upstream_test_vector() -> None:
    """Vector from upstream api/core/v1alpha1/common_helpers_test.go (TestGetCNPodUUID)."""
    assert identity.cn_store_uuid("default-cn-0", "default", "test") == "64396564-3061-3238-3164-363835623561"


@pytest.mark.skipif(
    any(shutil.which(t) is None for t in ("sh", "sha256sum", "od", "awk")), reason="needs coreutils"
)
@pytest.mark.parametrize("address", ["mo-tp-cn-0.mo-tp-cn-headless.ns.svc", "p-proxy-1.default.svc", "x"])
def test_dns_uuid_equals_the_shell_pipeline(address: str) -> None:
    """The start script computes the same UUID with sha256sum | od -x | awk."""
    pipeline = 'echo "$1" | sha256sum | od -x | head -1 | awk \'{OFS="-"; print $2$3,$4,$5,$6,$7$8$9}\''
    out = subprocess.run(["sh", "-c", pipeline, "sh", address], capture_output=True, text=True, check=True)
    assert identity.dns_store_uuid(address) == out.stdout.strip()


def test_bootstrap_plan_and_members() -> None:
    plan = bootstrap.plan_bootstrap(3)
    assert [(r.ordinal, r.replica_id) for r in plan] == [(0, 131072), (1, 131073), (2, 131074)]
    assert bootstrap.init_hakeeper_members(plan[:2]) == [
        "131072:00000000-0000-0000-0000-000000000000",
        "131073:00000000-0000-0000-0000-000000000001",
    ]
    with pytest.raises(bootstrap.BootstrapError):
        bootstrap.plan_bootstrap(0)
    with pytest.raises(bootstrap.BootstrapError):
        bootstrap.plan_bootstrap(bootstrap.REPLICA_ID_END)


def test_bootstrap_annotation_is_upstream_json_and_round_trips() -> None:
    plan = bootstrap.plan_bootstrap(2)
    encoded = bootstrap.encode_annotation(plan)
    assert json.loads(encoded) == [{"ordinal": 0, "replicaId": 131072}, {"ordinal": 1, "replicaId": 131073}]
    assert " " not in encoded
    assert bootstrap.decode_annotation(encoded) == plan
    # a decision recorded by upstream after a manual edit keeps its ordinals
    assert bootstrap.decode_annotation('[{"ordinal":4,"replicaId":131080}]') == (
        bootstrap.BootstrapReplica(4, 131080),
    )


@pytest.mark.parametrize(
    "bad", ["", "{}", "[]", '[{"ordinal":0}]', "not json", '[{"ordinal":"x","replicaId":1}]']
)
def test_bad_bootstrap_annotation_is_an_error(bad: str) -> None:
    with pytest.raises(bootstrap.BootstrapError):
        bootstrap.decode_annotation(bad)


def test_default_log_shard_replicas() -> None:
    assert [bootstrap.default_log_shard_replicas(n) for n in (1, 2, 3, 5)] == [1, 1, 3, 3]


def _pattern(n: int) -> bytes:
    return bytes(i % 251 for i in range(n))


@pytest.mark.parametrize(
    ("data", "digest"),
    [
        # Published XXH64 (seed 0) vectors, as produced by the reference C implementation.
        (b"", 0xEF46DB3751D8E999),
        (b"a", 0xD24EC4F1A98C6E5B),
        (b"abc", 0x44BC2CF5AD770999),
        (b"message digest", 0x066ED728FCEEB3BE),
        (b"abcdefghijklmnopqrstuvwxyz", 0xCFE1F278FA89835C),
        (b"1234567890" * 8, 0xE04A477F19EE145D),
        (_pattern(31), 0xC346D2B59B4D8EE1),
        (_pattern(32), 0xCBF59C5116FF32B4),
        (_pattern(65), 0xC31EB63B2AE4465B),
        (_pattern(1000), 0xF306F04AA88B54D3),
    ],
)
def test_xxh64_reference_vectors(data: bytes, digest: int) -> None:
    assert xxh64(data) == digest


def test_deployment_id_is_xxhash_shifted_to_fit_a_toml_integer() -> None:
    assert deployment_id("abc") == 0x44BC2CF5AD770999 >> 1
    assert all(0 <= deployment_id(n) < 2**63 for n in ("mo", "a" * 63, "x-y-z"))
