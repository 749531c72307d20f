"""The timings scenarios run with: a simulator, a simulated MatrixOne and an
operator all much faster than production, so that a scenario of rolls,
drains and failovers takes seconds, and the same on every control plane."""

from __future__ import annotations

from mo_operator.controllers.common.settings import Settings as OperatorSettings
from mo_operator.matrixone.simulated.state import Settings as MOSettings

FAST_SIMULATOR = {
    "nodes": 3,
    "start_delay": 0.05,
    "ready_delay": 0.05,
    "run_duration": 0.1,
    "time_scale": 0.002,
}
"""The simulated kubelets' timings (on a real API server the controllers are the real ones)."""
MO_SETTINGS = MOSettings(store_timeout=1.0, tick_seconds=0.1, drain_seconds=1.0)
OPERATOR_SETTINGS = OperatorSettings(
    busy_poll_seconds=0.2, poll_seconds=1.0, rollout_stall_seconds=3.0, drain_timeout_seconds=30.0
)
