"""Loading the install manifests and answering RBAC questions about them, for
the deploy tests. The RBAC matcher follows the authorizer's rule semantics
(https://kubernetes.io/docs/reference/access-authn-authz/rbac/#referring-to-resources):
a rule grants a request when group, resource (with subresource) and verb are
listed, and, if the rule has resourceNames, the request names one of them.
A create, or a list/watch without a metadata.name field selector, names
nothing, so a rule with resourceNames never grants it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[1]
OPERATOR_DIR = REPO / "deploy" / "operator"
CRDS_DIR = REPO / "deploy" / "crds"
CHART_DIR = REPO / "charts" / "mo-operator"

GROUP = "core.matrixorigin.io"
VERSION = "v1alpha1"
OPERATOR_NAMESPACE = "mo-operator-system"
LEASE_NAME = "mo-operator-leader"
NAME_LABEL = ("app.kubernetes.io/name", "mo-operator")

# Our namespaced kinds (singular, lower case); Backup is our only cluster-scoped
# one. Their plurals add an "s", as in upstream's CRDs (matrixoneclusters, webuis, ...).
NAMESPACED_KINDS = (
    "matrixonecluster",
    "logset",
    "dnset",
    "tnset",
    "cnset",
    "proxyset",
    "webui",
    "bucketclaim",
    "backupjob",
    "restorejob",
    "backupschedule",
    "cnclaim",
    "cnclaimset",
    "cnpool",
)
# The kinds served by our admission webhooks (mo_operator.webhooks.routes):
# defaulting where it does more than the CRD schema, validation for every kind.
MUTATING_KINDS = ("matrixonecluster", "logset", "dnset", "tnset", "cnset", "proxyset")
VALIDATING_KINDS = (*NAMESPACED_KINDS[:9], "backup", *NAMESPACED_KINDS[9:])
CLUSTER_SCOPED_KINDS = ("backup",)

Obj = dict[str, Any]


def load_yaml_dir(directory: Path) -> list[Obj]:
    """Every object in every ``*.yaml`` file of a directory, in file order
    (the order ``kubectl apply -f DIR`` uses)."""
    objs: list[Obj] = []
    for path in sorted(directory.glob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if doc is not None:
                objs.append(doc)
    return objs


def operator_objects() -> list[Obj]:
    return load_yaml_dir(OPERATOR_DIR)


def of_kind(objs: list[Obj], kind: str) -> list[Obj]:
    return [o for o in objs if o.get("kind") == kind]


def one(objs: list[Obj], kind: str, name: str | None = None) -> Obj:
    found = [o for o in of_kind(objs, kind) if name is None or o["metadata"]["name"] == name]
    assert len(found) == 1, f"expected exactly one {kind} {name or ''}, found {len(found)}"
    return found[0]


def crds() -> list[Obj]:
    return load_yaml_dir(CRDS_DIR) if CRDS_DIR.is_dir() else []


def rule_allows(rule: Obj, group: str, resource: str, verb: str, name: str | None = None) -> bool:
    if group not in rule.get("apiGroups", []) or resource not in rule.get("resources", []):
        return False
    if verb not in rule.get("verbs", []):
        return False
    names = rule.get("resourceNames")
    return not names or (name is not None and name in names)


def allows(rules: list[Obj], group: str, resource: str, verb: str, name: str | None = None) -> bool:
    return any(rule_allows(r, group, resource, verb, name) for r in rules)


def cluster_wide_rules(objs: list[Obj], service_account: str, namespace: str) -> list[Obj]:
    """The rules a ServiceAccount holds in every namespace: ClusterRoles bound
    to it by ClusterRoleBindings."""
    roles = {r["metadata"]["name"]: r for r in of_kind(objs, "ClusterRole")}
    rules: list[Obj] = []
    for binding in of_kind(objs, "ClusterRoleBinding"):
        if _binds(binding, service_account, namespace):
            assert binding["roleRef"]["kind"] == "ClusterRole"
            rules += roles[binding["roleRef"]["name"]]["rules"]
    return rules


def namespaced_rules(objs: list[Obj], service_account: str, namespace: str, in_namespace: str) -> list[Obj]:
    """The rules a ServiceAccount holds in one namespace only, through RoleBindings."""
    roles = {(r["metadata"]["namespace"], r["metadata"]["name"]): r for r in of_kind(objs, "Role")}
    cluster_roles = {r["metadata"]["name"]: r for r in of_kind(objs, "ClusterRole")}
    rules: list[Obj] = []
    for binding in of_kind(objs, "RoleBinding"):
        if binding["metadata"]["namespace"] != in_namespace or not _binds(
            binding, service_account, namespace
        ):
            continue
        ref = binding["roleRef"]
        if ref["kind"] == "Role":
            rules += roles[(in_namespace, ref["name"])]["rules"]
        else:
            rules += cluster_roles[ref["name"]]["rules"]
    return rules


def _binds(binding: Obj, service_account: str, namespace: str) -> bool:
    return any(
        s.get("kind") == "ServiceAccount"
        and s.get("name") == service_account
        and s.get("namespace") == namespace
        for s in binding.get("subjects", [])
    )


def all_rules(objs: list[Obj]) -> list[tuple[str, Obj]]:
    """Every (role kind, rule) pair in the manifests."""
    return [
        (role["kind"], rule)
        for role in of_kind(objs, "ClusterRole") + of_kind(objs, "Role")
        for rule in role["rules"]
    ]
