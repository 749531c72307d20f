"""The admin interface's answer types: MatrixOne's enums and the helpers controllers use."""

from __future__ import annotations

from mo_operator.matrixone.admin import (
    CNLoad,
    CNStore,
    HAKeeperPhase,
    HAKeeperState,
    LogStore,
    NodeState,
    TNStore,
    WorkState,
    cn_labels_from_spec,
)


def test_enums_carry_matrixone_numbers_and_names() -> None:
    """Numbers from matrixone proto/metadata.proto (WorkState) and proto/logservice.proto."""
    assert [(s.value, s.mo_name) for s in WorkState] == [
        (0, "Unknown"),
        (1, "Working"),
        (2, "Draining"),
        (3, "Drained"),
    ]
    assert (NodeState.NORMAL.value, NodeState.TIMEOUT.value) == (0, 1)
    assert HAKeeperPhase.RUNNING.value == 4


def _state() -> HAKeeperState:
    return HAKeeperState(
        phase=HAKeeperPhase.RUNNING,
        tick=100,
        log_stores=(
            LogStore("l0", "a:32001", 99, NodeState.NORMAL),
            LogStore("l1", "b:32001", 10, NodeState.TIMEOUT),
        ),
        tn_stores=(TNStore("t0", "c:41010", 99, NodeState.NORMAL),),
        cn_stores=(
            CNStore("c0", "d:6002", "d:6001", 99, NodeState.NORMAL, WorkState.WORKING),
            CNStore("c1", "e:6002", "e:6001", 98, NodeState.NORMAL, WorkState.DRAINING, labels={"k": ("v",)}),
            CNStore("c2", "f:6002", "f:6001", 3, NodeState.TIMEOUT, WorkState.WORKING),
        ),
    )


def test_up_stores_by_uuid() -> None:
    state = _state()
    assert state.bootstrapped
    assert state.up_log_uuids() == {"l0"}
    assert state.up_tn_uuids() == {"t0"}
    assert state.up_cn_uuids() == {"c0", "c1"}
    found = state.cn("c1")
    assert found is not None and found.work_state is WorkState.DRAINING
    assert state.cn("missing") is None
    assert not HAKeeperState(phase=HAKeeperPhase.BOOTSTRAPPING, tick=0).bootstrapped


def test_cn_load_is_idle_only_when_everything_is_zero() -> None:
    assert CNLoad(0).idle
    assert not CNLoad(1).idle
    assert not CNLoad(0, pipelines=1).idle
    assert not CNLoad(0, replicas=2).idle


def test_cn_labels_from_spec() -> None:
    spec_labels = [
        {"key": "role", "values": ["etl", "batch"]},
        {"key": "empty"},
        {"values": ["no-key"]},
        "junk",
    ]
    assert cn_labels_from_spec(spec_labels) == {"role": ("etl", "batch"), "empty": ()}
    assert cn_labels_from_spec(None) == {}
