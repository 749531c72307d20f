"""Keep our controllers off a set a Kruise workload still runs, or take it over when told to.

When our operator starts on a cluster the Go operator built, each set's
pods are controlled by an OpenKruise workload of the same name as ours.
Our StatefulSet would collide with it (same pod names, same selector) and
our CNSet would start rolling pods Kruise still owns. So while Kruise holds
the set, its controller writes nothing but the ``Adopted`` condition.

Not opted in (``optin.py``), the condition (``HeldByKruise``) says how to
opt in or to run ``mo-operator adopt``, and the operator waits. Opted in,
the set's own controller carries the takeover out, one step per reconcile,
decided by the same function as the command's (``steps.py``): a held set
is released only when it is the first of its namespace's takeover in
dependency order and no other set is still rolling; before that its
``Adopted=False`` condition is written, so that a restart at any point
still counts it as under way. Once released, the set's own controller rolls
it as any change; the guard adds only the takeover's writes (HAKeeper
records on old CN pods, old proxy pods, old ConfigMaps) and keeps the
condition saying which step it is at, until ``Adopted=True`` (``TakenOver``).

A set that never was Kruise's costs one indexed pod list per reconcile.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mo_operator.kube.controller.actor import Action, Actor, Context
from mo_operator.kube.meta.errors import Forbidden
from mo_operator.matrixone.component import Component

from ..framework.env import Env
from ..framework.meta import name_of
from .cached import CONDITION, Member, adoption_condition, members, read_workload, set_pods, state
from .kruise import kruise_controller
from .optin import how_to_opt_in, opted_in
from .steps import Step, StepKind, next_step, set_step
from .takeover import take_step

HELD = "HeldByKruise"
"""Not opted in: the operator waits."""
TAKING_OVER = "TakingOver"
REFUSED = "TakeoverRefused"
"""The set is next, but the preflight finds a takeover unsafe now (announced as a Warning)."""
TAKEN_OVER = "TakenOver"

__all__ = ["CONDITION", "HELD", "REFUSED", "TAKEN_OVER", "TAKING_OVER", "KruiseGuard"]


class KruiseGuard:
    """``actor``, except while a Kruise workload controls the set's pods or its takeover is under way."""

    def __init__(self, actor: Actor, env: Env, component: Component) -> None:
        self.actor = actor
        self.env = env
        self.component = component

    async def observe(self, ctx: Context) -> Action | None:
        pods = set_pods(self.env, self.component, ctx.name, ctx.namespace)
        holder = _holder(pods)
        recorded = adoption_condition(ctx.status)
        if holder is None and (recorded is None or recorded.get("status") == "True"):
            return await self.actor.observe(ctx)
        opted = opted_in(self.env, ctx.obj)
        if holder is None:
            return await self._under_way(ctx, pods, opted)
        if not opted:
            message = (
                f"its pods run under {holder} (the Go operator's); to take the set over, "
                + how_to_opt_in(ctx.namespace)
            )
            ctx.set_condition(CONDITION, False, HELD, message)
            ctx.requeue(self.env.settings.poll_seconds, "an opt-in to the takeover")
            return _wait(message)
        try:
            return await self._held(ctx, recorded)
        except Forbidden as e:
            message = (
                f"the operator may not read or delete the Kruise workload ({e}): "
                "grant it (docs/migrating.md) or run `mo-operator adopt`"
            )
            ctx.set_condition(CONDITION, False, REFUSED, message)
            ctx.requeue(self.env.settings.poll_seconds, "the permission to read the Kruise workload")
            return _wait(message)

    async def finalize(self, ctx: Context) -> bool:
        return await self.actor.finalize(ctx)

    async def _under_way(self, ctx: Context, pods: list[Any], opted: bool) -> Action | None:
        """Released: our controller rolls the set; the guard adds the takeover's own writes."""
        step = set_step(state(self.env, self.component, ctx.obj, pods, None))
        if step is None:
            ctx.set_condition(
                CONDITION, True, TAKEN_OVER, "the set runs under this operator's workload alone"
            )
            return await self.actor.observe(ctx)
        message = step.message if opted or not step.writes else f"{step.message} (mo-operator adopt's step)"
        ctx.set_condition(CONDITION, False, TAKING_OVER, message)
        ctx.wait(self.env.settings.busy_poll_seconds, f"the takeover's step: {message}")
        if step.writes and opted:
            return self._take(step)
        return await self.actor.observe(ctx)

    async def _held(self, ctx: Context, recorded: Mapping[str, Any] | None) -> Action:
        """Opted in, still Kruise's: release the set when its turn comes, else wait for it."""
        turn = await self._turn(ctx)
        if isinstance(turn, str):
            message = f"queued: {turn} is taken over first"
            ctx.set_condition(CONDITION, False, TAKING_OVER, message)
            ctx.wait(self.env.settings.busy_poll_seconds, message)
            return _wait(message)
        if turn.kind is StepKind.REFUSED:
            ctx.set_condition(CONDITION, False, REFUSED, f"not safe to take over now: {turn.message}")
            ctx.requeue(self.env.settings.poll_seconds, "whether the takeover is safe now")
            return _wait(turn.message)
        ctx.set_condition(CONDITION, False, TAKING_OVER, turn.message)
        ctx.wait(self.env.settings.busy_poll_seconds, f"the takeover's step: {turn.message}")
        # The condition is written before the release: a restart then knows the set is under way.
        if turn.kind is StepKind.RELEASE and recorded is not None and recorded.get("status") == "False":
            return self._take(turn)
        return _wait(turn.message)

    async def _turn(self, ctx: Context) -> Step | str:
        """This set's own step once its turn has come, else the set that goes first.
        Only this set's Kruise workload is read, and only when its turn has come."""
        found = members(self.env, ctx.namespace)
        released = [m for m in found if not m.held]
        step = next_step([state(self.env, m.component, m.obj, m.pods, None) for m in released])
        if step is not None:
            return f"{step.component.kind} {step.set_name}"
        if released:  # done, but its Adopted=True not written yet: the sets' conditions go in order too
            return released[0].label
        first = next((m for m in found if m.held), None)
        if first is not None and not _same(first, self.component, ctx.name):
            return first.label
        pods = set_pods(self.env, self.component, ctx.name, ctx.namespace)
        workload = await read_workload(self.env, self.component, ctx.name, ctx.namespace)
        own = set_step(state(self.env, self.component, ctx.obj, pods, workload))
        return own if own is not None else f"{self.component.kind} {ctx.name}"

    def _take(self, step: Step) -> Action:
        env = self.env

        async def take(ctx: Context) -> None:
            await take_step(env.client, ctx.namespace, step)
            ctx.event("Normal", TAKING_OVER, step.message)

        take.description = f"takeover: {step.message}"  # type: ignore[attr-defined]
        return take


def _same(member: Member, component: Component, name: str) -> bool:
    return member.component is component and name_of(member.obj) == name


def _holder(pods: list[Any]) -> str | None:
    for pod in pods:
        ref = kruise_controller(pod)
        if ref is not None:
            return f"{ref.get('apiVersion')} {ref.get('kind')} {ref.get('name')} (pod {name_of(pod)})"
    return None


def _wait(message: str) -> Action:
    async def wait(ctx: Context) -> None:
        """Nothing to write: the set waits for its takeover."""

    wait.description = f"waiting for takeover: {message}"  # type: ignore[attr-defined]
    return wait
