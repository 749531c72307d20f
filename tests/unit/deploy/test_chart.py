"""Checks of the Helm chart that need no helm binary: the files exist and
parse, every template action is closed, every value and helper a template
uses is defined, and the parts the chart shares with deploy/operator (RBAC
rules, webhook kinds and paths, CRDs, hardening) have not drifted apart."""

from __future__ import annotations

import re
from typing import Any

import pytest
import yaml

from install_manifests import (
    CHART_DIR,
    CLUSTER_SCOPED_KINDS,
    CRDS_DIR,
    GROUP,
    LEASE_NAME,
    MUTATING_KINDS,
    VALIDATING_KINDS,
    one,
    operator_objects,
)

TEMPLATES = CHART_DIR / "templates"
EXPECTED_TEMPLATES = (
    "_helpers.tpl",
    "NOTES.txt",
    "serviceaccount.yaml",
    "rbac.yaml",
    "deployment.yaml",
    "services.yaml",
    "poddisruptionbudget.yaml",
    "webhooks.yaml",
    "certificate.yaml",
    "servicemonitor.yaml",
    "operator-config.yaml",
    "grafana-dashboard.yaml",
    "podmonitor.yaml",
    "prometheusrule.yaml",
)
COMMENT = re.compile(r"{{-?\s*/\*.*?\*/\s*-?}}", re.DOTALL)
ACTION = re.compile(r"{{-?\s*(.*?)\s*-?}}", re.DOTALL)


def _template(name: str) -> str:
    return (TEMPLATES / name).read_text()


def _actions(text: str) -> list[str]:
    return ACTION.findall(COMMENT.sub("", text))


@pytest.fixture(scope="module")
def values() -> dict[str, Any]:
    loaded = yaml.safe_load((CHART_DIR / "values.yaml").read_text())
    assert isinstance(loaded, dict)
    return loaded


def test_chart_metadata_and_templates_exist() -> None:
    chart = yaml.safe_load((CHART_DIR / "Chart.yaml").read_text())
    assert chart["apiVersion"] == "v2"
    assert chart["name"] == "mo-operator"
    assert chart["version"] and chart["appVersion"]
    assert chart["kubeVersion"].startswith(">=1.26")
    assert sorted(p.name for p in TEMPLATES.iterdir()) == sorted(EXPECTED_TEMPLATES)


def test_values_parse_and_offer_the_documented_knobs(values: dict[str, Any]) -> None:
    assert values["image"]["repository"] and "pullPolicy" in values["image"]
    assert values["replicaCount"] == 2
    assert values["leaderElection"]["enabled"] is True
    assert values["watchNamespaces"] == []
    assert values["webhook"]["enabled"] is True
    assert values["webhook"]["certManager"]["enabled"] is False
    assert values["metrics"]["serviceMonitor"]["enabled"] is False
    assert values["logJson"] is True
    assert values["resources"]["requests"] and values["resources"]["limits"]
    assert values["nodeSelector"] == {} and values["tolerations"] == [] and values["affinity"] == {}


@pytest.mark.parametrize("name", [n for n in EXPECTED_TEMPLATES if n != "_helpers.tpl"])
def test_every_values_reference_exists_in_values_yaml(name: str, values: dict[str, Any]) -> None:
    """A misspelt .Values path renders as empty instead of failing, so check it here."""
    for path in re.findall(r"\.Values((?:\.[A-Za-z_]\w*)+)", _template(name)):
        node: Any = values
        for key in path.strip(".").split("."):
            assert isinstance(node, dict) and key in node, f"{name}: .Values{path} is not in values.yaml"
            node = node[key]


@pytest.mark.parametrize("name", EXPECTED_TEMPLATES)
def test_every_block_is_closed(name: str) -> None:
    depth = 0
    for action in _actions(_template(name)):
        if re.match(r"(if|range|with|define|block)\b", action):
            depth += 1
        elif re.match(r"end\b", action):
            depth -= 1
            assert depth >= 0, f"{name}: 'end' without a block"
    assert depth == 0, f"{name}: {depth} block(s) left open"


def test_every_included_helper_is_defined() -> None:
    defined = set(re.findall(r'{{-?\s*define\s+"([^"]+)"', _template("_helpers.tpl")))
    for name in EXPECTED_TEMPLATES:
        for used in re.findall(r'include\s+"([^"]+)"', _template(name)):
            assert used in defined, f"{name} includes undefined {used!r}"


def test_no_tabs_in_templates() -> None:
    for name in EXPECTED_TEMPLATES:
        assert "\t" not in _template(name), name


def _rules_of(name: str) -> list[dict[str, Any]]:
    rules: list[dict[str, Any]] = one(operator_objects(), "ClusterRole", name)["rules"]
    return rules


def test_the_chart_grants_the_same_rules_as_the_plain_manifests() -> None:
    manager = yaml.safe_load((CHART_DIR / "files" / "rbac" / "manager-rules.yaml").read_text())
    assert manager == _rules_of("mo-operator-manager")
    cluster = yaml.safe_load((CHART_DIR / "files" / "rbac" / "cluster-rules.yaml").read_text())
    plain = _rules_of("mo-operator-cluster")
    # The chart templates the one rule naming the webhook configurations.
    assert cluster == [r for r in plain if "resourceNames" not in r]
    rbac = _template("rbac.yaml")
    assert '.Files.Get "files/rbac/manager-rules.yaml"' in rbac
    assert '.Files.Get "files/rbac/cluster-rules.yaml"' in rbac
    assert f"resourceNames: [{LEASE_NAME}]" in rbac
    for helper in ("mo-operator.mutatingWebhookName", "mo-operator.validatingWebhookName"):
        assert f'- {{{{ include "{helper}" . }}}}' in rbac
        assert helper in _template("webhooks.yaml")


def test_namespaced_permissions_follow_watch_namespaces() -> None:
    """With watchNamespaces, the manager ClusterRole is bound by a RoleBinding per
    namespace (a RoleBinding may reference a ClusterRole and grants it only there:
    https://kubernetes.io/docs/reference/access-authn-authz/rbac/#rolebinding-and-clusterrolebinding)."""
    rbac = _template("rbac.yaml")
    assert '{{- $watch := include "mo-operator.watchNamespaces" . | fromJsonArray -}}' in rbac
    watch = rbac.index("{{- if $watch }}")
    assert rbac.index("kind: RoleBinding", watch) < rbac.index("{{- else }}", watch)
    assert rbac.index("kind: ClusterRoleBinding", watch) > rbac.index("{{- else }}", watch)
    assert "{{- range $watch }}" in rbac
    deployment = _template("deployment.yaml")
    assert '{{- range include "mo-operator.watchNamespaces" . | fromJsonArray }}' in deployment
    assert "- --namespace={{ . }}" in deployment
    webhooks = _template("webhooks.yaml")
    assert "kubernetes.io/metadata.name" in webhooks and "{{- toYaml $watch | nindent 12 }}" in webhooks


def test_watch_namespaces_or_upstreams_only_watch_released_ns() -> None:
    """``onlyWatchReleasedNS: true`` (upstream's key) means the release namespace alone,
    unless ``watchNamespaces`` says otherwise; every template reads the one helper."""
    helper = _template("_helpers.tpl")
    body = helper[helper.index('define "mo-operator.watchNamespaces"') :]
    body = body[: body.index("{{- end }}\n{{- end }}")]
    assert body.index(".Values.watchNamespaces") < body.index(".Values.onlyWatchReleasedNS")
    assert "toJson (list .Release.Namespace)" in body
    for name in EXPECTED_TEMPLATES:
        if name != "_helpers.tpl":
            assert ".Values.watchNamespaces" not in _template(name), name


def test_the_chart_webhooks_cover_the_same_kinds_and_paths() -> None:
    text = _template("webhooks.yaml")
    for variable, expected in (
        ("mutating", MUTATING_KINDS),
        ("validating", VALIDATING_KINDS),
        ("clusterScoped", CLUSTER_SCOPED_KINDS),
    ):
        (kinds,) = re.findall(rf"\${variable} := list ((?:\"\w+\"\s*)+)", text)
        assert tuple(re.findall(r'"(\w+)"', kinds)) == expected, variable
    assert "path: /{{ $hook.path }}-core-matrixorigin-io-v1alpha1-{{ $kind }}" in text
    assert '"path" "mutate" "letter" "m" "kinds" $mutating)' in text
    assert '"path" "validate" "letter" "v" "kinds" $validating)' in text
    assert "{{- range $kind := $hook.kinds }}" in text
    assert "scope: {{ if has $kind $clusterScoped }}Cluster{{ else }}Namespaced{{ end }}" in text
    for line in (
        "failurePolicy: Fail",
        "sideEffects: None",
        "operations: [CREATE, UPDATE]",
        f"apiGroups: [{GROUP}]",
    ):
        assert line in text
    assert "caBundle" not in COMMENT.sub("", text)
    assert "cert-manager.io/inject-ca-from:" in text


def test_the_chart_deployment_keeps_the_hardening_and_flags_of_the_plain_one() -> None:
    text = _template("deployment.yaml")
    container = one(operator_objects(), "Deployment")["spec"]["template"]["spec"]["containers"][0]
    for flag in container["args"]:
        name = flag.split("=", 1)[0]
        assert f"- {name}" in text, f"chart Deployment lacks {name}"
    for line in (
        "runAsNonRoot: true",
        "runAsUser: 65532",
        "readOnlyRootFilesystem: true",
        "allowPrivilegeEscalation: false",
        "drop: [ALL]",
        "type: RuntimeDefault",
        "path: /healthz",
        "path: /readyz",
        "port: health",
        "fieldPath: metadata.name",
        "fieldPath: metadata.namespace",
        "topologyKey: kubernetes.io/hostname",
        "mountPath: /tmp",
    ):
        assert line in text, line
    assert 'fail "replicaCount > 1 needs leaderElection.enabled=true' in text
    assert (
        "--webhook-cert-dir=" in text and 'secretName: {{ include "mo-operator.webhookCertName" . }}' in text
    )


def test_chart_crds_are_a_current_copy_of_deploy_crds() -> None:
    """charts/mo-operator/sync-crds.sh makes the copy; rerun it after regenerating CRDs."""
    source = {p.name: p.read_bytes() for p in CRDS_DIR.glob("*.yaml")} if CRDS_DIR.is_dir() else {}
    chart_crds = CHART_DIR / "crds"
    copy = {p.name: p.read_bytes() for p in chart_crds.glob("*.yaml")} if chart_crds.is_dir() else {}
    assert copy == source


def test_default_args_reach_the_operator_as_upstreams_config_map(values: dict[str, Any]) -> None:
    """``defaultArgs`` (upstream's value) is the ConfigMap's key of that name, mounted
    where upstream mounts it and read with ``--operator-config-dir``; changing it
    restarts the operator, which reads it at start-up."""
    assert values["defaultArgs"] == {c: ["-debug-http=:6060"] for c in ("logService", "dn", "cn", "proxy")}
    config = _template("operator-config.yaml")
    assert 'name: {{ include "mo-operator.fullname" . }}-cm' in config
    assert "{{- toYaml .Values.defaultArgs | nindent 4 }}" in config
    # upstream's list of {name, values} becomes the same map its chart writes
    assert '{{- if kindIs "slice" .Values.defaultArgs }}' in config
    assert "    {{ .name }}:\n      {{- toYaml .values | nindent 6 }}" in config
    assert "  featureGates: |-\n    {{- toYaml . | nindent 4 }}" in config
    deployment = _template("deployment.yaml")
    for line in (
        "- --operator-config-dir=/etc/mo-operator-cfg",
        "mountPath: /etc/mo-operator-cfg",
        'name: {{ include "mo-operator.fullname" . }}-cm',
        'checksum/operator-config: {{ include (print $.Template.BasePath "/operator-config.yaml") . | sha256sum }}',
    ):
        assert line in deployment, line


UPSTREAM_KEYS = (
    "onlyWatchReleasedNS",
    "globalRegistryPrefix",
    "backupRestore.image",
    "bucketCleanJob.image",
    "featureGates",
    "defaultArgs",
    "rbac.create",
    "serviceAccount.create",
    "serviceAccount.name",
    "podSecurityContext",
    "securityContext",
)
"""Value keys of the Go operator's chart (charts/matrixone-operator/values.yaml) that
mean here what they mean there."""


def test_upstream_chart_keys_are_accepted_and_documented(values: dict[str, Any]) -> None:
    used = "".join(_template(n) for n in EXPECTED_TEMPLATES)
    install = (CHART_DIR.parent.parent / "docs" / "install.md").read_text()
    for key in UPSTREAM_KEYS:
        node: Any = values
        for part in key.split("."):
            assert isinstance(node, dict) and part in node, f"values.yaml lacks {key}"
            node = node[part]
        assert f".Values.{key}" in used, f"no template reads {key}"
        assert f"| `{key}` |" in install, f"docs/install.md does not map {key}"
    # off by default: a values file without them renders what it rendered before
    assert values["onlyWatchReleasedNS"] is False and values["globalRegistryPrefix"] == ""
    assert values["rbac"]["create"] is True and values["serviceAccount"]["create"] is True
    assert values["podSecurityContext"] == {} and values["securityContext"] == {}


def test_job_images_take_ours_first_then_upstreams_with_the_registry_prefix() -> None:
    helper = _template("_helpers.tpl")
    assert "{{- $image := default .upstream .ours }}" in helper
    assert '{{- printf "%s%s" .prefix $image }}' in helper
    assert '{{- printf "%s%s:%s" .Values.globalRegistryPrefix .Values.image.repository' in helper
    deployment = _template("deployment.yaml")
    for ours, upstream, flag in (
        ("backup", "backupRestore", "--backup-image"),
        ("cleanup", "bucketCleanJob", "--cleanup-image"),
    ):
        call = (
            f'{{{{- with include "mo-operator.jobImage" (dict "ours" .Values.jobImages.{ours} '
            f'"upstream" .Values.{upstream}.image "prefix" .Values.globalRegistryPrefix) }}}}\n'
            f"            - {flag}={{{{ . }}}}"
        )
        assert call in deployment, flag


def test_security_contexts_and_rbac_can_be_replaced_as_upstream_allows() -> None:
    deployment = _template("deployment.yaml")
    assert "{{- if .Values.podSecurityContext }}" in deployment
    assert "{{- if .Values.securityContext }}" in deployment
    assert _template("rbac.yaml").split("*/ -}}\n", 1)[1].startswith("{{- if .Values.rbac.create }}")
    assert _template("serviceaccount.yaml").startswith("{{- if .Values.serviceAccount.create }}")
    helper = _template("_helpers.tpl")
    assert '{{- default "default" .Values.serviceAccount.name }}' in helper
