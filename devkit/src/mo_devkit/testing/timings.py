"""The timings scenarios run with: a simulator, a simulated MatrixOne and an
operator all much faster than production, so that a scenario of rolls,
drains and failovers takes seconds, and the same on every control plane."""

from __future__ import annotations

from mo_devkit.simulated.cluster import FAST_SIMULATOR as _CONTROL_PLANE_FAST
from mo_devkit.simulated.state import Settings as MOSettings
from mo_operator.settings import Settings as OperatorSettings

FAST_SIMULATOR = {**_CONTROL_PLANE_FAST, "nodes": 3, "node_pods": 110, "run_duration": 0.1}
"""The simulated kubelets' timings (on a real API server the controllers are the real ones):
those of ``control-plane --fast``, on three nodes of a kubelet's default size (110 pods)
rather than its four large ones, with quicker jobs."""
MO_SETTINGS = MOSettings(store_timeout=1.0, tick_seconds=0.1, drain_seconds=1.0)
OPERATOR_SETTINGS = OperatorSettings(
    busy_poll_seconds=0.2,
    poll_seconds=1.0,
    rollout_stall_seconds=3.0,
    drain_timeout_seconds=30.0,
    rpc_patience_seconds=4.0,
)
