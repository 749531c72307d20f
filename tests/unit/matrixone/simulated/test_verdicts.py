"""What the kubelet reports for each MatrixOne pod.

A readiness gate holds a pod's Ready condition False until the named condition is True
(kubernetes.io/docs/concepts/workloads/pods/pod-lifecycle/#pod-readiness-gate); CN pods
use ``matrixorigin.io/cn-store`` as upstream does.
"""

from __future__ import annotations

from typing import Any

from mo_devkit.localcluster.simulator.behaviour import PodVerdict
from mo_devkit.simulated.verdicts import STATE_ANNOTATION, verdict
from mo_operator.matrixone.admin import WorkState
from mo_operator.matrixone.component import Component

from .factories import NS, World, cluster, component_config_map, config_map, log_pod, set_pod

KEY = (NS, "mo")


def _note(v: PodVerdict) -> str:
    note = v.annotations[STATE_ANNOTATION]
    assert note is not None
    return note


def _cn_store(v: PodVerdict) -> dict[str, Any]:
    (condition,) = (c for c in v.conditions if c["type"] == "matrixorigin.io/cn-store")
    return dict(condition)


def test_everything_ready_in_a_healthy_cluster() -> None:
    world = World()
    cluster(world)
    world.configmaps.append(component_config_map(Component.PROXY, "mo"))
    world.add(set_pod(Component.PROXY, "mo", 0))
    world.step()
    assert {name: world.verdict(name).ready for name in world.instances} == dict.fromkeys(
        world.instances, True
    )
    cn = world.verdict("mo-tp-cn-0")
    assert _cn_store(cn)["status"] == "True"
    assert cn.annotations[STATE_ANNOTATION] == "Registered: Working"


def test_log_pods_are_ready_before_the_hakeeper_but_tn_cn_and_proxy_wait() -> None:
    """A TN, CN or proxy waits for its HAKeeper; a TN's pod is Ready meanwhile, as a
    container without a readiness probe is (upstream sets none), and gives up at last."""
    world = World()
    cluster(world)
    world.configmaps.append(component_config_map(Component.PROXY, "mo"))
    world.add(set_pod(Component.PROXY, "mo", 0))
    world.remove("mo-log-2")
    world.step()
    assert world.verdict("mo-log-0").ready is True
    for name in ("mo-dn-0", "mo-tp-cn-0", "mo-proxy-0"):
        found = world.verdict(name)
        assert found.ready is (name == "mo-dn-0")
        assert _note(found).startswith("WaitingForHAKeeper: ")
        assert "ns/mo is not up" in _note(found)
    assert _cn_store(world.verdict("mo-tp-cn-0"))["reason"] == "NotRegistered"
    world.step(world.settings.hakeeper_wait_seconds)
    gave_up = world.verdict("mo-dn-0")
    assert gave_up.ready is False and gave_up.crash is not None and gave_up.crash.exit_code == 2
    assert _note(gave_up).startswith("GaveUp: ")


def test_draining_cn_keeps_running_but_its_gate_goes_false() -> None:
    world = World()
    cluster(world, cns=1)
    world.step()
    world.model.set_work_state(KEY, world.uuid("mo-tp-cn-0"), WorkState.DRAINING, None, world.now)
    found = world.verdict("mo-tp-cn-0")
    assert found.ready is True
    assert _cn_store(found) == {"type": "matrixorigin.io/cn-store", "status": "False", "reason": "Draining"}
    world.model.set_work_state(KEY, world.uuid("mo-tp-cn-0"), WorkState.WORKING, None, world.now)
    assert _cn_store(world.verdict("mo-tp-cn-0"))["status"] == "True"


def test_pods_that_cannot_run_are_never_ready() -> None:
    world = World()
    cluster(world, cns=1)
    world.bad_images.append("*:9.9.9-bad")
    world.configmaps.append(config_map("broken", {"config.toml": "not = = toml"}))
    world.add(set_pod(Component.CN, "mo-tp", 1, cm_name="broken"))
    world.add(set_pod(Component.CN, "mo-tp", 2, image="matrixorigin/matrixone:9.9.9-bad"))
    world.add(log_pod(3, image="matrixorigin/matrixone:9.9.9-bad"))
    for _ in range(3):
        world.step()
    broken, bad, bad_log = world.verdict("mo-tp-cn-1"), world.verdict("mo-tp-cn-2"), world.verdict("mo-log-3")
    assert (broken.ready, bad.ready, bad_log.ready) == (False, False, False)
    assert _note(broken).startswith("InvalidConfig: ")
    assert _cn_store(bad)["reason"] == "BadImage"
    assert (
        bad_log.annotations[STATE_ANNOTATION]
        == "BadImage: image matrixorigin/matrixone:9.9.9-bad is marked bad"
    )


def test_a_container_not_yet_running_is_not_ready() -> None:
    world = World()
    cluster(world, cns=0)
    world.add(set_pod(Component.CN, "mo-tp", 0, running=False))
    world.step()
    found = world.verdict("mo-tp-cn-0")
    assert found.ready is False and found.annotations[STATE_ANNOTATION] == "NotRunning"


def test_webui_is_ready_with_a_valid_config() -> None:
    world = World()
    world.configmaps.append(config_map("w-webui-config", {"config.toml": "[db]\nport = 6001\n"}))
    world.add(set_pod(Component.WEBUI, "w", 0, cm_name="w-webui-config"))
    world.step()
    assert world.verdict("w-webui-0").ready is True


def test_cn_store_condition_can_be_left_to_the_operator() -> None:
    world = World()
    cluster(world, cns=1)
    world.step()
    found = verdict(world.instances["mo-tp-cn-0"], world.model, cn_store_condition=False)
    assert found.ready is True and found.conditions == ()


def test_a_process_that_cannot_run_exits_with_its_problem_in_its_log() -> None:
    """MatrixOne panics on a config it cannot use (exit code 2, as a Go panic)
    and an image that is not MatrixOne fails its start (exit code 1): the
    main container crash-loops, the problem is the last thing it prints."""
    world = World()
    cluster(world, cns=1)
    world.bad_images.append("*:9.9.9-bad")
    world.configmaps.append(config_map("broken", {"config.toml": "not = = toml"}))
    world.add(set_pod(Component.CN, "mo-tp", 1, cm_name="broken"))
    world.add(log_pod(3, image="matrixorigin/matrixone:9.9.9-bad"))
    world.step()
    broken, bad_log = world.verdict("mo-tp-cn-1"), world.verdict("mo-log-3")
    assert broken.crash is not None and bad_log.crash is not None
    assert broken.crash.exit_code == 2 and bad_log.crash.exit_code == 1
    assert broken.crash.container == bad_log.crash.container == "main"
    assert broken.crash.log == _note(broken) and broken.crash.log.startswith("InvalidConfig: ")
    assert bad_log.crash.log == "BadImage: image matrixorigin/matrixone:9.9.9-bad is marked bad"
    assert broken.crash.message == ""  # MatrixOne writes no termination-message file
    assert world.verdict("mo-tp-cn-0").crash is None


def test_a_missing_config_map_is_not_a_crash() -> None:
    """The kubelet never starts a container whose ConfigMap volume is missing."""
    world = World()
    cluster(world, cns=0)
    world.add(set_pod(Component.CN, "mo-tp", 0, cm_name="nowhere"))
    world.step()
    found = world.verdict("mo-tp-cn-0")
    assert _note(found).startswith("ConfigMapMissing: ")
    assert found.ready is False and found.crash is None
