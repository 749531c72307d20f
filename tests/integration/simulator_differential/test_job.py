"""Jobs (pkg/controller/job, 1.28; docs: concepts/workloads/controllers/job):
a Job whose pods fail is retried after the pod failure back-off (10 s, then
20 s... on the real controller; scaled on the simulator) until more pods
failed than ``backoffLimit`` allows, then fails with BackoffLimitExceeded and
makes no more pods; a Job whose pods succeed completes. Finished pods are
counted through ``status.uncountedTerminatedPods`` and their tracking
finalizer, in that order."""

from __future__ import annotations

from functools import partial
from typing import Any

from mo_devkit.localcluster.simulator.core.kinds import JOB, POD
from mo_devkit.localcluster.simulator.core.objects import Obj, find_condition, meta, status_of
from mo_devkit.localcluster.simulator.core.pods import phase_of

from .harness import REQUIRES_REAL, Event, Side, both, condition_summary

pytestmark = REQUIRES_REAL

FAILING, PASSING = "registry.local/job:fail", "registry.local/job:ok"
TRACKING = "batch.kubernetes.io/job-tracking"


def job(side: Side, name: str, image: str, **spec: Any) -> Obj:
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name},
        "spec": {
            "template": {
                "metadata": {"labels": {"job": name}},
                "spec": side.place(
                    {
                        "containers": [{"name": "main", "image": image}],
                        "restartPolicy": "Never",
                        "terminationGracePeriodSeconds": 5,
                    }
                ),
            },
            **spec,
        },
    }


def job_state(job: Obj) -> str:
    """What the controller decided, without the timestamps and the ``ready``
    count (a pod is ready for a tenth of a second; the real controller batches
    pod updates for a second and may never see it)."""
    st = status_of(job)
    uncounted = st.get("uncountedTerminatedPods") or {}
    conds = ",".join(f"{t}={s}/{r}" for t, s, r in condition_summary(job, "Complete", "Failed"))
    return (
        f"job active={st.get('active', 0)} succeeded={st.get('succeeded', 0)} failed={st.get('failed', 0)}"
        f" uncounted={len(uncounted.get('succeeded') or [])}/{len(uncounted.get('failed') or [])} {conds}"
    )


def step(side: Side, e: Event) -> str | None:
    """The Job controller's writes and the pod outcomes it reacts to."""
    if e.kind == "Job":
        return job_state(e.obj)
    if e.kind == "Pod":
        if e.type == "ADDED":
            return f"+pod{side.ordinal(e.obj)}"
        if phase_of(e.obj) in ("Succeeded", "Failed"):
            kept = "tracked" if TRACKING in (meta(e.obj).get("finalizers") or []) else "released"
            return f"pod{side.ordinal(e.obj)} {phase_of(e.obj)} {kept}"
    return None


def outcome(side: Side, name: str) -> dict[str, Any]:
    j = side.get(JOB, name) or {}
    st = status_of(j)
    return {
        "status": {k: st.get(k, 0) for k in ("active", "ready", "succeeded", "failed")},
        "uncounted": st.get("uncountedTerminatedPods") or {},
        "conditions": [
            (c.get("type"), c.get("status"), c.get("reason"), c.get("message"))
            for c in st.get("conditions") or []
        ],
        "startTime": "startTime" in st,
        "completionTime": "completionTime" in st,
        "pods": sorted(
            (side.ordinal(p), phase_of(p), TRACKING in (meta(p).get("finalizers") or []))
            for p in side.recorder.objects(POD)
        ),
    }


def finished(side: Side, name: str, ctype: str) -> bool:
    cond = find_condition(status_of(side.get(JOB, name) or {}).get("conditions"), ctype)
    return cond is not None and cond.get("status") == "True"


async def failing_job(side: Side) -> dict[str, Any]:
    side.sim.rules.add(effect="Fail", namespace=side.namespace, image=FAILING, exit_code=3)
    await side.create(JOB, job(side, "fails", FAILING, backoffLimit=2))
    await side.wait(lambda: finished(side, "fails", "Failed"), "the Job fails", timeout=90)
    # The last pod's finalizer goes in the same sync as the condition is written.
    await side.wait(
        lambda: outcome(side, "fails")["pods"] == [(i, "Failed", False) for i in (1, 2, 3)], "3 failed pods"
    )
    return {"outcome": outcome(side, "fails"), "timeline": side.recorder.timeline(partial(step, side))}


async def passing_job(side: Side) -> dict[str, Any]:
    await side.create(JOB, job(side, "passes", PASSING, completions=2, parallelism=1))
    await side.wait(lambda: finished(side, "passes", "Complete"), "the Job completes")
    await side.wait(lambda: all(not tracked for _, _, tracked in outcome(side, "passes")["pods"]), "released")
    return {"outcome": outcome(side, "passes"), "timeline": side.recorder.timeline(partial(step, side))}


async def test_failing_pods_are_retried_up_to_the_backoff_limit(sides: tuple[Side, Side]) -> None:
    """backoffLimit 2: three pods fail one after the other (after back-offs of
    10 s and 20 s on the real controller), then Failed/BackoffLimitExceeded and
    no fourth pod."""
    embedded, real = await both(failing_job, *sides)
    assert real["outcome"]["conditions"] == [
        ("Failed", "True", "BackoffLimitExceeded", "Job has reached the specified backoff limit")
    ]
    assert real["outcome"]["status"] == {"active": 0, "ready": 0, "succeeded": 0, "failed": 3}
    assert embedded == real, f"embedded: {embedded}\nreal: {real}"


async def test_succeeding_pods_complete_the_job(sides: tuple[Side, Side]) -> None:
    """completions 2, parallelism 1: one pod after the other, then Complete with a completionTime."""
    embedded, real = await both(passing_job, *sides)
    assert real["outcome"]["status"] == {"active": 0, "ready": 0, "succeeded": 2, "failed": 0}
    assert real["outcome"]["completionTime"]
    assert embedded == real, f"embedded: {embedded}\nreal: {real}"
