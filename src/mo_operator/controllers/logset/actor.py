"""The LogSet actor: read once (``read``: the cache, the references, HAKeeper and the
failover's facts), decide purely (``decide.py``), act; finalize releases the S3 path's
claim the same way (``finalizer.py``).

Bring-up is upstream's (matrixone-operator ``pkg/controllers/logset/controller.go``
``Observe``): the discovery address is published once the discovery Service and the
StatefulSet exist, and ``Ready`` follows the log stores' pods. HAKeeper is asked for
what it knows, never waited on: the ``HAKeeper`` condition and ``status.hakeeperState``
report it, failover acts on it, and the calls failing are told apart (``rpchealth``)."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from mo_operator.api.base import dump
from mo_operator.api.logset import LogSet
from mo_operator.kube.controller.actor import Context
from mo_operator.matrixone import labels, names
from mo_operator.matrixone.admin import AdminError, HAKeeperState

from ..framework import resources as r
from ..framework.admission import admit
from ..framework.env import Env
from ..framework.meta import uid_of
from ..framework.writes import Writes
from ..specs import statefulsets
from ..steps import bucketclaims
from ..steps.expansion import replace_step, storage_classes
from ..steps.podset_input import Cached, pod_set_references
from ..steps.rpchealth import Patience
from .decide import LogSetView, asks_hakeeper, decide, numbering_of, ran, store_roll
from .desired import COMPONENT
from .finalizer import decide_deletion, read_deletion
from .planned import Evictions
from .repair import gather


class LogSetActor:
    def __init__(self, env: Env) -> None:
        self.env = env
        self._patience = Patience()
        """Since when each LogSet's HAKeeper has gone unanswered."""
        self._evictions = Evictions()
        """The log pods of each LogSet a drain evicted, until they are back."""

    async def observe(self, ctx: Context) -> Writes | None:
        return decide(await self.read(ctx)).act(ctx, self.env.client, self.env.unseen)

    async def read(self, ctx: Context) -> LogSetView:
        """Everything the decision needs, once: the LogSet as admitted, the claims of its
        S3 path, the references its pods miss, its objects, pods and claims from the
        cache; HAKeeper only when some store is ready for it to answer, and the
        failover's facts only once HAKeeper runs."""
        env, obj = self.env, ctx.obj
        spec = admit(LogSet, obj).spec
        caches, namespace, name = env.caches, ctx.namespace, ctx.name
        lookup = env.references
        missing = None
        if lookup is not None:
            refs = pod_set_references(spec, spec.shared_storage)
            missing = tuple(await lookup.missing(namespace, refs))
        s3 = dump(spec.shared_storage.s3) if spec.shared_storage.s3 is not None else None
        path_claims = tuple(bucketclaims.claims_of_path(caches, s3)) if s3 is not None else ()
        selector = labels.sub_resource_labels(COMPONENT, name, namespace)
        workload = names.workload_name(COMPONENT, name)
        objects: dict[tuple[str, str], Mapping[str, Any]] = {}
        for res, owned in (
            (r.STATEFULSETS, workload),
            (r.PDBS, workload),
            (r.SERVICES, names.metric_service_name(COMPONENT, name)),
            (r.SERVICES, names.headless_service_name(COMPONENT, name)),
            (r.SERVICES, names.discovery_service_name(name)),
            (r.CONFIGMAPS, names.log_bootstrap_config_map_name(name)),
            (r.CONFIGMAPS, names.log_gossip_config_map_name(name)),
        ):
            found = caches.get(res, namespace, owned)
            if found is not None:
                objects[(res.kind, owned)] = found
        configs = tuple(caches.list(r.CONFIGMAPS, namespace, selector))
        objects.update((("ConfigMap", c["metadata"]["name"]), c) for c in configs)
        pods = tuple(caches.list(r.PODS, namespace, selector))
        cached = Cached(
            objects,
            env.unseen.of_owner(uid_of(obj)),
            tuple(caches.list(r.PVCS, namespace, selector)),
            storage_classes(env),
        )
        known = dict(ctx.status)
        view = LogSetView(
            obj,
            spec,
            known,
            env.clock(),
            env.settings,
            s3,
            path_claims,
            missing,
            lookup.ttl if lookup is not None else 0.0,
            cached,
            configs,
            pods,
            claim_named=lambda claim: caches.get(r.PVCS, namespace, claim),
            replace_pod=functools.partial(statefulsets.rollback_step, ctx, env.client),
            replace_statefulset=functools.partial(replace_step, ctx, env.client),
        )
        evicted = self._evictions.note((namespace, name), pods)
        answer, unanswered = await self._hakeeper(ctx, view)
        state = answer if isinstance(answer, HAKeeperState) else None
        drafted = {**known, "hakeeperState": state.phase.mo_name} if state is not None else known
        stores = None
        if ran(drafted, obj):
            live = numbering_of(obj, spec).live
            stores = await gather(env, namespace, name, spec, pods, state, live, evicted)
        return replace(view, hakeeper=answer, unanswered=unanswered, stores=stores)

    async def _hakeeper(
        self, ctx: Context, view: LogSetView
    ) -> tuple[HAKeeperState | AdminError | None, float]:
        """HAKeeper's view, when there is any chance it answers (some store is ready), or
        how asking failed; and how long it has gone unanswered."""
        key = (ctx.namespace, ctx.name)
        if not asks_hakeeper(store_roll(view), view.known, view.obj):
            self._patience.answered(key)
            return None, 0.0
        address = names.discovery_address(ctx.name, ctx.namespace)
        try:
            state = await self.env.admin.admin(address).hakeeper_state()
        except AdminError as e:
            ctx.log.debug("HAKeeper does not answer: %s", e)
            return e, self._patience.unanswered(key, view.now)
        self._patience.answered(key)
        return state, 0.0

    async def finalize(self, ctx: Context) -> bool:
        """Release the claim of the S3 path (``finalizer.py``): read, decide, act."""
        self._evictions.forget((ctx.namespace, ctx.name))
        return await decide_deletion(await read_deletion(ctx, self.env)).finalize(ctx, self.env.client)
