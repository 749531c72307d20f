"""Defaulting and validating admission webhooks of our kinds.

The rules are the api package's (:func:`mo_operator.api.defaulting.default`,
:mod:`mo_operator.api.validation`), shared with the reconcilers; this package
serves them over the runtime's :class:`~mo_operator.kube.webhook.server.WebhookServer`
and writes the webhook configurations that make the API server call them. One
module per concern: :mod:`.routes` (which kinds, paths and names),
:mod:`.defaulter` and :mod:`.validator` (the handlers), :mod:`.configurations`
(the configuration objects and how the operator installs them).

Start-up, in order::

    server = WebhookServer(certs, port=9443)
    register(server, default_args=config.default_args)
    await server.start()
    await install_webhook_configurations(client, url_base=..., ca_bundle=certs.ca_bundle)
    # or, with the install manifests in place: await inject_ca_bundle(client, certs.ca_bundle)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from mo_operator.kube.webhook.server import WebhookServer

from .buckets import ClaimLookup, api_claim_lookup, bucket_errors
from .configurations import (
    FIELD_MANAGER,
    ServiceRef,
    configuration_names,
    inject_ca_bundle,
    install_webhook_configurations,
    webhook_configurations,
)
from .defaulter import Defaulter
from .owned_sets import ObjectLookup, OwnedSets, api_object_lookup
from .routes import DEFAULTED_KINDS, MUTATING_ROUTES, VALIDATED_KINDS, VALIDATING_ROUTES, Route, route
from .validator import Validator, denial, invalid_message

__all__ = [
    "DEFAULTED_KINDS",
    "FIELD_MANAGER",
    "MUTATING_ROUTES",
    "VALIDATED_KINDS",
    "VALIDATING_ROUTES",
    "ClaimLookup",
    "Defaulter",
    "ObjectLookup",
    "OwnedSets",
    "Route",
    "ServiceRef",
    "Validator",
    "api_claim_lookup",
    "api_object_lookup",
    "bucket_errors",
    "configuration_names",
    "denial",
    "inject_ca_bundle",
    "install_webhook_configurations",
    "invalid_message",
    "register",
    "route",
    "webhook_configurations",
]


def register(
    server: WebhookServer,
    *,
    default_args: Mapping[str, Sequence[str]] | None = None,
    claims: ClaimLookup | None = None,
    objects: ObjectLookup | None = None,
    operator_manager: str = "mo-operator",
) -> None:
    """Add every defaulting and validating handler to ``server``, at upstream's paths.

    Call it before ``server.start()`` (the server routes the paths it has then).
    ``default_args``: the operator's default ``serviceArgs`` by component, see
    :class:`~.defaulter.Defaulter`. ``claims``: how the validators find the
    BucketClaims of an S3 path (``api_claim_lookup(client)``); without it, the
    claim of a path is checked by the LogSet controller only. ``objects``: how the
    validators read a set a Scale names and its cluster (``api_object_lookup(client)``),
    for the warning on a direct change of a set a cluster owns; ``operator_manager``
    the field manager of the operator's own writes, which get no such warning.
    """
    owned = OwnedSets(objects, operator_manager)
    for r in MUTATING_ROUTES:
        server.add_mutating(r.mutate_path, Defaulter(r.kind, default_args=default_args))
    for r in VALIDATING_ROUTES:
        server.add_validating(r.validate_path, Validator(r.kind, claims=claims, owned=owned))
