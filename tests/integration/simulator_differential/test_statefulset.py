"""A StatefulSet (OrderedReady, RollingUpdate) rolled onto an image whose pods
never become ready, then reverted (docs: concepts/workloads/controllers/
statefulset, "Forced rollback"): the controller keeps waiting for the pod that
was tried with the bad template, even though the template is good again, until
someone deletes that pod; then it recreates it from the reverted revision."""

from __future__ import annotations

from functools import partial
from typing import Any

import pytest

from mo_devkit.localcluster.simulator.core.kinds import CONTROLLER_REVISION, POD, STATEFULSET
from mo_devkit.localcluster.simulator.core.objects import (
    Obj,
    generation_of,
    is_deleting,
    name_of,
    status_of,
    uid_of,
)
from mo_devkit.localcluster.simulator.core.pods import is_running_and_ready, phase_of

from .harness import REQUIRES_REAL, Side, both, image_of

pytestmark = REQUIRES_REAL

GOOD, BROKEN = "registry.local/web:v1", "registry.local/web:broken"
V2 = "registry.local/web:v2"
PROBE = {"exec": {"command": ["true"]}, "periodSeconds": 1}
STATUS_FIELDS = (
    "observedGeneration",
    "replicas",
    "readyReplicas",
    "availableReplicas",
    "currentReplicas",
    "updatedReplicas",
)


def statefulset(side: Side, image: str, policy: str, probe: bool = True) -> Obj:
    container: Obj = {"name": "web", "image": image}
    if probe:
        container["readinessProbe"] = PROBE
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": "web"},
        "spec": {
            "replicas": 3,
            "serviceName": "web",
            "podManagementPolicy": policy,
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}},
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": side.place(
                    {
                        "containers": [container],
                        # kube-controller-manager 1.28 deletes a StatefulSet pod in a
                        # terminal phase by name (no UID precondition) and creates its
                        # replacement in the same sync; the kubelet writes that phase
                        # while a deleted pod terminates, so a sync from a cache that
                        # has not seen the old pod go deletes the replacement instead
                        # (one run in eight here; the simulator deletes by UID).
                        # Without a grace period a pod goes at once, with no terminal
                        # phase: that race (timing, not order) stays out.
                        "terminationGracePeriodSeconds": 0,
                    }
                ),
            },
        },
    }


def snapshot(side: Side) -> dict[str, Any]:
    """The set's status with revisions named by their image, its pods, its revisions."""
    sts = side.get(STATEFULSET, "web") or {}
    st = status_of(sts)
    images = side.recorder.revision_images()
    return {
        "status": {f: st.get(f, 0) for f in STATUS_FIELDS},
        "currentRevision": images.get(st.get("currentRevision", ""), st.get("currentRevision")),
        "updateRevision": images.get(st.get("updateRevision", ""), st.get("updateRevision")),
        "pods": sorted(
            (name_of(p), image_of(p.get("spec") or {}), phase_of(p), is_running_and_ready(p), is_deleting(p))
            for p in side.recorder.objects(POD)
        ),
        "revisions": sorted(
            (images[name_of(r)], int(r.get("revision") or 0))
            for r in side.recorder.objects(CONTROLLER_REVISION)
        ),
    }


def settled(side: Side, generation: int, *, ready: int, update: str, updated: int) -> bool:
    """The controller has seen ``generation`` and its status says so."""
    sts = side.get(STATEFULSET, "web") or {}
    st = status_of(sts)
    return (
        generation_of(sts) == generation
        and st.get("observedGeneration") == generation
        and st.get("readyReplicas", 0) == ready
        and side.recorder.revision_images().get(st.get("updateRevision", "")) == update
        and st.get("updatedReplicas", 0) == updated
    )


def latest_revision(side: Side) -> str:
    """The image of the highest-numbered ControllerRevision: a revert renumbers the old one."""
    revisions = side.recorder.objects(CONTROLLER_REVISION)
    latest = max(revisions, key=lambda r: int(r.get("revision") or 0), default=None)
    return side.recorder.revision_images().get(name_of(latest or {}), "")


def pod_is(side: Side, name: str, image: str, phase: str, *, ready: bool) -> Obj | None:
    p = side.get(POD, name)
    if p is None or is_deleting(p) or image_of(p.get("spec") or {}) != image or phase_of(p) != phase:
        return None
    return p if is_running_and_ready(p) == ready else None


async def set_image(side: Side, image: str, policy: str, probe: bool) -> None:
    template = statefulset(side, image, policy, probe)["spec"]["template"]
    await side.patch(STATEFULSET, "web", {"spec": {"template": template}})


async def rollback(side: Side, effect: str, policy: str, probe: bool = True) -> dict[str, Any]:
    """Roll onto BROKEN, revert to GOOD, and (OrderedReady) delete the stuck pod."""
    side.sim.rules.add(effect=effect, namespace=side.namespace, image=BROKEN)
    await side.create(STATEFULSET, statefulset(side, GOOD, policy, probe))
    await side.wait(lambda: settled(side, 1, ready=3, update=GOOD, updated=3), "3 pods ready")
    created = snapshot(side)

    await set_image(side, BROKEN, policy, probe)
    phase = "Pending" if effect == "ImagePullError" else "Running"
    await side.wait(lambda: pod_is(side, "web-2", BROKEN, phase, ready=False), "web-2 has the broken image")
    await side.wait(lambda: settled(side, 2, ready=2, update=BROKEN, updated=1), "the roll stopped at web-2")
    stuck = snapshot(side)

    await set_image(side, GOOD, policy, probe)
    if policy == "OrderedReady":
        # The sync that records generation 3 is the one that would delete web-2; it
        # renumbered the v1 revision first, which another watch may bring later.
        await side.wait(
            lambda: settled(side, 3, ready=2, update=GOOD, updated=2) and latest_revision(side) == GOOD,
            "the revert is observed",
        )
        reverted = snapshot(side)
        broken = side.get(POD, "web-2")
        assert broken is not None
        await side.delete(POD, "web-2", uid=uid_of(broken))  # a person's forced rollback
    await side.wait(lambda: settled(side, 3, ready=3, update=GOOD, updated=3), "web-2 is back on v1")
    await side.wait(
        lambda: status_of(side.get(STATEFULSET, "web") or {}).get("currentReplicas") == 3,
        "the roll completes",
    )
    rolled_back = snapshot(side)

    images = side.recorder.revision_images()
    rec = side.recorder
    pods = rec.lifecycle(POD, lambda p: f"{name_of(p)}@{image_of(p.get('spec') or {})}")
    return {
        "created": created,
        "stuck": stuck,
        "reverted": reverted if policy == "OrderedReady" else None,
        "rolled back": rolled_back,
        # Parallel creates pods concurrently: only each pod's own history has an order.
        "pods": pods if policy == "OrderedReady" else sorted(pods, key=lambda e: e[1:].split("@")[0]),
        "revisions": rec.history(
            STATEFULSET,
            lambda s: (
                images.get(status_of(s).get("currentRevision", "")),
                images.get(status_of(s).get("updateRevision", "")),
            ),
        ),
    }


@pytest.mark.parametrize(
    ("effect", "probe"),
    [("NeverReady", True), ("CrashLoop", True), ("CrashLoop", False), ("ImagePullError", True)],
)
async def test_ordered_ready_keeps_the_pod_tried_with_a_bad_template(
    sides: tuple[Side, Side], effect: str, probe: bool
) -> None:
    """After the revert web-2 (broken, not ready) is not replaced, while the
    status already says currentRevision == updateRevision == v1 with 2 updated
    replicas; deleting web-2 brings it back on v1."""
    embedded, real = await both(partial(rollback, effect=effect, policy="OrderedReady", probe=probe), *sides)
    assert real["pods"] == [
        f"+web-0@{GOOD}",
        f"+web-1@{GOOD}",
        f"+web-2@{GOOD}",
        f"-web-2@{GOOD}",
        f"+web-2@{BROKEN}",
        f"-web-2@{BROKEN}",
        f"+web-2@{GOOD}",
    ], "only a deletion replaces the pod tried with the bad template"
    assert real["reverted"]["pods"][2][:2] == ("web-2", BROKEN)
    assert real["reverted"]["currentRevision"] == real["reverted"]["updateRevision"] == GOOD
    assert embedded == real, f"embedded: {embedded}\nreal: {real}"


async def test_parallel_replaces_the_pod_tried_with_a_bad_template(sides: tuple[Side, Side]) -> None:
    """With Parallel pod management nothing waits for the broken pod: the
    rolling update replaces it with the reverted revision by itself."""
    embedded, real = await both(partial(rollback, effect="NeverReady", policy="Parallel"), *sides)
    assert real["pods"] == [
        f"+web-0@{GOOD}",
        f"+web-1@{GOOD}",
        f"+web-2@{GOOD}",
        f"-web-2@{GOOD}",
        f"+web-2@{BROKEN}",
        f"-web-2@{BROKEN}",
        f"+web-2@{GOOD}",
    ], "the revert replaces web-2 without help"
    assert embedded == real, f"embedded: {embedded}\nreal: {real}"


async def partitioned(side: Side) -> dict[str, Any]:
    """A set numbered from 2 (``ordinals.start``) rolled under a partition: the
    partition counts pods from the set's first one, not from ordinal 0."""
    sts = statefulset(side, GOOD, "Parallel")
    sts["spec"].update(replicas=2, ordinals={"start": 2})
    sts["spec"]["updateStrategy"]["rollingUpdate"]["partition"] = 2
    await side.create(STATEFULSET, sts)
    await side.wait(lambda: settled(side, 1, ready=2, update=GOOD, updated=2), "web-2 and web-3 ready")
    template = statefulset(side, V2, "Parallel")["spec"]["template"]
    await side.patch(STATEFULSET, "web", {"spec": {"template": template}})
    await side.wait(lambda: settled(side, 2, ready=2, update=V2, updated=0), "the roll is held")
    held = snapshot(side)
    await side.patch(STATEFULSET, "web", {"spec": {"updateStrategy": {"rollingUpdate": {"partition": 1}}}})
    await side.wait(lambda: settled(side, 3, ready=2, update=V2, updated=1), "the second pod rolled")
    return {"held": held, "index 1": snapshot(side)}


async def test_a_partition_counts_from_the_first_ordinal_of_a_set_numbered_from_2(
    sides: tuple[Side, Side],
) -> None:
    """Partition 2 holds both pods of a set running ordinals 2 and 3 (it is an index into
    the set's pods, as kube-controller-manager 1.28 compares it); partition 1 lets the
    second pod (web-3) roll and keeps the first (web-2)."""
    embedded, real = await both(partitioned, *sides)
    assert [p[:2] for p in real["held"]["pods"]] == [("web-2", GOOD), ("web-3", GOOD)]
    assert [p[:2] for p in real["index 1"]["pods"]] == [("web-2", GOOD), ("web-3", V2)]
    assert embedded == real, f"embedded: {embedded}\nreal: {real}"
