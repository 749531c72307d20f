"""Version parsing, ordering, features by version, images.

Parsing follows blang/semver ``ParseTolerant`` (what upstream uses) and ordering
follows semver.org 2.0.0 §11; feature rows are upstream's api/core/v1alpha1/semver_test.go.
"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mo_operator.api.base import parse
from mo_operator.api.common import PodSet
from mo_operator.matrixone.version import (
    DEFAULT_IMAGE_REPOSITORY,
    MOFeature,
    SemVer,
    component_image,
    default_image,
    has_feature,
    image_tag,
    is_downgrade,
    operator_version,
    parse_strict,
    parse_version,
    version_annotations,
    version_of,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1.2.3", "1.2.3"),
        ("v1.2.3", "1.2.3"),
        ("  v2.0.1  ", "2.0.1"),
        ("1.2", "1.2.0"),
        ("2", "2.0.0"),
        ("01.002.03", "1.2.3"),
        ("1.1.2-rc1", "1.1.2-rc1"),
        ("v1.2.0-alpha.1", "1.2.0-alpha.1"),
        ("v3.0.16-bda2d138a-2026-06-24", "3.0.16-bda2d138a-2026-06-24"),
        ("1.0.0+build.5", "1.0.0+build.5"),
        ("1.0.0-0.3.7", "1.0.0-0.3.7"),
    ],
)
def test_parse_tolerant_accepts(text: str, expected: str) -> None:
    version = parse_version(text)
    assert version is not None
    assert str(version) == expected


@pytest.mark.parametrize(
    "text",
    [
        "",
        "latest",
        "nightly-abc123",
        "1.2-rc1",
        "1.2.3.4",
        "1.2.x",
        "1.0.0-",
        "1.0.0-01",
        "1.0.0+",
        "1.0.0-a..b",
        "v",
    ],
)
def test_parse_tolerant_rejects(text: str) -> None:
    assert parse_version(text) is None


@pytest.mark.parametrize(
    "text",
    [
        "9" * 5000,
        "1." + "9" * 5000,
        "1.2.3-" + "9" * 5000,
        "18446744073709551616.0.0",
        "1.2.3-18446744073709551616",
    ],
)
def test_numbers_past_go_uint64_are_no_version(text: str) -> None:
    """Go's semver reads each number with ``strconv.ParseUint(s, 10, 64)``: a longer one
    is no version. (Python refuses to convert a string of thousands of digits at all, so a
    parser that tried raised: the webhook then answered an InternalError.)"""
    assert parse_version(text) is None
    assert parse_strict(text) is None


def test_the_largest_go_uint64_is_still_a_version() -> None:
    assert parse_strict("18446744073709551615.0.0-18446744073709551615") == SemVer(
        2**64 - 1, 0, 0, (2**64 - 1,)
    )


def test_strict_parse_requires_three_parts() -> None:
    assert parse_strict("1.2") is None
    assert parse_strict("v1.2.3") == SemVer(1, 2, 3)


def test_precedence_follows_semver_spec_example() -> None:
    """semver.org §11: 1.0.0-alpha < -alpha.1 < -alpha.beta < -beta < -beta.2 < -beta.11 < -rc.1 < 1.0.0."""
    chain = ["1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta", "1.0.0-beta.2"]
    chain += ["1.0.0-beta.11", "1.0.0-rc.1", "1.0.0", "1.0.1", "1.1.0", "2.0.0"]
    versions = [parse_strict(v) for v in chain]
    assert all(v is not None for v in versions)
    for a, b in itertools.pairwise(versions):
        assert a is not None and b is not None
        assert a < b and not b < a and a != b


def test_build_metadata_does_not_affect_equality() -> None:
    a, b = parse_version("1.0.0+a"), parse_version("1.0.0+b")
    assert a == b and hash(a) == hash(b)
    assert str(a) != str(b)


_identifier = st.from_regex(r"[0-9A-Za-z-]{1,5}", fullmatch=True).filter(
    lambda s: not (s.isdigit() and len(s) > 1 and s[0] == "0")
)
_versions = st.builds(
    lambda major, minor, patch, pre: parse_strict(
        f"{major}.{minor}.{patch}" + (f"-{'.'.join(pre)}" if pre else "")
    ),
    st.integers(0, 3),
    st.integers(0, 3),
    st.integers(0, 3),
    st.lists(_identifier, max_size=3),
)


@given(_versions, _versions, _versions)
def test_comparison_is_a_total_order(a: SemVer | None, b: SemVer | None, c: SemVer | None) -> None:
    assert a is not None and b is not None and c is not None
    assert [a < b, a == b, b < a].count(True) == 1
    if a <= b and b <= c:
        assert a <= c
    if a == b:
        assert hash(a) == hash(b)


@given(st.text())
def test_parsing_never_raises(text: str) -> None:
    result = parse_version(text)
    assert result is None or isinstance(result, SemVer)
    assert parse_strict(text) is None or isinstance(parse_strict(text), SemVer)


@given(_versions)
def test_printed_versions_parse_back_to_themselves(v: SemVer | None) -> None:
    assert v is not None
    assert parse_strict(str(v)) == v
    assert parse_version(str(v)) == v


@pytest.mark.parametrize(
    ("image", "tag"),
    [
        ("matrixorigin/matrixone:1.1.1", "1.1.1"),
        ("registry.example.com/matrixorigin/matrixone:latest", "latest"),
        ("matrixorigin/matrixone", ""),
        ("registry.example.com:5000/matrixorigin/matrixone:v1.0.0", "v1.0.0"),
        ("", ""),
        ("localhost:5000/mo", ""),
        ("mo:2.0.0@sha256:abcd", "2.0.0"),
    ],
)
def test_image_tag(image: str, tag: str) -> None:
    assert image_tag(image) == tag


def test_version_of_prefers_semantic_version_override() -> None:
    assert version_of({"image": "matrixorigin/matrixone:1.2.3"}) == SemVer(1, 2, 3)
    assert version_of({"image": "mo:nightly", "semanticVersion": "2.0.0"}) == SemVer(2, 0, 0)
    assert version_of({"image": "mo:1.2.3", "semanticVersion": "garbage"}) is None
    assert version_of({"image": "mo:latest"}) is None
    assert version_of({}) is None


@pytest.mark.parametrize(
    ("version", "feature", "expected"),
    [
        ("1.1.2", MOFeature.PIPELINE_INFO, True),
        ("1.1.3", MOFeature.PIPELINE_INFO, True),
        ("1.2.0", MOFeature.PIPELINE_INFO, True),
        ("2.0.0", MOFeature.PIPELINE_INFO, True),
        ("1.1.1", MOFeature.PIPELINE_INFO, False),
        ("v1.1.2-rc1", MOFeature.PIPELINE_INFO, True),
        ("v1.2.0-alpha.1", MOFeature.LOCK_MIGRATION, True),
        ("v1.2.2-woraround-something-else", MOFeature.LOCK_MIGRATION, True),
        ("2.0.1", MOFeature.LOCK_MIGRATION, True),
        ("1.1.9", MOFeature.LOCK_MIGRATION, False),
        ("2.0.0", MOFeature.DISCOVERY_FIXED, True),
        ("2.1.0", MOFeature.DISCOVERY_FIXED, True),
        ("3.0.16", MOFeature.DISCOVERY_FIXED, True),
        ("v3.0.16-bda2d138a-2026-06-24", MOFeature.DISCOVERY_FIXED, True),
        ("4.5.2", MOFeature.DISCOVERY_FIXED, True),
        ("1.2.0", MOFeature.DISCOVERY_FIXED, False),
        ("1.9.9", MOFeature.DISCOVERY_FIXED, False),
        ("3.0.0", MOFeature.PIPELINE_INFO, False),
        ("3.0.0", MOFeature.SESSION_SOURCE, False),
        ("3.0.0", MOFeature.LOCK_MIGRATION, False),
        ("3.0.0", MOFeature.SHARDING_MIGRATION, False),
        ("2.0.0", MOFeature.SHARDING_MIGRATION, True),
        ("1.2.9", MOFeature.SHARDING_MIGRATION, False),
    ],
)
def test_features_by_version(version: str, feature: MOFeature, expected: bool) -> None:
    assert has_feature(parse_version(version), feature) is expected


def test_unknown_version_has_no_feature() -> None:
    assert not any(has_feature(None, f) for f in MOFeature)


@pytest.mark.parametrize(
    ("current", "desired", "downgrade"),
    [
        ("1.2.0", "1.1.9", True),
        ("2.0.0", "2.0.0-rc1", True),
        ("1.2.0", "1.2.1", False),
        ("1.2.0", "1.2.0", False),
        ("1.2.0", "latest", False),
        ("latest", "1.0.0", False),
    ],
)
def test_is_downgrade(current: str, desired: str, downgrade: bool) -> None:
    assert is_downgrade(parse_version(current), parse_version(desired)) is downgrade


def test_default_and_component_images() -> None:
    assert DEFAULT_IMAGE_REPOSITORY == "matrixorigin/matrixone"
    assert default_image("1.2.3") == "matrixorigin/matrixone:1.2.3"
    assert default_image("1.2.3", "registry.local/mo") == "registry.local/mo:1.2.3"
    cluster = {"version": "2.0.1", "imageRepository": "registry.local/mo"}
    assert component_image({}, cluster) == "registry.local/mo:2.0.1"
    assert component_image({"image": "mine:3"}, cluster) == "mine:3"
    assert component_image({"image": ""}, {"version": "1.0.0"}) == "matrixorigin/matrixone:1.0.0"


def pod_set(**fields: str) -> PodSet:
    return parse(PodSet, {"replicas": 1, **fields})


def test_operator_version_and_annotations() -> None:
    assert operator_version(pod_set()) == SemVer(1, 2, 0)
    assert operator_version(pod_set(operatorVersion="bad")) == SemVer(1, 2, 0)
    assert operator_version(pod_set(operatorVersion="1.3.0")) == SemVer(1, 3, 0)
    assert version_annotations(pod_set(image="mo:v1.2.3")) == {"matrixorigin.io/semantic-version": "1.2.3"}
    assert version_annotations(pod_set(image="mo:latest", operatorVersion="1.3.0")) == {
        "matrixorigin.io/operator-version": "1.3.0"
    }


@pytest.mark.parametrize("text", ["nightly-20261120", "latest", "2.0-hotfix", "sha256:abc", ""])
def test_an_unparsable_version_has_no_gated_feature(text: str) -> None:
    """Upstream's unknown version: no feature (``GetSemVer`` not ok, ``MinimalVersion``)."""
    spec = {"image": f"matrixorigin/matrixone:{text}"}
    assert version_of(spec) is None
    assert not any(has_feature(version_of(spec), f) for f in MOFeature)
    assert version_annotations(pod_set(**spec)) == {}
