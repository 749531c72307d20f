"""What an operator under test asked of the API server, against what the
install manifests grant its ServiceAccount: a request the shipped RBAC would
refuse passes on the embedded server (it authorizes everything) and fails in
production, so every e2e run checks the two against each other."""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import Any

from install_manifests import (
    LEASE_NAME,
    OPERATOR_NAMESPACE,
    allows,
    cluster_wide_rules,
    namespaced_rules,
    one,
    operator_objects,
)

# The client's verbs that RBAC knows by another name: server-side apply is a PATCH.
_RBAC_VERB = {"apply": "patch"}


@functools.cache
def _granted() -> list[dict[str, Any]]:
    objs = operator_objects()
    deployment = one(objs, "Deployment", "mo-operator")
    account = deployment["spec"]["template"]["spec"]["serviceAccountName"]
    return cluster_wide_rules(objs, account, OPERATOR_NAMESPACE) + namespaced_rules(
        objs, account, OPERATOR_NAMESPACE, OPERATOR_NAMESPACE
    )


def refused(requests: Iterable[tuple[str, str]]) -> list[str]:
    """The (verb, ``plural.group[/subresource]``) requests the install's RBAC does not grant."""
    out = []
    for verb, label in sorted(set(requests)):
        resource, _, subresource = label.partition("/")
        plural, _, group = resource.partition(".")
        rbac_verb = _RBAC_VERB.get(verb, verb)
        # The lease is granted by name except to create it, which names nothing.
        name = LEASE_NAME if plural == "leases" and rbac_verb != "create" else None
        if not allows(
            _granted(), group, f"{plural}/{subresource}" if subresource else plural, rbac_verb, name
        ):
            out.append(f"{verb} {label}")
    return out
