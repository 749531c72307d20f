"""Failover in the reconcile: the facts for the decision (failover.py), read once
(``gather``), and its writes, condition and Event as data (``judge``, pure)."""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from mo_operator.api.fields import parse_duration
from mo_operator.api.logset import LogSetSpec
from mo_operator.kube.meta.errors import ApiError
from mo_operator.kube.meta.objects import labels_of
from mo_operator.matrixone import identity, labels, names
from mo_operator.matrixone.admin import HAKeeperState
from mo_operator.matrixone.component import Component

from ..framework import resources as r
from ..framework.decision import Emit
from ..framework.draft import Drafting
from ..framework.env import Env
from ..framework.meta import name_of, uid_of
from ..framework.writes import Delete, Intent, Patch
from ..specs import pods as podutil
from .bootstrap import log_shard_replicas
from .failover import CONDITION, Policy, Store, decide
from .planned import planned
from .stranded import LookupFailed, has_node, label_selector, stranded_claims

DEFAULT_STORE_FAILURE_TIMEOUT = 600.0
NODE_PAGE = 100
"""Nodes read per page while looking for one that can host a lost store's volume."""


def policy(spec: LogSetSpec, namespace: str, *, enabled: bool) -> Policy:
    """The failover's rules from the spec; ``enabled``: the operator's ``--failover``."""
    timeout = spec.store_failure_timeout
    return Policy(
        timeout=parse_duration(str(timeout)) if timeout else DEFAULT_STORE_FAILURE_TIMEOUT,
        shard_replicas=log_shard_replicas(spec),
        strategy=spec.failed_pod_strategy or "Delete",
        enabled=enabled,
        namespace=namespace,
    )


async def gather(
    env: Env,
    namespace: str,
    name: str,
    spec: LogSetSpec,
    pods: Sequence[Mapping[str, Any]],
    state: HAKeeperState | None,
    live: Sequence[int] | None = None,
    evicted: Collection[str] = (),
) -> tuple[Store, ...]:
    """The facts of each log store the failover judges. ``state`` is None when HAKeeper
    does not answer; ``live``: the ordinals of its stores (0.. when None; a taken-over
    LogSet keeps some reserved); ``evicted`` names the pods seen evicted and not back yet."""
    now = env.clock()
    timeout = policy(spec, namespace, enabled=env.settings.failover).timeout
    roll_to = rolling_to(env.caches.get(r.STATEFULSETS, namespace, names.workload_name(Component.LOG, name)))
    stores = await store_facts(env, namespace, pods, state, now, timeout, roll_to, evicted)
    ordinals = range(spec.replicas) if live is None else live
    stores += missing_stores(name, ordinals, pods, state, now, roll_to, evicted)
    return tuple(stores)


def rolling_to(sts: Mapping[str, Any] | None) -> str | None:
    """The revision the StatefulSet is rolling its pods to, None when it is not rolling."""
    status = (sts or {}).get("status") or {}
    update = status.get("updateRevision")
    return str(update) if update and status.get("currentRevision") != update else None


async def store_facts(
    env: Env,
    namespace: str,
    pods: Sequence[Mapping[str, Any]],
    state: HAKeeperState | None,
    now: float,
    timeout: float,
    roll_to: str | None = None,
    evicted: Collection[str] = (),
) -> list[Store]:
    """One ``Store`` per log pod; the stranded claims of those already lost (the only
    ones whose volumes and nodes are read; the nodes of one place once per call, page
    by page until one can host the volume). ``roll_to``: the revision the set rolls to;
    ``evicted``: the pods seen evicted and not back yet (both planned work)."""
    down = down_uuids(state)
    found: dict[str, bool] = {}

    async def lookup(res: Any, name: str) -> Mapping[str, Any] | None:
        try:
            return await env.client.get_or_none(res, name)
        except ApiError as e:
            raise LookupFailed(f"{res.kind} {name}: {e}") from e

    async def find_node(term: Mapping[str, Any]) -> bool:
        key = json.dumps(term, sort_keys=True)
        if key not in found:
            found[key] = await _any_node(env, term)
        return found[key]

    stores: list[Store] = []
    for pod in pods:
        ordinal = names.pod_ordinal(name_of(pod))
        if ordinal is None:
            continue
        since = podutil.not_ready_since(pod)
        store_down = identity.log_store_uuid(ordinal) in down
        orphaned = labels_of(pod).get(labels.ACTION_REQUIRED) == labels.ACTION_REQUIRED_VALUE
        lost = since is not None and store_down and now - since >= timeout
        stranded = (
            await stranded_claims(pod, lambda c: env.caches.get(r.PVCS, namespace, c), lookup, find_node)
            if lost or (orphaned and since is not None)
            else ()
        )
        listed = state.replicas_on(identity.log_store_uuid(ordinal)) if state is not None else ()
        stores.append(
            Store(
                name_of(pod),
                uid_of(pod),
                since,
                store_down,
                orphaned,
                stranded,
                planned(pod, roll_to, evicted),
                listed=listed,
            )
        )
    return stores


def down_uuids(state: HAKeeperState | None) -> frozenset[str]:
    """The log stores HAKeeper reports down (none when it does not answer)."""
    return frozenset(s.uuid for s in state.log_stores if not s.up) if state is not None else frozenset()


def missing_stores(
    logset: str,
    ordinals: Sequence[int],
    pods: Sequence[Mapping[str, Any]],
    state: HAKeeperState | None,
    now: float,
    roll_to: str | None,
    evicted: Collection[str] = (),
) -> list[Store]:
    """The stores of the ordinals the set runs at and has no pod for: a replaced pod
    the StatefulSet has yet to make again is not an up store, whatever the time;
    planned while the set rolls or when a drain evicted it."""
    down = down_uuids(state)
    have = {names.pod_ordinal(name_of(p)) for p in pods}
    return [
        Store(
            names.pod_name(Component.LOG, logset, ordinal),
            "",
            now,
            identity.log_store_uuid(ordinal) in down,
            planned=roll_to is not None or names.pod_name(Component.LOG, logset, ordinal) in evicted,
            has_pod=False,
        )
        for ordinal in ordinals
        if ordinal not in have
    ]


async def _any_node(env: Env, term: Mapping[str, Any]) -> bool:
    """Whether a schedulable Ready node satisfies the term, reading the nodes its labels
    select a page at a time and stopping at the first."""
    token: str | None = None
    try:
        while True:
            page = await env.client.list_page(
                r.NODES, label_selector=label_selector(term), limit=NODE_PAGE, continue_=token
            )
            if has_node(term, page.items):
                return True
            token = page.continue_
            if not token:
                return False
    except ApiError as e:
        raise LookupFailed(f"nodes {label_selector(term)}: {e}") from e


def judge(
    draft: Drafting,
    name: str,
    stores: Sequence[Store],
    rules: Policy,
    now: float,
    *,
    quorum: bool,
    events: list[Emit],
) -> list[Intent]:
    """Judge the log stores of LogSet ``name`` and write the judgement: claims before
    their pod (so the StatefulSet waits for them to go instead of giving the new pod the
    old volume), the condition into ``draft``, and a Warning Event into ``events`` once
    per change, not per resync. ``quorum``: HAKeeper answers. Pure."""
    namespace = draft.namespace
    decision = decide(stores, now, rules, quorum=quorum)
    intents: list[Intent] = []
    for replace in decision.replace:
        intents += [Delete(r.PVCS, namespace, claim.name, claim.uid) for claim in replace.claims]
        intents.append(Delete(r.PODS, namespace, replace.pod, replace.uid, grace_period_seconds=0))
    for pod in decision.orphan:
        body = {
            "metadata": {
                "labels": {labels.ACTION_REQUIRED: labels.ACTION_REQUIRED_VALUE, labels.LOGSET_OWNER: name}
            }
        }
        intents.append(Patch(r.PODS, namespace, pod, body, what=f"mark lost log store {pod} for a human"))
    before: Mapping[str, Any] = draft.condition(CONDITION) or {}
    news = (before.get("reason"), before.get("message")) != (decision.reason, decision.message)
    draft.set_condition(CONDITION, decision.status, decision.reason, decision.message)
    if decision.warning is not None and (news or decision.replace or decision.orphan):
        events.append(Emit("Warning", decision.warning, decision.message))
    if decision.recheck_after is not None:
        draft.requeue(decision.recheck_after, f"the failover of the log stores ({decision.reason})")
    return intents
