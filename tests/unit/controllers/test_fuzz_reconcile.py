"""Property test of the reconcilers with the spec fuzzers' objects (``api/fuzzing.py``:
mutations of every example, with Go's integer limits, 64 KB strings, long digit
strings, unicode and names at and past each derived limit), as they reach a
controller when the webhook was off: one round of each set's and the cluster's
actor, against a bootstrapped log service, never raises anything but the terminal
error of a bad spec, whose message names a field; every object a round writes has
names and labels Kubernetes accepts; and no round's memory grows with what the spec
asks (tracemalloc's peak per round stays under a bound).

Fewer examples per kind than the admission fuzzers' 1,000 (a round builds and
renders whole objects); the admission they share is fuzzed there at 1,000."""

from __future__ import annotations

import asyncio
import copy
import tracemalloc
from collections.abc import Iterator
from typing import Any, cast

import pytest
from api.fuzzing import mutated
from hypothesis import HealthCheck, given, settings

from mo_operator.api.validation.names import dns1035_label, dns1123_label, dns1123_subdomain, label_errors
from mo_operator.controllers.backup import BackupScheduleActor
from mo_operator.controllers.cluster import MatrixOneClusterActor
from mo_operator.controllers.cnset import CNSetActor
from mo_operator.controllers.dnset import DNSetActor
from mo_operator.controllers.logset import LogSetActor
from mo_operator.controllers.proxyset import ProxySetActor
from mo_operator.kube.controller.outcome import TerminalError
from mo_operator.matrixone.admin import HAKeeperPhase, HAKeeperState

from .cnset_fakes import logset
from .controller_fakes import FakeCaches, RecordingClient, context, make_env
from .pool_fakes import FakeAdmin

Obj = dict[str, Any]
ROUND_MEMORY_BOUND = 64 * 1024 * 1024
"""Bytes one round may allocate at its peak: whole objects, not a thousand pods."""
ACTORS: dict[str, Any] = {
    "LogSet": LogSetActor,
    "DNSet": DNSetActor,
    "CNSet": CNSetActor,
    "ProxySet": ProxySetActor,
    "MatrixOneCluster": MatrixOneClusterActor,
    "BackupSchedule": BackupScheduleActor,
}
FIELD_ROOTS = ("spec", "metadata", "deps", "status", "<root>", "apiVersion", "kind")


class AnyAdmin(FakeAdmin):
    """A running HAKeeper with no store yet, whatever the address asked."""

    def admin(self, address: str) -> AnyAdmin:
        return self

    async def hakeeper_state(self) -> HAKeeperState:
        return HAKeeperState(HAKeeperPhase.RUNNING, 1)


@pytest.fixture(scope="module")
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    loop = asyncio.new_event_loop()
    yield loop
    loop.close()


def _as_stored(obj: Any, kind: str) -> Obj:
    """What the cache holds: the API server gave it metadata (a DNS subdomain name, a
    namespace, a uid) and a kind, whatever the rest says."""
    out: Obj = copy.deepcopy(obj) if isinstance(obj, dict) else {}
    meta = out.get("metadata") if isinstance(out.get("metadata"), dict) else {}
    name = meta.get("name")
    if not isinstance(name, str) or dns1123_subdomain(name):
        name = "mo"
    out["metadata"] = {
        "name": name,
        "namespace": "ns",
        "uid": "uid-x",
        "generation": 1,
        "resourceVersion": "1",
    }
    out["kind"], out["apiVersion"] = kind, "core.matrixorigin.io/v1alpha1"
    if not isinstance(out.get("status"), dict):
        out.pop("status", None)  # a status is an object, as the status subresource writes it
    return out


def _check_written(calls: list[tuple[str, str, str, Any]]) -> None:
    """Every object a round writes has a name and labels the API server takes."""
    for verb, kind, name, body in calls:
        if verb not in ("apply", "create"):
            continue
        assert not dns1123_subdomain(name), (kind, name)
        if kind == "Service":
            assert not dns1035_label(name), (kind, name)
        if kind == "Pod":
            assert not dns1123_label(name), (kind, name)
        meta = body.get("metadata") or {}
        assert not label_errors(meta.get("labels") or {}, "metadata.labels"), (kind, meta.get("labels"))
        template = ((body.get("spec") or {}).get("template") or {}).get("metadata") or {}
        assert not label_errors(template.get("labels") or {}, "template.labels"), (kind, template)


def _log_service(obj: Obj) -> Obj:
    """The bootstrapped LogSet the set's ``deps`` name (so that its round goes past the
    wait for it), or the default one."""
    found = logset()
    ref: Any = obj
    for step in ("deps", "logSet", "metadata"):
        ref = ref.get(step) if isinstance(ref, dict) else None
    if isinstance(ref, dict):
        for field in ("name", "namespace"):
            if isinstance(ref.get(field), str) and ref[field]:
                found["metadata"][field] = ref[field]
    return found


async def _round(kind: str, obj: Obj) -> list[tuple[str, str, str, Any]]:
    credential = {
        "kind": "Secret",
        "metadata": {"name": f"{obj['metadata']['name']}-credential", "namespace": "ns"},
    }
    env = make_env(FakeCaches(_log_service(obj), credential))
    env.admin = cast(Any, AnyAdmin())
    ctx = context(obj)
    try:
        plan = await ACTORS[kind](env).observe(ctx)
    except TerminalError as e:
        assert e.message and any(root in e.message for root in FIELD_ROOTS), e.message
        return []
    if plan is not None:
        await plan(ctx)
    return cast(RecordingClient, env.client).calls


@pytest.mark.parametrize("kind", sorted(ACTORS))
def test_no_round_raises_writes_an_invalid_name_or_grows_with_the_spec(
    kind: str, loop: asyncio.AbstractEventLoop
) -> None:
    @settings(
        max_examples=100,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(mutated(kind))
    def check(obj: Any) -> None:
        stored = _as_stored(obj, kind)
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        calls = loop.run_until_complete(_round(kind, stored))
        peak = tracemalloc.get_traced_memory()[1] - before
        assert peak < ROUND_MEMORY_BOUND, f"one round allocated {peak >> 20} MiB"
        _check_written(calls)

    tracemalloc.start()
    try:
        check()
    finally:
        tracemalloc.stop()
