"""The webhook configurations the operator generates: one webhook per kind at
upstream's path, failurePolicy Fail, CREATE and UPDATE, sideEffects None,
AdmissionReview v1, a Service or URL client config with the CA; and the choice of
kinds (a defaulting webhook exactly where defaulting does more than the CRD schema
already does in the API server)."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from api.conftest import EXAMPLES
from api.fuzzing import BASES

from mo_devkit.localcluster.apiserver.schema.defaulting import apply_defaults
from mo_operator.api.defaulting import default
from mo_operator.api.kinds import KINDS
from mo_operator.api.normalize import kind_schema, prune_nulls
from mo_operator.webhooks import (
    DEFAULTED_KINDS,
    VALIDATED_KINDS,
    ServiceRef,
    configuration_names,
    route,
    webhook_configurations,
)

from .conftest import DEFAULT_ARGS

Obj = dict[str, Any]
CA = b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"


def _as_the_api_server_defaults(kind: str, obj: Obj) -> Obj:
    """What kube-apiserver stores without any webhook: nulls pruned, schema defaults."""
    schema = kind_schema(KINDS[kind].model)
    out: Obj = apply_defaults(prune_nulls(obj, schema), schema)
    return out


def test_defaulting_webhooks_are_exactly_where_defaulting_adds_something() -> None:
    """A kind left out of DEFAULTED_KINDS would lose its defaults; a kind put in for
    nothing costs every write a round trip. Either way this fails. (ProxySet's only
    rule is the operator's configured default serviceArgs, as upstream's.)"""
    for kind in KINDS:
        adds = [
            name
            for name, obj in EXAMPLES.items()
            if obj["kind"] == kind
            and default(kind, obj, default_args=DEFAULT_ARGS) != _as_the_api_server_defaults(kind, obj)
        ]
        assert bool(adds) == (kind in DEFAULTED_KINDS), (kind, adds)
    assert set(VALIDATED_KINDS) == set(KINDS)
    assert set(BASES) == set(KINDS), "every kind has an example"


SCALED = ("CNSet", "ProxySet")
"""The sets a cluster owns that ``kubectl scale`` reaches, validated through ``/scale`` too."""


def test_the_generated_configurations_for_a_service() -> None:
    mutating, validating = webhook_configurations(service=ServiceRef(), ca_bundle=CA)
    assert (mutating["kind"], validating["kind"]) == (
        "MutatingWebhookConfiguration",
        "ValidatingWebhookConfiguration",
    )
    assert (mutating["metadata"]["name"], validating["metadata"]["name"]) == configuration_names()
    assert mutating["metadata"]["labels"]["app.kubernetes.io/name"] == "mo-operator"
    for config, kinds, prefix in (
        (mutating, DEFAULTED_KINDS, "mutate"),
        (validating, VALIDATED_KINDS, "validate"),
    ):
        assert [h["name"] for h in config["webhooks"]] == [
            f"{prefix[0]}{k.lower()}.core.matrixorigin.io" for k in kinds
        ]
        for kind, hook in zip(kinds, config["webhooks"], strict=True):
            assert hook["failurePolicy"] == "Fail"
            assert hook["sideEffects"] == "None"
            assert hook["admissionReviewVersions"] == ["v1"]
            assert hook["timeoutSeconds"] == 10
            assert hook["clientConfig"] == {
                "service": {
                    "name": "mo-operator-webhook",
                    "namespace": "mo-operator-system",
                    "path": f"/{prefix}-core-matrixorigin-io-v1alpha1-{kind.lower()}",
                    "port": 443,
                },
                "caBundle": base64.b64encode(CA).decode(),
            }
            assert hook["rules"] == [
                {
                    "apiGroups": ["core.matrixorigin.io"],
                    "apiVersions": ["v1alpha1"],
                    "operations": ["CREATE", "UPDATE"],
                    "resources": [KINDS[kind].plural]
                    + ([f"{KINDS[kind].plural}/scale"] if prefix == "validate" and kind in SCALED else []),
                    "scope": "Cluster" if kind == "Backup" else "Namespaced",
                }
            ]
            assert "namespaceSelector" not in hook


def test_a_url_client_config_for_an_operator_outside_the_cluster() -> None:
    _, validating = webhook_configurations(
        url_base="https://127.0.0.1:9443/", ca_bundle=CA, name_prefix="dev", timeout_seconds=5
    )
    assert validating["metadata"]["name"] == "dev-validating"
    hook = validating["webhooks"][0]
    assert hook["clientConfig"] == {
        "url": "https://127.0.0.1:9443" + route("MatrixOneCluster").validate_path,
        "caBundle": base64.b64encode(CA).decode(),
    }
    assert hook["timeoutSeconds"] == 5


def test_without_a_ca_the_configurations_are_the_install_manifests_kind() -> None:
    for config in webhook_configurations(service=ServiceRef(), ca_bundle=None):
        assert all("caBundle" not in h["clientConfig"] for h in config["webhooks"])


def test_watched_namespaces_select_namespaced_kinds_only() -> None:
    _, validating = webhook_configurations(service=ServiceRef(), ca_bundle=CA, namespaces=["a", "b"])
    for hook in validating["webhooks"]:
        if hook["name"] == "vbackup.core.matrixorigin.io":
            assert "namespaceSelector" not in hook  # cluster-scoped: never skipped anyway
        else:
            assert hook["namespaceSelector"] == {
                "matchExpressions": [
                    {"key": "kubernetes.io/metadata.name", "operator": "In", "values": ["a", "b"]}
                ]
            }


@pytest.mark.parametrize(
    "url", ["http://127.0.0.1:9443", "https://", "https://u:p@host", "https://h/x?q=1", "https://h/#f"]
)
def test_urls_the_api_server_would_refuse_are_refused(url: str) -> None:
    with pytest.raises(ValueError):
        webhook_configurations(url_base=url, ca_bundle=CA)


def test_exactly_one_target() -> None:
    with pytest.raises(ValueError):
        webhook_configurations(ca_bundle=CA)
    with pytest.raises(ValueError):
        webhook_configurations(service=ServiceRef(), url_base="https://h", ca_bundle=CA)
