"""Keep our controllers off a set whose pods a Kruise workload still runs.

When our operator starts on a cluster the Go operator built, each set's
pods are controlled by an OpenKruise workload of the same name as ours.
Our StatefulSet would collide with it (same pod names, same selector) and
our CNSet would start rolling pods Kruise still owns. So, until the set is
taken over (``mo-operator adopt`` deletes the Kruise workload with orphan
propagation, which clears the pods' controller references), the set's
controller writes nothing but a condition that says what holds it and what
to do. Nothing is taken over by surprise: the takeover is an explicit step.

The check reads only the cache (the set's pods, which it already watches),
so a set that was never Kruise's costs one indexed pod list per reconcile.
"""

from __future__ import annotations

from mo_operator.kube.actor import Action, Actor, Context
from mo_operator.matrixone import labels
from mo_operator.matrixone.component import Component

from ..common import resources as r
from ..common.env import Env
from ..common.meta import name_of
from .kruise import kruise_controller

CONDITION = "Adopted"
"""False while a Kruise workload (the Go operator's) still runs the set's pods."""
HELD = "HeldByKruise"
TAKEN_OVER = "TakenOver"


class KruiseGuard:
    """``actor``, except while a Kruise workload controls the set's pods."""

    def __init__(self, actor: Actor, env: Env, component: Component) -> None:
        self.actor = actor
        self.env = env
        self.component = component

    async def observe(self, ctx: Context) -> Action | None:
        holder = self._holder(ctx)
        if holder is None:
            if _was_held(ctx):
                ctx.set_condition(CONDITION, True, TAKEN_OVER, "no Kruise workload runs the set's pods")
            return await self.actor.observe(ctx)
        message = (
            f"its pods run under {holder} (the Go operator's); "
            f"run `mo-operator adopt -n {ctx.namespace}` to take the set over"
        )
        ctx.set_condition(CONDITION, False, HELD, message)
        ctx.requeue(self.env.settings.poll_seconds)
        return _wait(message)

    async def finalize(self, ctx: Context) -> bool:
        return await self.actor.finalize(ctx)

    def _holder(self, ctx: Context) -> str | None:
        selector = labels.sub_resource_labels(self.component, ctx.name, ctx.namespace)
        for pod in self.env.caches.list(r.PODS, ctx.namespace, selector):
            ref = kruise_controller(pod)
            if ref is not None:
                return f"{ref.get('apiVersion')} {ref.get('kind')} {ref.get('name')} (pod {name_of(pod)})"
        return None


def _was_held(ctx: Context) -> bool:
    return any(c.get("type") == CONDITION for c in ctx.status.get("conditions") or ())


def _wait(message: str) -> Action:
    async def wait(ctx: Context) -> None:
        """Nothing to write: the set waits for its takeover."""

    wait.description = f"waiting for takeover: {message}"  # type: ignore[attr-defined]
    return wait
