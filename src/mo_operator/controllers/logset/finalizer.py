"""The LogSet's finalizer: release the claim of its S3 path, as read, decide, act.

``read_deletion`` gathers what the finalizer decides from (the claims of the path
bound to the LogSet, and whether MatrixOne wrote to the path, asking HAKeeper only
when there is a claim to release and the LogSet never recorded it), and
``decide_deletion`` turns it into a ``Decision``, pure. The deleted LogSet's spec is
read as stored, not admitted: a spec a newer rule refuses must still release its path.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from mo_operator.kube.controller.actor import Context
from mo_operator.kube.meta.objects import mapping_at, spec_of, status_of
from mo_operator.matrixone import buckets, names
from mo_operator.matrixone.admin import AdminError, HAKeeperPhase

from ..framework import resources as r
from ..framework.decision import Decision, Emit
from ..framework.env import Env
from ..framework.meta import name_of, namespace_of
from ..framework.writes import Call, Intent, Patch, Step
from ..steps import bucketclaims

RUNNING = HAKeeperPhase.RUNNING.mo_name
HAKEEPER = "HAKeeper"
"""The condition that says whether HAKeeper answers, and how it fails when it does not."""

Release = Callable[[Mapping[str, Any], str, bool], Step]
"""The step that releases and deletes a claim (the claim, the policy, whether written)."""


def _unbound(claim: Mapping[str, Any], policy: str, written: bool) -> Step:
    """A release of a view built without a client (a table test's): it fails if ever run."""

    async def step() -> None:
        raise RuntimeError(f"no release bound for BucketClaim {name_of(claim)}: the view was not read")

    return step


@dataclass(frozen=True)
class DeletionView:
    """What the finalizer decides from: the claims the deleted LogSet releases under
    its ``policy``, and whether MatrixOne data is on the path."""

    claims: tuple[Mapping[str, Any], ...]
    policy: str
    written: bool
    release: Release = field(default=_unbound, compare=False)
    """The step releasing and deleting a claim under ``Delete``, bound to the client."""


async def read_deletion(ctx: Context, env: Env) -> DeletionView:
    """The claims to release from the cache; whether the path was written from the
    LogSet's status, or else from HAKeeper (asked only when a claim is to be released)."""
    obj = ctx.obj
    spec = spec_of(obj)
    s3 = bucketclaims.s3_of(spec)
    policy = bucketclaims.retention_policy(spec)
    if s3 is None:
        return DeletionView((), policy, False)
    claims = tuple(bucketclaims.claims_to_release(env.caches, obj, s3, policy))
    restored = mapping_at(spec, "initialConfig").get("restoreFrom")
    written = bool(claims) and (wrote(obj, restored) or await _hakeeper_bootstrapped(ctx, env))
    return DeletionView(claims, policy, written, functools.partial(_release_step, env))


def _release_step(env: Env, claim: Mapping[str, Any], policy: str, written: bool) -> Step:
    """The release of ``claim`` under ``Delete``: its patch, then its deletion on
    condition of the version that patch made (one step, since the second write
    depends on the first's answer)."""

    async def step() -> None:
        await bucketclaims.release(env.client, claim, policy, written=written)

    return step


async def _hakeeper_bootstrapped(ctx: Context, env: Env) -> bool:
    """Whether HAKeeper answers as bootstrapped: the log service wrote to its path even
    if the LogSet never recorded it (the operator died between the two)."""
    try:
        state = await env.admin.admin(names.discovery_address(ctx.name, ctx.namespace)).hakeeper_state()
    except AdminError:
        return False
    return state.bootstrapped


def decide_deletion(view: DeletionView) -> Decision:
    """Release each claim (``Retain``: unbound, its data kept and the claim Released) or
    release and delete it (``Delete``: its controller deletes the data once the
    cluster's pods are gone), announcing each once done; then the finalizer goes.
    Owned objects go by owner reference; the volumes follow the StatefulSet's
    retention policy. Pure: a function of ``view``."""
    intents: list[Intent] = []
    events: list[Emit] = []
    for claim in view.claims:
        name = name_of(claim)
        if view.policy == buckets.DELETE:
            intents.append(
                Call(view.release(claim, view.policy, view.written), f"release and delete BucketClaim {name}")
            )
            verb = "deleted (its data is deleted next)"
        else:
            body = bucketclaims.release_patch(claim, view.policy, written=view.written)
            intents.append(
                Patch(r.BUCKETCLAIMS, namespace_of(claim), name, body, what=f"release BucketClaim {name}")
            )
            verb = "released (data kept)"
        events.append(Emit("Normal", "BucketReleased", f"BucketClaim {name} {verb}", after_writes=True))
    return Decision(tuple(intents), events=tuple(events), finalized=True)


def wrote(logset: Mapping[str, Any], restored: object) -> bool:
    """MatrixOne data is on the LogSet's path: its HAKeeper answered that it runs, or the
    path was ``restored`` from a backup before it started."""
    status = status_of(logset)
    return bool(status.get("hakeeperState") == RUNNING or ran_before(status) or restored)


def ran_before(status: Mapping[str, Any]) -> bool:
    """A LogSet an earlier version of the operator ran published its discovery address
    only once its HAKeeper ran, and reported no HAKeeper condition."""
    conditions = status.get("conditions")
    reported = isinstance(conditions, Sequence) and any(
        isinstance(c, Mapping) and c.get("type") == HAKEEPER for c in conditions
    )
    return bool(status.get("discovery")) and not reported
