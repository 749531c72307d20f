"""One simulated process per MatrixOne pod: identity, whether it runs, whether it could."""

from __future__ import annotations

from mo_devkit.simulated.instances import Instance, observe_instance
from mo_devkit.simulated.view import Snapshot
from mo_operator.matrixone import identity, labels, layout
from mo_operator.matrixone.component import Component

from .factories import NS, component_config_map, log_config_maps, log_pod, logset_services, node, pod, set_pod


def _view(*pods: dict[str, object], ready_node: bool = True) -> Snapshot:
    return Snapshot.of(
        pods=pods,
        configmaps=[
            *log_config_maps(),
            component_config_map(Component.TN, "mo"),
            component_config_map(Component.CN, "mo-tp"),
            component_config_map(Component.PROXY, "mo"),
        ],
        services=logset_services(),
        nodes=[node(ready=ready_node)],
    )


def _instance(pod: dict[str, object], view: Snapshot) -> Instance:
    found = observe_instance(pod, view)
    assert found is not None
    return found


def test_store_uuids_are_the_ones_start_sh_computes() -> None:
    """Same schemes as identity.py, which the start-script tests pin to the shell's output."""
    log, tn, cn, proxy = (
        log_pod(2),
        set_pod(Component.TN, "mo", 1),
        set_pod(Component.CN, "mo-tp", 0),
        set_pod(Component.PROXY, "mo", 0),
    )
    view = _view(log, tn, cn, proxy)
    found = {p["metadata"]["name"]: observe_instance(p, view) for p in (log, tn, cn, proxy)}
    assert {k: v.uuid for k, v in found.items() if v is not None} == {
        "mo-log-2": identity.log_store_uuid(2),
        "mo-dn-1": identity.tn_store_uuid(1),
        "mo-tp-cn-0": identity.cn_store_uuid("mo-tp-cn-0", "mo-tp", NS),
        "mo-proxy-0": identity.proxy_uuid("mo-proxy-0", NS),
    }


def test_hostname_uuid_hashes_the_dns_name() -> None:
    tn = set_pod(Component.TN, "mo", 0, env={layout.ENV_HOSTNAME_UUID: "y"})
    found = observe_instance(tn, _view(tn))
    assert found is not None
    assert found.uuid == identity.dns_store_uuid("mo-dn-0.mo-dn-headless.ns.svc")


def test_pods_without_both_labels_are_not_matrixone() -> None:
    plain = set_pod(Component.CN, "mo-tp", 0)
    del plain["metadata"]["labels"][labels.INSTANCE]
    assert observe_instance(plain, _view()) is None
    assert observe_instance({"metadata": {"name": "x", "labels": {}}}, _view()) is None


def test_tnset_label_value_is_accepted() -> None:
    tn = set_pod(Component.TN, "mo", 0)
    tn["metadata"]["labels"][labels.COMPONENT] = "TNSet"
    found = observe_instance(tn, _view(tn))
    assert found is not None and found.component is Component.TN


def test_bad_image_wins_over_a_good_config() -> None:
    cn = set_pod(Component.CN, "mo-tp", 0, image="matrixorigin/matrixone:2.0.1-broken")
    found = observe_instance(cn, _view(cn), bad_images=["*-broken"])
    assert found is not None and found.problem is not None and found.problem.reason == "BadImage"
    assert not found.serving
    healthy = observe_instance(cn, _view(cn), bad_images=["*:9.9.9"])
    assert healthy is not None and healthy.problem is None and healthy.serving


def test_running_needs_a_running_container_a_ready_node_and_no_deletion() -> None:
    """A node whose kubelet stopped reporting is marked Ready=Unknown by the node
    lifecycle controller (kubernetes.io/docs/concepts/architecture/nodes/#condition)."""
    cn = set_pod(Component.CN, "mo-tp", 0)
    assert _instance(cn, _view(cn)).running
    assert not _instance(cn, _view(cn, ready_node=False)).running
    waiting = set_pod(Component.CN, "mo-tp", 1, running=False)
    assert not _instance(waiting, _view(waiting)).running
    cn["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    assert not _instance(cn, _view(cn)).running


def test_log_store_serves_only_while_its_pod_is_ready() -> None:
    ready, unready = log_pod(0), log_pod(1, ready=False)
    view = _view(ready, unready)
    assert _instance(ready, view).serving
    assert not _instance(unready, view).serving
    cn = set_pod(Component.CN, "mo-tp", 0, ready=False)
    assert _instance(cn, _view(cn)).serving


def test_process_changes_with_a_container_restart() -> None:
    a = set_pod(Component.CN, "mo-tp", 0)
    b = set_pod(Component.CN, "mo-tp", 0, restarts=1)
    b["metadata"]["uid"] = a["metadata"]["uid"]
    first, second = observe_instance(a, _view(a)), observe_instance(b, _view(b))
    assert first is not None and second is not None and first.process != second.process


def test_log_pod_without_ordinal_has_no_identity() -> None:
    odd = pod(Component.LOG, "mo", "mo-log-x", volumes={layout.CONFIG_VOLUME: "mo-log-config"})
    found = observe_instance(odd, _view(odd))
    assert found is not None and found.problem is not None and found.problem.reason == "NoIdentity"


def test_cn_addresses_use_the_pod_ip_and_tn_its_dns_name() -> None:
    cn, tn = set_pod(Component.CN, "mo-tp", 0), set_pod(Component.TN, "mo", 0)
    view = _view(cn, tn)
    found_cn, found_tn = observe_instance(cn, view), observe_instance(tn, view)
    assert found_cn is not None and found_tn is not None
    ip = cn["status"]["podIP"]
    assert (found_cn.service_address, found_cn.sql_address) == (f"{ip}:6002", f"{ip}:6001")
    assert found_tn.service_address == "mo-dn-0.mo-dn-headless.ns.svc:41010"
    assert found_tn.logtail_address == "mo-dn-0.mo-dn-headless.ns.svc:32003"
