"""One-line explanations of why ``mo-operator run`` cannot go on, for the
person who installed it: what is missing and what to do about it, instead of
a stream of retries or a traceback."""

from __future__ import annotations

from mo_operator.api.kinds import GROUP
from mo_operator.kube.client.resource import Resource
from mo_operator.kube.meta.errors import ApiError

CRD_INSTALL_HINT = (
    "install them with `kubectl apply --server-side -f deploy/crds` (the Helm chart charts/mo-operator"
    " installs them too), or run the operator with --install-crds"
)
RBAC_HINT = (
    "Grant it to the operator's identity (deploy/operator/2*-rbac-*.yaml and the Helm chart"
    " charts/mo-operator grant everything the operator needs)"
)


def missing_crds(missing: list[Resource]) -> str:
    """What the operator waits for while the API server lacks some of its kinds."""
    ours = [r for r in missing if r.group == GROUP]
    others = [r for r in missing if r.group != GROUP]
    parts = []
    if ours:
        names = ", ".join(r.group_resource for r in ours)
        parts.append(f"the CustomResourceDefinitions of {names} are not installed: {CRD_INSTALL_HINT}")
    if others:
        parts.append("the API server does not serve " + ", ".join(r.group_resource for r in others))
    return (
        "; ".join(parts)
        + ". Waiting for them: the operator starts by itself once they are served (until then /readyz says not ready)"
    )


def forbidden(error: ApiError, doing: str) -> str:
    """A 403 as one line: the server's own message names the user, verb,
    resource and API group (kube-apiserver's RBAC authorizer:
    ``User "u" cannot patch resource "r" in API group "g" ...``); where a
    message lacks them, the Status details name the resource."""
    details = error.details
    resource = ".".join(p for p in (details.get("kind"), details.get("group")) if p)
    name = details.get("name")
    what = error.message or f"forbidden: {resource}{f' {name!r}' if name else ''}"
    return f"permission missing while {doing}: {what}. {RBAC_HINT}"
