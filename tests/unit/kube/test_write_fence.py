"""The leader election fence holds for every attempt of a write, not only when it is asked for.

A write that waits between attempts (a 429's Retry-After, a backoff, a process frozen
meanwhile) must not go out once the replica lost the right to write.
"""

from __future__ import annotations

import asyncio

import httpx2
import pytest
from lightkube.resources.core_v1 import ConfigMap

from mo_operator.kube.manager.adapters import ClientEventSink, WriteFence, WriteRefused, fenced
from mo_operator.kube.recorder.events import EventRecorder

from .test_client import Harness, status

CM = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "team"}}


async def test_a_retry_after_the_lease_was_lost_is_not_sent() -> None:
    leading = [True]
    h = Harness(httpx2.Response(429, headers={"Retry-After": "1"}, json=status(429, "TooManyRequests")))
    fence = WriteFence(lambda: leading[0])
    fenced_client = h.client.with_write_hook(fence)

    async def lose_the_lease_while_waiting(delay: float) -> None:
        h.sleeps.append(delay)
        leading[0] = False

    h.client.rest._sleep = lose_the_lease_while_waiting
    with pytest.raises(WriteRefused):
        await fenced_client.create(ConfigMap, CM)
    assert len(h.requests) == 1, "the first attempt went out, the retry did not"
    assert h.sleeps == [1.0] and fence.refused == 1


async def test_a_write_refused_up_front_sends_nothing() -> None:
    h = Harness()
    with pytest.raises(WriteRefused):
        await fenced(h.client, lambda: False).apply(CM)
    assert h.requests == []


async def test_the_fence_does_not_outlive_the_write() -> None:
    """The unfenced client (the lease's own) still writes after a fenced write was refused."""
    h = Harness()
    with pytest.raises(WriteRefused):
        await fenced(h.client, lambda: False).create(ConfigMap, CM)
    await h.client.create(ConfigMap, CM)
    assert len(h.requests) == 1


async def test_an_event_the_fence_refuses_is_dropped_not_retried() -> None:
    """A replica that lost its lease never gets it back: retrying its Events (twelve
    tries, backing off to 10 s) only held up its exit."""
    h = Harness()
    recorder = EventRecorder(ClientEventSink(fenced(h.client, lambda: False)), component="t")
    recorder.event(CM, "Normal", "Created", "made it")
    await asyncio.wait_for(recorder.flush(), 1.0)
    assert h.requests == [] and recorder.dropped == 0
