"""The Helm chart as Helm itself reads it: Helm v4's own SDK (the
``helm-python-sdk`` package: Helm's Go code through ctypes, no helm binary)
lints it, renders it with its defaults and with every value the docs name, and
checks values against its ``values.schema.json`` with Helm's own messages.
Installing it on kube-apiserver is tests/integration/chart."""

from __future__ import annotations

import copy
import functools
import json
import re
from collections.abc import Iterator
from typing import Any

import helm_python as helm
import pytest
import yaml

from install_manifests import CHART_DIR, REPO, one, operator_objects
from mo_operator.cli.operator_config import DEFAULT_ARGS
from mo_operator.matrixone.backup import DEFAULT_IMAGE as DEFAULT_BACKUP_IMAGE
from mo_operator.matrixone.buckets import CLEANUP_IMAGE
from mo_operator.webhooks import ServiceRef, webhook_configurations

RELEASE, NAMESPACE = "mo-operator", "mo-operator-system"
Obj = dict[str, Any]

ENABLED = {"enabled": True}
OVERRIDES: dict[str, tuple[Obj, Obj]] = {
    # value: (what it needs set besides, to act; the value set to something else than its default)
    "image.repository": ({}, {"image": {"repository": "registry.example.com/mo-operator"}}),
    "image.tag": ({}, {"image": {"tag": "9.9.9"}}),
    "image.pullPolicy": ({}, {"image": {"pullPolicy": "Always"}}),
    "imagePullSecrets": ({}, {"imagePullSecrets": [{"name": "regcred"}]}),
    "nameOverride": ({}, {"nameOverride": "matrixone-operator"}),
    "fullnameOverride": ({}, {"fullnameOverride": "mo"}),
    "replicaCount": ({}, {"replicaCount": 3}),
    "leaderElection.enabled": ({"replicaCount": 1}, {"leaderElection": {"enabled": False}}),
    "watchNamespaces": ({}, {"watchNamespaces": ["team-a", "team-b"]}),
    "logJson": ({}, {"logJson": False}),
    "logLevel": ({}, {"logLevel": "DEBUG"}),
    "adoptKruise": ({}, {"adoptKruise": True}),
    "jobImages.backup": ({}, {"jobImages": {"backup": "mirror.example.com/mobr:1.0.0"}}),
    "jobImages.cleanup": ({}, {"jobImages": {"cleanup": "mirror.example.com/aws-cli:2"}}),
    "defaultArgs": ({}, {"defaultArgs": {"cn": ["-debug-http=:6061"]}}),
    "resources": ({}, {"resources": {"requests": {"cpu": "200m"}}}),
    "nodeSelector": ({}, {"nodeSelector": {"disk": "ssd"}}),
    "tolerations": ({}, {"tolerations": [{"key": "dedicated", "operator": "Exists"}]}),
    "affinity": ({}, {"affinity": {"podAffinity": {}}}),
    "priorityClassName": ({}, {"priorityClassName": "system-cluster-critical"}),
    "podAnnotations": ({}, {"podAnnotations": {"example.com/a": "b"}}),
    "podLabels": ({}, {"podLabels": {"team": "db"}}),
    "serviceAccount.create": ({}, {"serviceAccount": {"create": False}}),
    "serviceAccount.name": ({}, {"serviceAccount": {"name": "operator"}}),
    "serviceAccount.annotations": ({}, {"serviceAccount": {"annotations": {"example.com/a": "b"}}}),
    "podDisruptionBudget.enabled": ({}, {"podDisruptionBudget": {"enabled": False}}),
    "podDisruptionBudget.minAvailable": ({}, {"podDisruptionBudget": {"minAvailable": "50%"}}),
    "health.port": ({}, {"health": {"port": 9081}}),
    "webhook.enabled": ({}, {"webhook": {"enabled": False}}),
    "webhook.port": ({}, {"webhook": {"port": 9444}}),
    "webhook.timeoutSeconds": ({}, {"webhook": {"timeoutSeconds": 5}}),
    "webhook.certManager.enabled": ({}, {"webhook": {"certManager": ENABLED}}),
    "webhook.certManager.issuerRef": (
        {"webhook": {"certManager": ENABLED}},
        {"webhook": {"certManager": {"issuerRef": {"kind": "ClusterIssuer", "name": "ca"}}}},
    ),
    "webhook.certManager.duration": (
        {"webhook": {"certManager": ENABLED}},
        {"webhook": {"certManager": {"duration": "2160h"}}},
    ),
    "webhook.certManager.renewBefore": (
        {"webhook": {"certManager": ENABLED}},
        {"webhook": {"certManager": {"renewBefore": "360h"}}},
    ),
    "metrics.port": ({}, {"metrics": {"port": 9090}}),
    "metrics.service.annotations": ({}, {"metrics": {"service": {"annotations": {"example.com/a": "b"}}}}),
    "metrics.serviceMonitor.enabled": ({}, {"metrics": {"serviceMonitor": ENABLED}}),
    **{
        f"metrics.serviceMonitor.{key}": (
            {"metrics": {"serviceMonitor": ENABLED}},
            {"metrics": {"serviceMonitor": {key: value}}},
        )
        for key, value in (
            ("interval", "15s"),
            ("scrapeTimeout", "5s"),
            ("labels", {"release": "prom"}),
            ("honorLabels", False),
        )
    },
    "podMonitor.enabled": ({}, {"podMonitor": ENABLED}),
    **{
        f"podMonitor.{key}": ({"podMonitor": ENABLED}, {"podMonitor": {key: value}})
        for key, value in (("interval", "15s"), ("namespaces", ["mo"]), ("labels", {"release": "prom"}))
    },
    "prometheusRule.enabled": ({}, {"prometheusRule": ENABLED}),
    **{
        f"prometheusRule.{key}": ({"prometheusRule": ENABLED}, {"prometheusRule": {key: value}})
        for key, value in (
            ("labels", {"release": "prom"}),
            ("runbookBaseUrl", "https://docs.example.com/troubleshooting"),
            ("clusterNotReadyFor", "30m"),
        )
    },
    "grafana.dashboard.enabled": ({}, {"grafana": {"dashboard": ENABLED}}),
    **{
        f"grafana.dashboard.{key}": (
            {"grafana": {"dashboard": ENABLED}},
            {"grafana": {"dashboard": {key: value}}},
        )
        for key, value in (
            ("label", "dashboards"),
            ("labelValue", "yes"),
            ("namespace", "monitoring"),
            ("annotations", {"grafana_folder": "MatrixOne"}),
        )
    },
    "onlyWatchReleasedNS": ({}, {"onlyWatchReleasedNS": True}),
    "globalRegistryPrefix": ({}, {"globalRegistryPrefix": "mirror.example.com/"}),
    "backupRestore.image": ({}, {"backupRestore": {"image": "matrixorigin/mobr:1.1.0"}}),
    "bucketCleanJob.image": ({}, {"bucketCleanJob": {"image": "amazon/aws-cli:2.15.0"}}),
    "featureGates": ({}, {"featureGates": {"cnPool": True}}),
    "rbac.create": ({}, {"rbac": {"create": False}}),
    "podSecurityContext": ({}, {"podSecurityContext": {"runAsUser": 1000}}),
    "securityContext": ({}, {"securityContext": {"runAsUser": 1000}}),
}
NOT_READ: dict[str, Obj] = {
    # keys of the Go operator's chart that docs/install.md says this chart does not read
    "args": {"args": ["-leader-elect"]},
    "env": {"env": {"EXTRA": "1"}},
    "kruise.*": {"kruise": {"enabled": True, "featureGates": "StatefulSetAutoDeletePVC=true"}},
    "webhook.createResource": {"webhook": {"createResource": False}},
    "webhook.secretName": {"webhook": {"secretName": "my-certs"}},
}
UPSTREAM_DEFAULTS: Obj = {
    # the Go operator's chart's values.yaml (UPSTREAM.md, "Helm chart"), as its users have it
    "onlyWatchReleasedNS": False,
    "replicaCount": 1,
    "image": {
        "repository": "matrixorigin/matrixone-operator",
        "tag": "1.2.0-alpha.5",
        "pullPolicy": "IfNotPresent",
    },
    "backupRestore": {"image": "matrixorigin/mobr:1.0.0-rc1"},
    "globalRegistryPrefix": "",
    "webhook": {"createResource": True, "secretName": ""},
    "imagePullSecrets": [],
    "nameOverride": "",
    "fullnameOverride": "",
    "rbac": {"create": True},
    "serviceAccount": {"create": True, "annotations": {}, "name": ""},
    "podAnnotations": {},
    "podSecurityContext": {},
    "securityContext": {},
    "resources": {},
    "nodeSelector": {},
    "tolerations": [],
    "affinity": {},
    "kruise": {"enabled": True, "featureGates": "StatefulSetAutoDeletePVC=true"},
    "args": ["-leader-elect"],
    "defaultArgs": [
        {"name": c, "values": ["-debug-http=:6060"]} for c in ("logService", "dn", "cn", "proxy")
    ],
    "featureGates": {g: True for g in ("s3Reclaim", "proxySupport", "cnLabel", "backupRestore", "cnPool")},
}


def merged(*layers: Obj) -> Obj:
    out: Obj = {}
    for layer in layers:
        out = _merge(out, layer)
    return out


def _merge(base: Obj, over: Obj) -> Obj:
    out = copy.deepcopy(base)
    for key, value in over.items():
        out[key] = (
            _merge(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
        )
    return out


@pytest.fixture(scope="module")
def chart() -> Iterator[helm.Chart]:
    with helm.Chart.load(CHART_DIR) as loaded:
        yield loaded


@functools.cache
def _rendered(values_json: str) -> dict[str, str]:
    with helm.Chart.load(CHART_DIR) as chart:
        rendered: dict[str, str] = chart.render(
            json.loads(values_json), name=RELEASE, namespace=NAMESPACE, is_install=True
        )
        return rendered


def render(values: Obj | None = None) -> dict[str, str]:
    return _rendered(json.dumps(values or {}, sort_keys=True))


def objects(rendered: dict[str, str]) -> list[Obj]:
    return [
        doc
        for path, text in sorted(rendered.items())
        if path.endswith(".yaml")
        for doc in yaml.safe_load_all(text)
        if doc
    ]


def _leaves(values: Obj, prefix: str = "") -> Iterator[str]:
    for key, value in values.items():
        path = f"{prefix}{key}"
        if isinstance(value, dict) and value:
            yield from _leaves(value, f"{path}.")
        else:
            yield path


def _documented() -> set[str]:
    """Every value docs/install.md's two value tables name (``.x`` continues the key before)."""
    text = (REPO / "docs" / "install.md").read_text()
    names: set[str] = set()
    for header in ("| value | default | meaning |", "| upstream key | ours | notes |"):
        table = text[text.index(header) :].split("\n\n", 1)[0]
        for row in table.splitlines()[2:]:
            before = ""
            for token in re.findall(r"`([^`]+)`", row.split("|")[1]):
                before = before.rsplit(".", 1)[0] + token if token.startswith(".") else token
                names.add(before)
    return names


def test_helm_lints_the_chart_clean() -> None:
    """With its defaults, and with every value set at once (but leader election off,
    which more than one replica refuses)."""
    everything = merged(
        *(merged(*pair) for key, pair in OVERRIDES.items() if key != "leaderElection.enabled")
    )
    assert objects(render(everything))
    for values in (None, everything):
        report = helm.lint(CHART_DIR, values, strict=True, namespace=NAMESPACE)
        assert report["errors"] == [] and report["messages"] == [], report


def test_the_defaults_render_the_operator_and_what_it_needs() -> None:
    objs = objects(render())
    kinds = sorted({o["kind"] for o in objs})
    assert kinds == sorted(
        {
            "ClusterRole",
            "ClusterRoleBinding",
            "ConfigMap",
            "Deployment",
            "MutatingWebhookConfiguration",
            "PodDisruptionBudget",
            "Role",
            "RoleBinding",
            "Service",
            "ServiceAccount",
            "ValidatingWebhookConfiguration",
        }
    )
    deployment = one(objs, "Deployment", RELEASE)
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    assert (
        container["image"]
        == f"mo-operator:{yaml.safe_load((CHART_DIR / 'Chart.yaml').read_text())['appVersion']}"
    )
    assert container["args"][:2] == ["run", "--leader-elect"]
    assert f"--backup-image={DEFAULT_BACKUP_IMAGE}" in container["args"]
    assert not any(a.startswith("--cleanup-image") for a in container["args"]), (
        f"the operator's {CLEANUP_IMAGE}"
    )
    assert deployment["spec"]["template"]["spec"]["serviceAccountName"] == RELEASE


def test_the_charts_defaults_are_the_operators_and_the_plain_manifests() -> None:
    """defaultArgs: upstream's chart's, which the operator gives without a config
    directory and the plain manifests' ConfigMap holds; and both installs run the
    same operator with the same arguments but those of the chart's values."""
    config = one(objects(render()), "ConfigMap", f"{RELEASE}-cm")
    assert yaml.safe_load(config["data"]["defaultArgs"]) == {k: list(v) for k, v in DEFAULT_ARGS.items()}
    plain = one(operator_objects(), "ConfigMap", "mo-operator-cm")
    assert yaml.safe_load(plain["data"]["defaultArgs"]) == yaml.safe_load(config["data"]["defaultArgs"])
    (ours,) = one(objects(render()), "Deployment", RELEASE)["spec"]["template"]["spec"]["containers"]
    (theirs,) = one(operator_objects(), "Deployment", "mo-operator")["spec"]["template"]["spec"]["containers"]
    assert {a.split("=")[0] for a in ours["args"]} - {"--backup-image"} == {
        a.split("=")[0] for a in theirs["args"]
    }


@pytest.mark.parametrize("value", sorted(OVERRIDES))
def test_every_value_renders_and_changes_what_is_rendered(value: str) -> None:
    needs, setting = OVERRIDES[value]
    before, after = render(needs), render(merged(needs, setting))
    assert after != before, f"{value} changes nothing the chart renders"
    for obj in objects(after):
        assert obj.get("apiVersion") and obj.get("kind") and obj["metadata"].get("name"), obj


@pytest.mark.parametrize("key", sorted(NOT_READ))
def test_the_go_operators_keys_this_chart_does_not_read_are_accepted_and_change_nothing(key: str) -> None:
    assert render(NOT_READ[key]) == render()


def test_every_value_the_docs_or_values_yaml_name_is_rendered_above() -> None:
    covered = set(OVERRIDES) | set(NOT_READ)
    documented = _documented() - {"image.*"}
    assert documented - covered == set(), "docs/install.md names values no test renders"
    defaults = yaml.safe_load((CHART_DIR / "values.yaml").read_text())
    untested = {
        leaf for leaf in _leaves(defaults) if not any(leaf == k or leaf.startswith(f"{k}.") for k in covered)
    }
    assert untested == set(), "values.yaml has values no test renders"


def test_every_value_has_a_type_in_the_schema(chart: helm.Chart) -> None:
    schema = chart.schema
    assert schema is not None and schema["additionalProperties"] is False
    defaults = yaml.safe_load((CHART_DIR / "values.yaml").read_text())
    for leaf in _leaves(defaults):
        node: Any = schema
        for key in leaf.split("."):
            if "properties" not in node:
                break  # a free-form map (resources, defaultArgs' components): typed as a whole
            assert key in node["properties"], f"{leaf} is not in values.schema.json"
            node = node["properties"][key]
        assert "type" in node or "oneOf" in node, leaf
    chart.validate_schema(defaults)


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"replicaCount": "two"}, "at '/replicaCount': got string, want integer"),
        ({"logJson": "yes"}, "at '/logJson': got string, want boolean"),
        ({"webhook": {"port": "9443"}}, "at '/webhook/port': got string, want integer"),
        ({"watchNamespaces": "team-a"}, "at '/watchNamespaces': got string, want array"),
        (
            {"logLevel": "LOUD"},
            "at '/logLevel': value must be one of 'DEBUG', 'INFO', 'WARNING', 'ERROR', 'CRITICAL'",
        ),
        ({"defaultArgs": {"cn": "-debug-http=:6060"}}, "at '/defaultArgs/cn': got string, want array"),
        ({"metrics": {"prot": 8080}}, "at '/metrics': additional properties 'prot' not allowed"),
    ],
)
def test_a_wrong_value_is_refused_with_helms_own_error(chart: helm.Chart, values: Obj, message: str) -> None:
    with pytest.raises(helm.HelmValuesError) as refused:
        chart.render(values, name=RELEASE, namespace=NAMESPACE)
    assert "values don't meet the specifications of the schema(s)" in str(refused.value)
    assert message in str(refused.value)


def test_a_values_file_written_for_the_go_operators_chart_keeps_its_meaning() -> None:
    objs = objects(render(UPSTREAM_DEFAULTS))
    deployment = one(objs, "Deployment", RELEASE)
    assert deployment["spec"]["replicas"] == 1
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    assert container["image"] == "matrixorigin/matrixone-operator:1.2.0-alpha.5"
    assert (
        "--leader-elect" in container["args"]
        and "--backup-image=matrixorigin/mobr:1.0.0-rc1" in container["args"]
    )
    config = one(objs, "ConfigMap", f"{RELEASE}-cm")
    assert yaml.safe_load(config["data"]["defaultArgs"]) == {k: list(v) for k, v in DEFAULT_ARGS.items()}
    assert yaml.safe_load(config["data"]["featureGates"]) == UPSTREAM_DEFAULTS["featureGates"]


def test_the_chart_ships_its_schema_and_crds(chart: helm.Chart) -> None:
    assert chart.metadata["name"] == "mo-operator"
    assert sorted(c["filename"] for c in chart.crds) == sorted(
        f"mo-operator/crds/{p.name}" for p in (CHART_DIR / "crds").glob("*.yaml")
    )
    assert chart.schema == json.loads((CHART_DIR / "values.schema.json").read_text())


def test_two_replicas_without_leader_election_are_refused(chart: helm.Chart) -> None:
    with pytest.raises(
        helm.HelmRenderError, match=re.escape("replicaCount > 1 needs leaderElection.enabled=true")
    ):
        chart.render({"leaderElection": {"enabled": False}}, name=RELEASE, namespace=NAMESPACE)


def test_the_charts_webhook_rules_are_the_operators() -> None:
    """Kinds, operations and resources (``/scale`` of the sets ``kubectl scale`` reaches
    included) as the operator generates them and the plain manifests hold them."""
    generated = webhook_configurations(service=ServiceRef(), ca_bundle=None)
    rendered = objects(render())
    for config in generated:
        (chart_config,) = [o for o in rendered if o["kind"] == config["kind"]]
        assert {h["name"]: h["rules"] for h in chart_config["webhooks"]} == {
            h["name"]: h["rules"] for h in config["webhooks"]
        }, config["kind"]
