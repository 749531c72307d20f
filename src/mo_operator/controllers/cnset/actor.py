"""The CNSet controller: a group of compute nodes, with MatrixOne in the loop.

What it owns, named as upstream names them: the CN pods ``<cn>-cn-<i>``
(managed directly, see ``scaling.py`` and docs/design.md), their cache
volume claims, the headless Service ``<cn>-cn-headless``, the client
Service ``<cn>-cn`` (SQL 6001, of ``serviceType``), the metric Service
``<cn>-cn-metric`` (when Prometheus discovers it by Service) and the
immutable hashed ConfigMap.

Each round reads once (``read``: the set as admitted, its log service, the
references its pods miss, its shared objects, configs and claims as cached with
our applies the cache may not show yet, its pods, HAKeeper, the loads of the CNs
the decision may need, what the TN lock service says of drained CNs, the clock)
into a ``CNSetView`` (``observed.py``), and decides purely one plan and its status
(``decide.py``: the set skeleton's shared objects, what its pods and MatrixOne
need, the claims' growth and the collection of unused configs; the report,
``report.py``). It makes its pods itself, so its roll is read from them.

MatrixOne's own state decides as much as the pods do. Each reconcile asks
HAKeeper which CN stores are registered and in which work state, then:

- sets each pod's ``matrixorigin.io/cn-store`` condition (the pods'
  readiness gate) True only while its store is registered and Working, so
  Services route only to CNs that take sessions;
- puts registered CNs to work (with store draining on, a CN starts
  Draining and works only once the operator says so) and keeps their
  HAKeeper labels equal to ``cnLabels``;
- drains a CN before removing it (scale-in, roll, ``podsToDelete``): mark it
  Draining in HAKeeper (the proxy moves its sessions away and sends no new
  ones), wait at least ``minDelaySeconds`` and until it holds no sessions,
  pipelines or replicas (on MatrixOne 1.2 and later, also until the TN lock
  service has moved its lock tables away, ``locks.py``), or until
  ``storeDrainTimeout``; then delete it;
- holds a CN annotated ``matrixorigin.io/store-cordon`` Draining and not
  ready, and records each CN's load in upstream's pod annotations
  (``stats.py``);
- puts a draining CN back to work when the set grows again before the
  drain ends, instead of starting a new one.

A set with ``podManagementPolicy: Pooling`` belongs to a CNPool: it keeps the
pods its pool asks for, warm and out of service until a CNClaim takes one,
and never rolls (``pooling.py``).

Draining is on unless ``scalingConfig.storeDrainEnabled`` is false: removing
a CN with live sessions kills them, which is never what a platform engineer
wants by default (upstream drains only when asked).
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Mapping, Sequence
from typing import Any

from mo_operator.api.cnset import CNSet, CNSetSpec
from mo_operator.kube.controller.actor import Context
from mo_operator.kube.controller.outcome import TerminalError
from mo_operator.kube.meta.objects import is_deleting, name_of, uid_of
from mo_operator.matrixone import labels, layout, names

from ..framework import resources as r
from ..framework.admission import admit
from ..framework.decision import Decision
from ..framework.env import Env
from ..framework.writes import Writes
from ..steps.deps import Waiting, logset_ref, resolve
from ..steps.expansion import storage_classes
from ..steps.podset_input import Cached, SetInput, has_started, served_input, set_references
from ..steps.rpchealth import Patience
from . import pods as cnpods
from . import pooling
from .claims import claims_to_mount
from .decide import decide, decide_finalize
from .drain import DRAINING, asks_load, drain_limits, with_drain_default
from .observed import CNSetView, Desired, Unserved
from .reads import ask, drain_asks_locks
from .registration import Registration, unregistered
from .shared import COMPONENT
from .stats import due_loads, refreshed
from .stores import HAKEEPER, hakeeper_state
from .udf import python_udf_sidecar

log = logging.getLogger(__name__)

Obj = dict[str, Any]


class CNSetActor:
    def __init__(self, env: Env) -> None:
        self.env = env
        self._stats_due: dict[str, float] = {}
        """Pod uid → when its load annotations are next refreshed (``stats.py``)."""
        self._registration = Registration()
        """Since when each running CN has waited for its store (``registration.py``)."""
        self._patience = Patience()
        """Since when each set's calls to HAKeeper have gone unanswered."""

    # ---------------------------------------------------------------- observe
    async def observe(self, ctx: Context) -> Writes | None:
        return decide(await self.read(ctx), self.env.settings).act(ctx, self.env.client, self.env.unseen)

    async def read(self, ctx: Context) -> CNSetView | Unserved:
        """Every read the round decides from, once: the set as admitted and its log
        service; once it has one, the references its pods miss, its shared objects,
        configs and claims as cached, its pods, HAKeeper, and what MatrixOne says of
        the CNs the decision may need (the loads due for a refresh or, on scale-in,
        every one; draining CNs whose drain may be over, and their lock tables), the
        clock."""
        env, obj = self.env, ctx.obj
        spec = admit(CNSet, obj).spec
        known = dict(ctx.status)
        service = resolve(env.caches, obj, spec, started=has_started(ctx))
        if isinstance(service, Waiting):
            return Unserved(obj, spec, known, service)
        given = served_input(obj, COMPONENT, spec, service, config_spec=with_drain_default(spec))
        missing, lookup = None, env.references
        if lookup is not None:
            missing = tuple(await lookup.missing(ctx.namespace, set_references(given)))
        template = self._template(given)
        ref = logset_ref(obj)
        want = Desired(
            obj,
            spec,
            service,
            given.selector,
            given.labels,
            given.config,
            template,
            cnpods.template_hash(template),
            f"{ref[0]}/{ref[1]}" if ref else None,
        )
        caches, namespace = env.caches, ctx.namespace
        pods = tuple(caches.list(r.PODS, namespace, given.selector))
        configs = tuple(caches.list(r.CONFIGMAPS, namespace, given.selector))
        admin = env.admin.admin(service.discovery_address)
        now, settings = env.clock(), env.settings
        state, trouble = None, None
        if pods:
            state, trouble = await hakeeper_state(
                ctx, admin, service.discovery_address, self._patience, now, settings.rpc_patience_seconds
            )
        view = CNSetView(
            obj,
            spec,
            pods,
            state,
            admin,
            now,
            settings.drain_timeout_seconds,
            trouble,
            want,
            conditions=_condition_types(ctx),
        )
        look = None
        if pooling.pooled(spec):
            stats, refresh = due_loads(pods, state, self._stats_due, now, read_all=False)
            reclaimed = [p for p in pods if pooling.reclaim_asks_load(view, p)]
            loads, locks = await ask(admin, spec, stats, reclaimed, pooling.reclaim_asks_locks)
        else:
            active = [p for p in pods if not is_deleting(p) and cnpods.draining_since(p) is None]
            read_all = len(active) > spec.replicas
            stats, refresh = due_loads(pods, state, self._stats_due, now, read_all=read_all)
            min_delay, timeout = drain_limits(spec, view.drain_timeout)
            draining = [p for p in pods if asks_load(p, now, min_delay, timeout)]
            loads, locks = await ask(admin, spec, stats, draining, drain_asks_locks)
            waiting = unregistered(pods, state)
            look = self._registration.next_look(
                (namespace, ctx.name), waiting, now, settings.busy_poll_seconds
            )
        refreshed(pods, refresh, loads, self._stats_due, now)
        return dataclasses.replace(
            view,
            loads=loads,
            sessions_known=frozenset(name_of(p) for p in stats),
            refresh=refresh,
            locks=locks,
            cache_claims=self._cache_claims(pods) if spec.cache_volume else frozenset(),
            registration_look=look,
            known=known,
            missing=missing,
            recheck_refs=lookup.ttl if lookup is not None else 0.0,
            cached=self._cached(ctx, spec, given.selector, configs),
            configs=configs,
        )

    def _cached(
        self, ctx: Context, spec: CNSetSpec, selector: Mapping[str, str], configs: Sequence[Mapping[str, Any]]
    ) -> Cached:
        """The shared objects as cached, our applies of them the cache may not show yet,
        and the cache volume claims with their StorageClasses."""
        caches, namespace, name = self.env.caches, ctx.namespace, ctx.name
        objects: dict[tuple[str, str], Mapping[str, Any]] = {
            (r.CONFIGMAPS.kind, name_of(c)): c for c in configs
        }
        for res, owned in (
            (r.PDBS, names.workload_name(COMPONENT, name)),
            (r.SERVICES, names.metric_service_name(COMPONENT, name)),
            (r.SERVICES, names.headless_service_name(COMPONENT, name)),
            (r.SERVICES, names.client_service_name(COMPONENT, name)),
        ):
            found = caches.get(res, namespace, owned)
            if found is not None:
                objects[(res.kind, owned)] = found
        applied = self.env.unseen.of_owner(uid_of(ctx.obj))
        if not spec.cache_volume:
            return Cached(objects, applied)
        claims = tuple(caches.list(r.PVCS, namespace, selector))
        return Cached(objects, applied, claims, storage_classes(self.env))

    def _cache_claims(self, pods: Sequence[Mapping[str, Any]]) -> frozenset[str]:
        caches = self.env.caches
        return frozenset(
            name
            for namespace, name in claims_to_mount(pods)
            if caches.get(r.PVCS, namespace, name) is not None
        )

    # --------------------------------------------------------------- finalize
    async def finalize(self, ctx: Context) -> bool:
        """With ``terminationPolicy: Drain``, every CN is drained before the set
        goes (its pods then go by owner reference, and each pod's finalizer
        removes its store from HAKeeper)."""
        view = await self._read_finalize(ctx)
        decision = Decision(finalized=True) if view is None else decide_finalize(view, self.env.settings)
        return await decision.finalize(ctx, self.env.client)

    async def _read_finalize(self, ctx: Context) -> CNSetView | None:
        """The live CNs to drain and what MatrixOne says of those whose drain may be
        over; None when nothing is to drain."""
        try:
            spec = admit(CNSet, ctx.obj).spec
        except TerminalError:
            return None  # a spec the set never ran with: nothing of it to drain
        if spec.termination_policy != "Drain":
            return None
        namespace, name = ctx.namespace, ctx.name
        pods = self.env.caches.list(r.PODS, namespace, labels.sub_resource_labels(COMPONENT, name, namespace))
        live = tuple(p for p in pods if not is_deleting(p))
        if not live:
            return None
        service = resolve(self.env.caches, ctx.obj, spec)
        if isinstance(service, Waiting):
            return None  # no HAKeeper to drain through: nothing can hold sessions
        admin = self.env.admin.admin(service.discovery_address)
        now, timeout = self.env.clock(), self.env.settings.drain_timeout_seconds
        min_delay, limit = drain_limits(spec, timeout)
        draining = [p for p in live if asks_load(p, now, min_delay, limit)]
        loads, locks = await ask(admin, spec, (), draining, drain_asks_locks)
        conditions = _condition_types(ctx)
        return CNSetView(
            ctx.obj, spec, live, None, admin, now, timeout, loads=loads, locks=locks, conditions=conditions
        )

    # ---------------------------------------------------------------- desired
    @staticmethod
    def _template(given: SetInput[CNSetSpec]) -> Obj:
        """The CN pod template: gated on its store's readiness, with the Python UDF
        sidecar when the spec asks for one."""
        cache = given.spec.cache_volume
        template = given.pod_template(
            extra_mounts=[{"name": layout.DATA_VOLUME, "mountPath": layout.DATA_PATH}] if cache else (),
            readiness_gates=(labels.CN_STORE_READINESS,),
            headless_service=names.headless_service_name(COMPONENT, given.name),
        )
        sidecar = python_udf_sidecar(given.spec)
        if sidecar is not None:
            template["spec"]["containers"].append(sidecar)
        return template


def _condition_types(ctx: Context) -> frozenset[str]:
    """Which of the conditions the decision keeps up to date once added the set carries."""
    return frozenset(t for t in (HAKEEPER, DRAINING) if ctx.condition(t) is not None)
