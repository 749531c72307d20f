"""The kubelet's plug-in: verdicts by pod UID, nothing for other pods."""

from __future__ import annotations

from mo_devkit.localcluster.simulator.behaviour import PodBehaviour, PodVerdict
from mo_devkit.simulated.behaviour import MatrixOneBehaviour
from mo_operator.matrixone.component import Component

from .factories import set_pod


def test_judges_only_matrixone_pods_and_asks_for_a_refresh_on_unseen_ones() -> None:
    asked: list[int] = []
    behaviour = MatrixOneBehaviour(lambda: asked.append(1))
    assert isinstance(behaviour, PodBehaviour)
    assert behaviour.judge({"metadata": {"name": "nginx", "uid": "u"}}, None) is None
    cn = set_pod(Component.CN, "c", 0)
    assert behaviour.judge(cn, None) == PodVerdict(ready=False)
    assert asked == [1]
    seen = PodVerdict(ready=True)
    assert behaviour.update({cn["metadata"]["uid"]: seen})
    assert behaviour.judge(cn, None) is seen
    assert not behaviour.update({cn["metadata"]["uid"]: PodVerdict(ready=True)}), "equal verdicts: no resync"
    behaviour.enabled = False
    assert behaviour.judge(cn, None) is None
