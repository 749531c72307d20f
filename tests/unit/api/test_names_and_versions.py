"""Kubernetes name rules with apimachinery's messages
(``k8s.io/apimachinery/pkg/util/validation/validation.go``), and versions read like
upstream's ``semver.ParseTolerant`` (github.com/blang/semver/v4)."""

from __future__ import annotations

import pytest

from mo_operator.api.semver import image_tag, parse_tolerant
from mo_operator.api.validation.names import (
    dns1035_label,
    dns1123_label,
    dns1123_subdomain,
    fqdn,
    label_value,
    qualified_name,
)


def test_dns1123_subdomain() -> None:
    assert dns1123_subdomain("mo.example-1") == []
    assert dns1123_subdomain("a_b") == [
        "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must "
        "start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
        "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
    ]
    assert dns1123_subdomain("a" * 254)[0] == "must be no more than 253 characters"


def test_dns1123_label_says_dots_when_only_dots_are_wrong() -> None:
    assert dns1123_label("a.b") == ["must not contain dots"]
    assert dns1123_label("-a")[0].startswith("a lowercase RFC 1123 label must consist")
    assert dns1123_label("é") != []  # one character, two bytes: Go counts bytes and matches ASCII only


def test_dns1035_label_needs_a_leading_letter() -> None:
    assert dns1035_label("mo-1") == []
    assert dns1035_label("1mo") == [
        "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic "
        "character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for "
        "validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
    ]


def test_qualified_names_and_label_values() -> None:
    assert qualified_name("matrixorigin.io/cluster") == []
    assert qualified_name("/x") == ["prefix part must be non-empty"]
    assert qualified_name("a/b/c")[0].startswith("a qualified name must consist of alphanumeric characters")
    assert qualified_name("x/") == [
        "name part must be non-empty",
        "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
        "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
        "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
    ]
    assert label_value("") == [] and label_value("v1.2_3") == []
    assert label_value("a b")[0].startswith("a valid label must be an empty string or consist of")


def test_fully_qualified_domain_names() -> None:
    assert fqdn("cluster.local") == [] and fqdn("cluster.local.") == []
    assert fqdn("local") == ["should be a domain with at least two segments separated by dots"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1.2.3", (1, 2, 3)),
        ("v1.2.3", (1, 2, 3)),
        ("1.2", (1, 2, 0)),
        (" 2 ", (2, 0, 0)),
        ("01.02.03", (1, 2, 3)),
    ],
)
def test_tolerant_versions(text: str, expected: tuple[int, int, int]) -> None:
    v = parse_tolerant(text)
    assert v is not None and (v.major, v.minor, v.patch) == expected


@pytest.mark.parametrize("text", ["", "latest", "nightly-b3da04e0", "1.2-rc1", "1.2.3.4", "1.2.x", "1.2.3-"])
def test_not_versions(text: str) -> None:
    assert parse_tolerant(text) is None


def test_version_order_is_semver_precedence() -> None:
    order = [
        "1.0.0-alpha",
        "1.0.0-alpha.1",
        "1.0.0-alpha.beta",
        "1.0.0-beta.2",
        "1.0.0-beta.11",
        "1.0.0",
        "1.2.0",
    ]
    versions = [parse_tolerant(v) for v in order]
    assert all(v is not None for v in versions)
    assert sorted(versions) == versions  # type: ignore[type-var]
    assert parse_tolerant("1.0.0+build.1") == parse_tolerant("1.0.0")


def test_image_tags() -> None:
    assert image_tag("matrixorigin/matrixone:1.2.3") == "1.2.3"
    assert image_tag("localhost:5000/mo") == ""
    assert image_tag("registry:5000/mo:v2.0.0@sha256:abc") == "v2.0.0"
    assert image_tag("mo") == ""
