"""Carrying out a takeover: the one write of a step, and the command's loop.

``take_step`` makes the write a step (``steps.py``) calls for; both drivers
use it: the loop below (``mo-operator adopt``) and the set controllers of
``mo-operator run`` (``guard.py``). Every write names the object by uid, so a
step taken twice (two drivers, or one that resumed) does nothing the second
time.

The loop reads the namespace, decides, writes or waits, and reads again,
until no set has a step left. The operator (``mo-operator run``) must be
running: it is what rolls the released pods, with the same roll as any other
change, so the loop only decides when each set may start and what to clean
up after it.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable

from mo_operator.kube.client.client import ApiClient
from mo_operator.kube.meta.errors import Conflict, NotFound

from ..framework import resources as r
from ..framework.meta import name_of
from .kruise import SET_KINDS
from .steps import Step, StepKind, next_step
from .survey import read_states

Report = Callable[[str], None]
POLL_SECONDS = 0.2


class TakeoverTimeout(Exception):
    """The takeover made no progress (no write, no new state) for too long."""


async def take_step(client: ApiClient, namespace: str, step: Step) -> None:
    """Make the write ``step`` calls for (a step that only waits writes nothing)."""
    target = step.target
    if target is None or not step.writes:
        return
    uid = target["metadata"]["uid"]
    if step.kind is StepKind.RELEASE:
        if step.annotations:  # recorded before the workload, the only other record, goes
            await client.patch(
                SET_KINDS[step.component].sets,
                step.set_name,
                {"metadata": {"annotations": dict(step.annotations)}},
                namespace,
            )
        await client.delete(
            SET_KINDS[step.component].workload,
            name_of(target),
            namespace,
            propagation_policy="Orphan",
            uid=uid,
            missing_ok=True,
        )
    elif step.kind is StepKind.RECORD_HAKEEPER:
        await client.patch(
            r.PODS, name_of(target), {"metadata": {"annotations": dict(step.annotations)}}, namespace
        )
    elif step.kind is StepKind.ADOPT_POD and step.owner is not None:
        refs = [*(target["metadata"].get("ownerReferences") or ()), dict(step.owner)]
        meta = {"ownerReferences": refs, "resourceVersion": target["metadata"]["resourceVersion"]}
        with contextlib.suppress(Conflict, NotFound):  # changed meanwhile: decided again on the next read
            await client.patch(r.PODS, name_of(target), {"metadata": meta}, namespace)
    elif step.kind is StepKind.RETIRE_POD:
        await client.delete(r.PODS, name_of(target), namespace, uid=uid, missing_ok=True)
    elif step.kind is StepKind.COLLECT_CONFIG_MAP:
        await client.delete(r.CONFIGMAPS, name_of(target), namespace, uid=uid, missing_ok=True)


async def take_over(client: ApiClient, namespace: str, *, timeout: float, report: Report) -> None:
    """Take every set of ``namespace`` over, one after the other, in dependency order.

    ``timeout``: longest the takeover may stay on one unchanged wait."""
    waiting: str | None = None
    since = time.monotonic()
    while True:
        step = next_step(await read_states(client, namespace))
        if step is None:
            return
        message = step.describe()
        if step.writes:
            report(message)
            await take_step(client, namespace, step)
            waiting = None
            continue
        if message != waiting:
            report(message)
            waiting, since = message, time.monotonic()
        elif time.monotonic() - since > timeout:
            raise TakeoverTimeout(f"not done after {timeout:.0f}s: {message}")
        await asyncio.sleep(POLL_SECONDS)
