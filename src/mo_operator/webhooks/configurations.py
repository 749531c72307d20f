"""The MutatingWebhookConfiguration and ValidatingWebhookConfiguration that send
our kinds to the operator, and the two ways the operator writes them.

* :func:`install_webhook_configurations` server-side applies both whole objects,
  pointing at a Service (in-cluster) or at a URL (an operator running outside the
  cluster, e.g. ``https://127.0.0.1:9443``), with the operator's own CA as
  ``caBundle``. For a start-up without install manifests: ``mo-operator run``
  against a development cluster, tests, the demo.
* :func:`inject_ca_bundle` writes only the ``caBundle`` of every webhook of the
  configurations installed by the plain manifests or the Helm chart (found by
  their ``app.kubernetes.io/name=mo-operator`` label; the chart prefixes their
  names with the release), leaving everything else as installed: for an
  in-cluster operator that generates its own serving certificate. With
  cert-manager, its CA injector does this instead and neither is called.

Both are server-side applies under their own field manager, idempotent: a second
call with the same CA changes nothing (the API server stores no no-op write).

The generated objects are exactly ``deploy/operator/60-webhooks.yaml`` (without
a caBundle) for the default Service, and the chart renders the same kinds,
paths and names; tests hold the three together.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import urlsplit

from mo_operator.api.kinds import GROUP, VERSION
from mo_operator.kube.client.client import ApiClient
from mo_operator.kube.client.resource import Resource
from mo_operator.kube.meta.objects import mapping_at

from .routes import MUTATING_ROUTES, VALIDATING_ROUTES, Route

__all__ = [
    "DEFAULT_LABELS",
    "FIELD_MANAGER",
    "MUTATING_CONFIGURATION",
    "VALIDATING_CONFIGURATION",
    "ServiceRef",
    "configuration_names",
    "inject_ca_bundle",
    "install_webhook_configurations",
    "webhook_configurations",
]

Obj = dict[str, Any]

MUTATING_CONFIGURATION: Final = Resource(
    "admissionregistration.k8s.io",
    "v1",
    "MutatingWebhookConfiguration",
    "mutatingwebhookconfigurations",
    False,
)
VALIDATING_CONFIGURATION: Final = Resource(
    "admissionregistration.k8s.io",
    "v1",
    "ValidatingWebhookConfiguration",
    "validatingwebhookconfigurations",
    False,
)

_RESOURCES: Mapping[str, Resource] = {r.kind: r for r in (MUTATING_CONFIGURATION, VALIDATING_CONFIGURATION)}

FIELD_MANAGER: Final = "mo-operator-webhooks"
"""Who owns what the operator writes into the configurations."""
NAME_LABEL: Final = "app.kubernetes.io/name"
DEFAULT_LABELS: Mapping[str, str] = {
    NAME_LABEL: "mo-operator",
    "app.kubernetes.io/instance": "mo-operator",
    "app.kubernetes.io/component": "webhook",
    "app.kubernetes.io/part-of": "matrixone",
}
"""The install manifests' labels; ``app.kubernetes.io/name`` is how the operator finds
the configurations again."""
DEFAULT_TIMEOUT_SECONDS: Final = 10


@dataclass(frozen=True)
class ServiceRef:
    """The Service in front of the operator's webhook port (in-cluster installs).

    The defaults are the plain manifests' ``mo-operator-webhook`` Service, 443 to
    the pods' port 9443."""

    namespace: str = "mo-operator-system"
    name: str = "mo-operator-webhook"
    port: int = 443


def configuration_names(prefix: str = "mo-operator") -> tuple[str, str]:
    """The names of the mutating and the validating configuration."""
    return f"{prefix}-mutating", f"{prefix}-validating"


def _check_url_base(url_base: str) -> str:
    """kube-apiserver accepts only ``https`` URLs without user info, query or fragment."""
    parts = urlsplit(url_base)
    if parts.scheme != "https" or not parts.hostname:
        raise ValueError(f"webhook URL must be https://host[:port][/path], not {url_base!r}")
    if parts.username or parts.password or parts.query or parts.fragment:
        raise ValueError(f"webhook URL may not have user info, a query or a fragment: {url_base!r}")
    return url_base.rstrip("/")


def _client_config(path: str, service: ServiceRef | None, url_base: str | None, ca: str | None) -> Obj:
    config: Obj
    if service is not None:
        config = {
            "service": {
                "name": service.name,
                "namespace": service.namespace,
                "path": path,
                "port": service.port,
            }
        }
    else:
        config = {"url": f"{url_base}{path}"}
    if ca is not None:
        config["caBundle"] = ca
    return config


def _webhook(
    route: Route,
    *,
    mutating: bool,
    client: tuple[ServiceRef | None, str | None, str | None],
    timeout_seconds: int,
    namespaces: Sequence[str],
) -> Obj:
    path = route.mutate_path if mutating else route.validate_path
    hook: Obj = {
        "name": route.mutating_name if mutating else route.validating_name,
        "admissionReviewVersions": ["v1"],
        "sideEffects": "None",
        "failurePolicy": "Fail",
        "timeoutSeconds": timeout_seconds,
        "clientConfig": _client_config(path, *client),
        "rules": [
            {
                "apiGroups": [GROUP],
                "apiVersions": [VERSION],
                "operations": ["CREATE", "UPDATE"],
                "resources": [route.plural]
                + ([f"{route.plural}/scale"] if route.scale and not mutating else []),
                "scope": route.scope,
            }
        ],
    }
    if namespaces and route.namespaced:
        hook["namespaceSelector"] = {
            "matchExpressions": [
                {"key": "kubernetes.io/metadata.name", "operator": "In", "values": list(namespaces)}
            ]
        }
    return hook


def webhook_configurations(
    *,
    service: ServiceRef | None = None,
    url_base: str | None = None,
    ca_bundle: bytes | None,
    name_prefix: str = "mo-operator",
    labels: Mapping[str, str] = DEFAULT_LABELS,
    timeout_seconds: int = DEFAULT_TIMEOUT_SECONDS,
    namespaces: Sequence[str] = (),
) -> list[Obj]:
    """The mutating and the validating configuration, in that order.

    Exactly one of ``service`` (in-cluster) and ``url_base`` (``https://host:port``;
    each webhook's path is appended) says where the API server sends reviews.
    ``ca_bundle`` is the PEM of the CA that signed the serving certificate (None
    leaves ``caBundle`` out, as the install manifests do). ``namespaces``, when
    given, limits the webhooks to objects in those namespaces (cluster-scoped
    kinds are always sent), as the chart's ``watchNamespaces`` does.
    """
    if (service is None) == (url_base is None):
        raise ValueError("give exactly one of service and url_base")
    base = _check_url_base(url_base) if url_base is not None else None
    ca = base64.b64encode(ca_bundle).decode() if ca_bundle is not None else None
    client = (service, base, ca)
    mutating_name, validating_name = configuration_names(name_prefix)
    out = []
    for resource, name, routes, mutating in (
        (MUTATING_CONFIGURATION, mutating_name, MUTATING_ROUTES, True),
        (VALIDATING_CONFIGURATION, validating_name, VALIDATING_ROUTES, False),
    ):
        out.append(
            {
                "apiVersion": resource.api_version,
                "kind": resource.kind,
                "metadata": {"name": name, "labels": dict(labels)},
                "webhooks": [
                    _webhook(
                        r,
                        mutating=mutating,
                        client=client,
                        timeout_seconds=timeout_seconds,
                        namespaces=namespaces,
                    )
                    for r in routes
                ],
            }
        )
    return out


async def install_webhook_configurations(
    client: ApiClient,
    *,
    service: ServiceRef | None = None,
    url_base: str | None = None,
    ca_bundle: bytes,
    name_prefix: str = "mo-operator",
    timeout_seconds: int = DEFAULT_TIMEOUT_SECONDS,
    namespaces: Sequence[str] = (),
    field_manager: str = FIELD_MANAGER,
) -> list[Obj]:
    """Create or update both configurations (server-side apply, forced: they are ours)
    and return them as stored. Call it once the webhook server listens: from then on
    the API server sends every CREATE and UPDATE of our kinds to it and refuses them
    when it cannot reach it (failurePolicy Fail).

    Webhooks this field manager applied before and no longer generates are removed
    by the apply; webhooks someone else added to the same objects stay.

    Needs ``patch`` on the two configurations, and ``create`` while they do not
    exist yet (kube-apiserver authorizes an apply that creates as a create too)."""
    stored = []
    for obj in webhook_configurations(
        service=service,
        url_base=url_base,
        ca_bundle=ca_bundle,
        name_prefix=name_prefix,
        timeout_seconds=timeout_seconds,
        namespaces=namespaces,
    ):
        resource = _RESOURCES[obj["kind"]]
        stored.append(await client.apply(obj, resource=resource, field_manager=field_manager, force=True))
    return stored


async def inject_ca_bundle(
    client: ApiClient,
    ca_bundle: bytes,
    *,
    label_selector: str = f"{NAME_LABEL}=mo-operator",
    field_manager: str = FIELD_MANAGER,
) -> list[str]:
    """Write ``ca_bundle`` into every webhook of the configurations with the label, and
    return the names of those that changed (none when all already carry it).

    Only ``webhooks[*].clientConfig.caBundle`` is applied, so the names, rules,
    Service and namespaceSelector the manifests or the chart installed stay theirs,
    and re-applying the manifests (which set no caBundle) leaves the CA in place.
    Needs ``list`` on both kinds and ``patch`` on the configurations found."""
    ca = base64.b64encode(ca_bundle).decode()
    changed = []
    for resource in (MUTATING_CONFIGURATION, VALIDATING_CONFIGURATION):
        for config in (await client.list(resource, label_selector=label_selector)).items:
            hooks = config.get("webhooks") or []
            if all(mapping_at(h, "clientConfig").get("caBundle") == ca for h in hooks):
                continue
            name = config["metadata"]["name"]
            patch = {
                "apiVersion": resource.api_version,
                "kind": resource.kind,
                "metadata": {"name": name},
                "webhooks": [{"name": h["name"], "clientConfig": {"caBundle": ca}} for h in hooks],
            }
            await client.apply(patch, resource=resource, field_manager=field_manager, force=True)
            changed.append(name)
    return changed
