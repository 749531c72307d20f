"""The pod template of a set (controllers/specs/podtemplate.py): the main
container the operator builds, and the user's overlay over it with upstream's
rules (OverlayPodMeta, OverlayPodSpec, OverlayMainContainer; UPSTREAM.md §1)."""

from __future__ import annotations

import copy
from typing import Any

from mo_operator.api.base import parse
from mo_operator.api.cnset import CNSetSpec
from mo_operator.api.common import PodSet, SharedStorageProvider
from mo_operator.api.k8s import ResourceRequirements
from mo_operator.controllers.cnset.udf import PYTHON_UDF_IMAGE, python_udf_sidecar
from mo_operator.controllers.specs.podtemplate import (
    TERMINATION_GRACE_SECONDS,
    PodTemplateInput,
    canonical_resources,
    pod_template,
)
from mo_operator.matrixone import labels, layout
from mo_operator.matrixone.component import Component

Obj = dict[str, Any]
SELECTOR = {labels.NAMESPACE: "ns", labels.INSTANCE: "mo", labels.COMPONENT: "DNSet"}
S3 = {
    "s3": {
        "path": "bucket/prefix",
        "region": "eu-west-1",
        "secretRef": {"name": "s3-keys"},
        "certificateRef": {"name": "s3-ca", "files": ["ca.crt"]},
    }
}


def template(spec: Obj | None = None, component: Component = Component.TN, **kw: Any) -> Obj:
    if kw.get("shared_storage") is not None:
        kw["shared_storage"] = parse(SharedStorageProvider, kw["shared_storage"])
    inp = PodTemplateInput(
        component=component,
        set_name="mo",
        namespace="ns",
        spec=parse(PodSet, {"replicas": 1, **(spec or {})}),
        image="matrixorigin/matrixone:1.2.3",
        config_map=kw.pop("config_map", "mo-dn-config-0123456789"),
        selector_labels=SELECTOR,
        **kw,
    )
    return pod_template(inp)


def cn_spec(spec: Obj) -> CNSetSpec:
    return parse(CNSetSpec, {"replicas": 1, **spec})


def main(tpl: Obj) -> Obj:
    found: list[Obj] = [c for c in tpl["spec"]["containers"] if c["name"] == layout.MAIN_CONTAINER]
    assert len(found) == 1
    return found[0]


def env(container: Obj) -> dict[str, Obj]:
    return {e["name"]: e for e in container.get("env") or ()}


def env_names(container: Obj) -> list[str]:
    return [e["name"] for e in container.get("env") or ()]


def volumes(tpl: Obj) -> dict[str, Obj]:
    return {v["name"]: v for v in tpl["spec"]["volumes"]}


def mounts(container: Obj) -> dict[str, str]:
    return {m["name"]: m["mountPath"] for m in container["volumeMounts"]}


# ------------------------------------------------------------ main container
def test_the_main_container_runs_the_start_script_of_its_config() -> None:
    tpl = template({"serviceArgs": ["-debug-http=:6060"]}, headless_service="mo-dn-headless")
    c = main(tpl)
    assert c["image"] == "matrixorigin/matrixone:1.2.3"
    assert c["command"] == ["/bin/sh", "/etc/matrixone/config/start.sh"]
    assert c["args"] == ["-debug-http=:6060"]
    assert mounts(c)[layout.CONFIG_VOLUME] == layout.CONFIG_PATH
    # the pod spec names the exact (immutable, hashed) ConfigMap it runs
    assert volumes(tpl)[layout.CONFIG_VOLUME] == {
        "name": "config",
        "configMap": {"name": "mo-dn-config-0123456789"},
    }
    assert tpl["spec"]["terminationGracePeriodSeconds"] == TERMINATION_GRACE_SECONDS
    assert "args" not in main(template())  # no empty list: the API server would drop it


def test_the_log_service_mounts_its_config_where_upstream_does() -> None:
    c = main(template(component=Component.LOG))
    assert c["command"] == ["/bin/sh", "/etc/logservice/start.sh"]
    assert mounts(c)[layout.CONFIG_VOLUME] == "/etc/logservice"


def test_identity_comes_from_the_downward_api() -> None:
    c = main(template(headless_service="mo-dn-headless"))
    e = env(c)
    assert e["POD_NAME"]["valueFrom"]["fieldRef"]["fieldPath"] == "metadata.name"
    assert e["NAMESPACE"]["valueFrom"]["fieldRef"]["fieldPath"] == "metadata.namespace"
    assert e["POD_IP"]["valueFrom"]["fieldRef"]["fieldPath"] == "status.podIP"
    assert all(
        e[n]["valueFrom"]["fieldRef"]["apiVersion"] == "v1" for n in ("POD_NAME", "NAMESPACE", "POD_IP")
    )
    assert e["HEADLESS_SERVICE_NAME"] == {"name": "HEADLESS_SERVICE_NAME", "value": "mo-dn-headless"}
    assert env_names(c)[:3] == ["POD_NAME", "NAMESPACE", "POD_IP"]
    assert "HEADLESS_SERVICE_NAME" not in env(main(template()))
    assert "HOSTNAME_UUID" not in e
    assert env(main(template({"dnsBasedIdentity": True})))["HOSTNAME_UUID"]["value"] == "y"
    # a log store's UUID stays its ordinal's: the HAKeeper was bootstrapped with it
    assert "HOSTNAME_UUID" not in env(main(template({"dnsBasedIdentity": True}, Component.LOG)))


def test_s3_credentials_are_secret_references_never_values() -> None:
    c = main(template(shared_storage=S3))
    e = env(c)
    for key in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        assert e[key] == {"name": key, "valueFrom": {"secretKeyRef": {"name": "s3-keys", "key": key}}}
        assert "value" not in e[key]
    assert e["AWS_REGION"]["value"] == "eu-west-1"
    # the CA bundle is mounted read-only from its Secret
    assert mounts(c)["s3-ssl"] == "/etc/s3-ssl"
    assert next(m for m in c["volumeMounts"] if m["name"] == "s3-ssl")["readOnly"] is True
    assert volumes(template(shared_storage=S3))["s3-ssl"]["secret"] == {"secretName": "s3-ca"}


def test_s3_without_keys_gets_the_default_region_and_no_credentials() -> None:
    e = env(main(template(shared_storage={"s3": {"path": "bucket"}})))
    assert e["AWS_REGION"]["value"] == layout.DEFAULT_AWS_REGION == "us-west-2"
    assert "AWS_ACCESS_KEY_ID" not in e and "AWS_SECRET_ACCESS_KEY" not in e
    file_system = env(main(template(shared_storage={"fileSystem": {"path": "/data"}})))
    assert not {"AWS_REGION", "AWS_ACCESS_KEY_ID"} & set(file_system)


def test_gomemlimit_is_the_percentage_of_the_memory_limit_in_bytes() -> None:
    spec = {"memoryLimitPercent": 80, "resources": {"limits": {"memory": "2Gi"}}}
    assert env(main(template(spec)))["GOMEMLIMIT"]["value"] == str(2 * 1024**3 * 80 // 100)
    # Quantity.Value() rounds up, then integer arithmetic (upstream GoMemLimitEnv)
    odd = {"memoryLimitPercent": 33, "resources": {"limits": {"memory": "1.5Gi"}}}
    assert env(main(template(odd)))["GOMEMLIMIT"]["value"] == str(1610612736 * 33 // 100)
    assert "GOMEMLIMIT" not in env(main(template({"memoryLimitPercent": 80})))  # no limit
    requests_only = {"memoryLimitPercent": 80, "resources": {"requests": {"memory": "1Gi"}}}
    assert "GOMEMLIMIT" not in env(main(template(requests_only)))
    assert "GOMEMLIMIT" not in env(main(template({"resources": {"limits": {"memory": "1Gi"}}})))


def test_an_overlay_gomemlimit_wins() -> None:
    spec = {
        "memoryLimitPercent": 80,
        "resources": {"limits": {"memory": "1Gi"}},
        "overlay": {"env": [{"name": "GOMEMLIMIT", "value": "123"}]},
    }
    c = main(template(spec))
    assert [e for e in c["env"] if e["name"] == "GOMEMLIMIT"] == [{"name": "GOMEMLIMIT", "value": "123"}]


def test_memory_fs_runs_the_binary_from_a_tmpfs() -> None:
    tpl = template({"memoryFsSize": "0.5Gi"})
    c = main(tpl)
    assert volumes(tpl)["tmpfs"] == {"name": "tmpfs", "emptyDir": {"medium": "Memory", "sizeLimit": "512Mi"}}
    assert mounts(c)["tmpfs"] == "/matrixone/bin"
    assert env(c)["MO_BIN_PATH"]["value"] == "/matrixone/bin"
    plain = template()
    assert "tmpfs" not in volumes(plain) and "MO_BIN_PATH" not in env(main(plain))


def test_quantities_are_written_as_the_api_server_stores_them() -> None:
    spec = {
        "resources": {"requests": {"cpu": "0.5", "memory": "1024Mi"}, "limits": {"cpu": 2, "memory": "1.5Gi"}}
    }
    assert main(template(spec))["resources"] == {
        "requests": {"cpu": "500m", "memory": "1Gi"},
        "limits": {"cpu": "2", "memory": "1536Mi"},
    }
    assert "resources" not in main(template({"resources": {}}))
    assert canonical_resources(
        parse(ResourceRequirements, {"limits": {}, "requests": {"memory": "1000M"}})
    ) == {"requests": {"memory": "1G"}}
    assert canonical_resources(None) == {}


def test_image_pull_policy_and_the_proxy_readiness_probe() -> None:
    assert "imagePullPolicy" not in main(template())
    assert main(template(image_pull_policy="Always"))["imagePullPolicy"] == "Always"
    probe = main(template(component=Component.PROXY))["readinessProbe"]
    assert probe == {"tcpSocket": {"port": 6001}, "periodSeconds": 5, "failureThreshold": 2}
    assert "readinessProbe" not in main(template())  # the only probe the operator sets


def test_extra_env_volumes_and_mounts_of_the_set() -> None:
    tpl = template(
        extra_env=[{"name": "EXTRA", "value": "1"}],
        extra_volumes=[{"name": "gossip", "configMap": {"name": "mo-log-gossip"}}],
        extra_mounts=[{"name": "gossip", "mountPath": "/etc/gossip"}],
    )
    assert env(main(tpl))["EXTRA"]["value"] == "1"
    assert volumes(tpl)["gossip"]["configMap"]["name"] == "mo-log-gossip"
    assert mounts(main(tpl))["gossip"] == "/etc/gossip"


# ------------------------------------------------------------------ overlay
def test_overlay_env_is_upserted_by_name_in_place() -> None:
    spec = {
        "overlay": {
            "env": [
                {"name": "POD_IP", "value": "overridden"},
                {"name": "GODEBUG", "value": "madvdontneed=1"},
                {"name": "GODEBUG", "value": "gctrace=1"},
            ]
        }
    }
    c = main(template(spec))
    names = env_names(c)
    assert names[:3] == ["POD_NAME", "NAMESPACE", "POD_IP"]  # replaced where it was
    assert env(c)["POD_IP"] == {"name": "POD_IP", "value": "overridden"}
    assert names.count("GODEBUG") == 1 and env(c)["GODEBUG"]["value"] == "gctrace=1"
    assert names[-1] == "GODEBUG"


def test_overlay_main_container_fields() -> None:
    probe = {"httpGet": {"path": "/healthz", "port": 6060}}
    overlay = {
        "command": ["/mo-service"],
        "args": ["-cfg", "/x.toml"],
        "envFrom": [{"configMapRef": {"name": "extra"}}],
        "imagePullPolicy": "Never",
        "volumeMounts": [
            {"name": "config", "mountPath": "/elsewhere"},
            {"name": "scratch", "mountPath": "/scratch"},
        ],
        "livenessProbe": probe,
        "readinessProbe": probe,
        "startupProbe": probe,
        "lifecycle": {"preStop": {"exec": {"command": ["sleep", "5"]}}},
        "mainContainerSecurityContext": {"runAsNonRoot": True},
    }
    c = main(template({"serviceArgs": ["-a"], "overlay": overlay}, image_pull_policy="Always"))
    assert c["command"] == ["/mo-service"] and c["args"] == ["-cfg", "/x.toml"]
    assert c["envFrom"] == [{"configMapRef": {"name": "extra"}}]
    assert c["imagePullPolicy"] == "Never"
    assert mounts(c) == {"config": "/elsewhere", "scratch": "/scratch"}
    assert [m["name"] for m in c["volumeMounts"]] == ["config", "scratch"]
    # upstream validates startupProbe and forgets it; we apply it
    assert c["livenessProbe"] == c["readinessProbe"] == c["startupProbe"] == probe
    assert c["lifecycle"] == overlay["lifecycle"]
    assert c["securityContext"] == {"runAsNonRoot": True}


def test_overlay_probe_replaces_the_proxy_probe() -> None:
    probe = {"tcpSocket": {"port": 6009}}
    c = main(template({"overlay": {"readinessProbe": probe}}, component=Component.PROXY))
    assert c["readinessProbe"] == probe


def test_overlay_volumes_are_upserted_by_name() -> None:
    spec = {
        "overlay": {
            "volumes": [
                {"name": "config", "configMap": {"name": "mine"}},
                {"name": "scratch", "emptyDir": {}},
            ]
        }
    }
    tpl = template(spec)
    assert [v["name"] for v in tpl["spec"]["volumes"]] == ["config", "scratch"]
    assert volumes(tpl)["config"]["configMap"]["name"] == "mine"


def test_sidecars_follow_main_and_init_containers_are_taken_as_given() -> None:
    sidecar = {"name": "logs", "image": "busybox"}
    init = {"name": "wait", "image": "busybox", "command": ["true"]}
    tpl = template({"overlay": {"sidecarContainers": [sidecar], "initContainers": [init]}})
    assert [c["name"] for c in tpl["spec"]["containers"]] == ["main", "logs"]
    assert tpl["spec"]["containers"][1] == sidecar
    assert tpl["spec"]["initContainers"] == [init]
    plain = template({"overlay": {"sidecarContainers": [], "initContainers": []}})
    assert [c["name"] for c in plain["spec"]["containers"]] == ["main"]
    assert "initContainers" not in plain["spec"]


def test_overlay_pod_fields_are_copied() -> None:
    overlay: Obj = {
        "serviceAccountName": "mo",
        "securityContext": {"fsGroup": 1000},
        "imagePullSecrets": [{"name": "registry"}],
        "affinity": {"nodeAffinity": {}},
        "tolerations": [{"key": "dedicated", "operator": "Exists"}],
        "priorityClassName": "high",
        "terminationGracePeriodSeconds": 0,
        "hostAliases": [{"ip": "10.0.0.1", "hostnames": ["s3"]}],
        "runtimeClassName": "gvisor",
        "dnsConfig": {"options": [{"name": "ndots", "value": "2"}]},
        "shareProcessNamespace": False,
    }
    spec = template({"overlay": copy.deepcopy(overlay)})["spec"]
    for key, value in overlay.items():
        assert spec[key] == value, key
    # a zero grace period and a False flag are values, not absences
    assert spec["terminationGracePeriodSeconds"] == 0 and spec["shareProcessNamespace"] is False


def test_the_overlay_is_not_shared_with_the_template() -> None:
    spec = {"overlay": {"tolerations": [{"key": "a"}], "env": [{"name": "X", "value": "1"}]}}
    tpl = template(spec)
    tpl["spec"]["tolerations"][0]["key"] = "changed"
    main(tpl)["env"][-1]["value"] = "changed"
    assert spec["overlay"]["tolerations"][0]["key"] == "a"
    assert spec["overlay"]["env"][0]["value"] == "1"


def test_pod_labels_cannot_override_the_selector_labels() -> None:
    overlay = {"podLabels": {labels.INSTANCE: "hijack", labels.COMPONENT: "x", "team": "db"}}
    tpl = template({"overlay": overlay}, extra_labels={labels.CLUSTER: "mo", "team": "ours"})
    got = tpl["metadata"]["labels"]
    assert {k: got[k] for k in SELECTOR} == SELECTOR
    assert got[labels.CLUSTER] == "mo"
    assert got["team"] == "ours"  # the set's own labels win too
    assert template({"overlay": {"podLabels": {"team": "db"}}})["metadata"]["labels"]["team"] == "db"


def test_pod_annotations_and_version_annotations() -> None:
    spec = {"overlay": {"podAnnotations": {"a": "b"}}, "semanticVersion": "1.2.3", "operatorVersion": "1.3.0"}
    got = template(spec)["metadata"]["annotations"]
    assert got == {
        "a": "b",
        labels.SEMANTIC_VERSION: "1.2.3",
        labels.OPERATOR_VERSION: "1.3.0",
        labels.CONFIG_SUFFIX: "0123456789",
    }
    # no annotation for the legacy operator version (1.2.0), none at all when nothing to say
    assert labels.OPERATOR_VERSION not in template({"semanticVersion": "1.2.3"})["metadata"]["annotations"]
    assert "annotations" not in template({"semanticVersion": "not-a-version"})["metadata"]


def test_upstreams_config_suffix_names_the_config_from_operator_version_1_3() -> None:
    """matrixorigin.io/config-suffix: on log, TN and CN pods of operatorVersion >= 1.3.0,
    the content hash of the ConfigMap the pod runs (it changes exactly with the config)."""
    for component in (Component.LOG, Component.TN, Component.CN):
        got = template({"operatorVersion": "1.3.0"}, component)["metadata"]["annotations"]
        assert got[labels.CONFIG_SUFFIX] == "0123456789", component
        other = template({"operatorVersion": "1.3.0"}, component, config_map="mo-dn-config-abcdef0123")
        assert other["metadata"]["annotations"][labels.CONFIG_SUFFIX] == "abcdef0123"
    older = template({"operatorVersion": "1.2.0"})["metadata"].get("annotations") or {}
    assert labels.CONFIG_SUFFIX not in older, "upstream sets it only from operatorVersion 1.3.0"
    proxy = template({"operatorVersion": "1.3.0"}, Component.PROXY)["metadata"].get("annotations") or {}
    assert labels.CONFIG_SUFFIX not in proxy


def test_prometheus_annotations_only_with_the_pod_scheme() -> None:
    pod_scheme = template({"exportToPrometheus": True, "promDiscoveryScheme": "Pod"})
    annotations = pod_scheme["metadata"]["annotations"]
    assert annotations[labels.PROMETHEUS_SCRAPE] == "true"
    assert annotations[labels.PROMETHEUS_PORT] == "7001"
    for spec in (
        {"exportToPrometheus": True, "promDiscoveryScheme": "Service"},
        {"exportToPrometheus": True},
        {"exportToPrometheus": False, "promDiscoveryScheme": "Pod"},
    ):
        got = template(spec)["metadata"].get("annotations") or {}
        assert labels.PROMETHEUS_SCRAPE not in got, spec


def test_topology_spread_and_node_selector() -> None:
    tpl = template(
        {
            "topologySpread": ["topology.kubernetes.io/zone", "kubernetes.io/hostname"],
            "nodeSelector": {"pool": "mo"},
        }
    )
    constraints = tpl["spec"]["topologySpreadConstraints"]
    assert [c["topologyKey"] for c in constraints] == [
        "topology.kubernetes.io/zone",
        "kubernetes.io/hostname",
    ]
    for c in constraints:
        assert c["maxSkew"] == 1 and c["whenUnsatisfiable"] == "DoNotSchedule"
        assert c["labelSelector"] == {"matchLabels": SELECTOR}
    assert tpl["spec"]["nodeSelector"] == {"pool": "mo"}
    plain = template()["spec"]
    assert "topologySpreadConstraints" not in plain and "nodeSelector" not in plain


def test_overlay_topology_spread_constraints_override_the_generated_ones() -> None:
    mine = [{"maxSkew": 2, "topologyKey": "rack", "whenUnsatisfiable": "ScheduleAnyway"}]
    tpl = template({"topologySpread": ["zone"], "overlay": {"topologySpreadConstraints": mine}})
    assert tpl["spec"]["topologySpreadConstraints"] == mine


def test_readiness_gates() -> None:
    tpl = template(readiness_gates=["matrixorigin.io/cn-store"])
    assert tpl["spec"]["readinessGates"] == [{"conditionType": "matrixorigin.io/cn-store"}]
    assert "readinessGates" not in template()["spec"]


def test_the_python_udf_sidecar_runs_upstreams_server_on_its_port() -> None:
    assert python_udf_sidecar(cn_spec({})) is None
    assert python_udf_sidecar(cn_spec({"pythonUdfSidecar": {"enabled": False, "port": 1}})) is None
    sidecar = python_udf_sidecar(cn_spec({"pythonUdfSidecar": {"enabled": True}}))
    assert sidecar == {
        "name": layout.PYTHON_UDF_CONTAINER,
        "image": PYTHON_UDF_IMAGE,
        "command": ["/bin/bash", "-c", "python -u server.py --address=localhost:50051"],
        "ports": [{"name": "udf", "containerPort": 50051}],
    }
    custom = python_udf_sidecar(
        cn_spec(
            {
                "pythonUdfSidecar": {
                    "enabled": True,
                    "port": 6000,
                    "image": "example.com/udf:1",
                    "resources": {"limits": {"cpu": "0.5"}},
                }
            }
        )
    )
    assert custom is not None
    assert custom["command"][-1] == "python -u server.py --address=localhost:6000"
    assert custom["image"] == "example.com/udf:1" and custom["resources"] == {"limits": {"cpu": "500m"}}


def test_the_python_udf_sidecars_overlay_applies_to_it_as_to_a_main_container() -> None:
    overlay = {
        "command": ["python", "-u", "server.py", "--address=localhost:50051", "--workers=4"],
        "env": [{"name": "PYTHONPATH", "value": "/udf"}],
        "imagePullPolicy": "Always",
        "volumeMounts": [{"name": "udf-libs", "mountPath": "/udf"}],
        "readinessProbe": {"tcpSocket": {"port": 50051}},
        "mainContainerSecurityContext": {"runAsNonRoot": True},
    }
    sidecar = python_udf_sidecar(cn_spec({"pythonUdfSidecar": {"enabled": True, "overlay": overlay}}))
    assert sidecar is not None
    assert sidecar["command"] == overlay["command"]
    assert sidecar["env"] == overlay["env"] and sidecar["volumeMounts"] == overlay["volumeMounts"]
    assert sidecar["imagePullPolicy"] == "Always"
    assert sidecar["readinessProbe"] == {"tcpSocket": {"port": 50051}}
    assert sidecar["securityContext"] == {"runAsNonRoot": True}
    assert sidecar["ports"] == [{"name": "udf", "containerPort": 50051}]
