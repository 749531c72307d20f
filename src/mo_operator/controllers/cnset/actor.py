"""The CNSet controller: a group of compute nodes, with MatrixOne in the loop.

What it owns, named as upstream names them: the CN pods ``<cn>-cn-<i>``
(managed directly, see ``scaling.py`` and docs/design.md), their cache
volume claims, the headless Service ``<cn>-cn-headless``, the client
Service ``<cn>-cn`` (SQL 6001, of ``serviceType``), the metric Service
``<cn>-cn-metric`` (when Prometheus discovers it by Service) and the
immutable hashed ConfigMap.

Each round reads once (``read``: the set as admitted, its pods, HAKeeper, the
loads of the CNs the decision may need, what the TN lock service says of
drained CNs, the clock) into a ``CNSetView`` (``observed.py``), decides purely
what its pods and MatrixOne need (``decide.py``), and merges that decision with
the set skeleton's steps (steps/podset.py: the log service, the config, the pod
template's input, the sync of its shared objects and the collection of unused
configs) into one plan; then it reports (``report.py``). It makes its pods
itself, so its roll is read from them.

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

import logging
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from mo_operator.api.cnset import CNSet, CNSetSpec
from mo_operator.kube.controller.actor import Context
from mo_operator.kube.controller.outcome import TerminalError
from mo_operator.kube.meta.objects import is_deleting, name_of
from mo_operator.matrixone import labels, layout, names, ports
from mo_operator.matrixone.component import Component

from ..framework import resources as r
from ..framework.admission import admit
from ..framework.decision import Decision
from ..framework.desired import stamped
from ..framework.env import Env
from ..framework.references import report_references
from ..framework.writes import Writes
from ..specs.services import client_service, headless_service
from ..steps.deps import LogService, Waiting, logset_ref, resolve
from ..steps.podset import (
    SetInput,
    collect_configs,
    served_input,
    set_references,
    sync_desired,
    wait_for_log_service,
)
from ..steps.rpchealth import Patience
from ..steps.status import NOT_STARTED, first_status
from . import pods as cnpods
from . import pooling
from .claims import claims_to_mount, grow_claims
from .decide import CNSetDecision, Settings, decide, decide_finalize
from .drain import DRAINING, asks_load, drain_limits, with_drain_default
from .observed import CNSetView, Desired
from .reads import ask, drain_asks_locks
from .registration import Registration, unregistered
from .report import Serving, first_fields
from .stats import due_loads, refreshed
from .stores import HAKEEPER, hakeeper_state
from .udf import python_udf_sidecar

log = logging.getLogger(__name__)

Obj = dict[str, Any]

COMPONENT = Component.CN
HEADLESS_PORTS = (("service", ports.CN_SQL), ("rpc", ports.CN_RPC), ("lock-service", ports.CN_LOCK_SERVICE))


class CNSetActor:
    def __init__(self, env: Env) -> None:
        self.env = env
        self._stats_due: dict[str, float] = {}
        """Pod uid → when its load annotations are next refreshed (``stats.py``)."""
        self._registration = Registration()
        """Since when each running CN has waited for its store (``registration.py``)."""
        self._patience = Patience()
        """Since when each set's calls to HAKeeper have gone unanswered."""

    @property
    def _settings(self) -> Settings:
        settings = self.env.settings
        return Settings(settings.rollout_stall_seconds, settings.busy_poll_seconds)

    # ---------------------------------------------------------------- observe
    async def observe(self, ctx: Context) -> Writes | None:
        """Read, decide the pods' and MatrixOne's part, and plan it between the set
        skeleton's shared objects (first) and the collection of unused configs (last)."""
        obj = ctx.obj
        spec = admit(CNSet, obj).spec
        service = wait_for_log_service(ctx, self.env, obj, spec)
        if service is None:
            selector = labels.sub_resource_labels(COMPONENT, ctx.name, ctx.namespace)
            first_status(ctx, first_fields(ctx, selector), *NOT_STARTED, replicas=spec.replicas)
            return None
        given = served_input(obj, COMPONENT, spec, service, config_spec=with_drain_default(spec))
        await report_references(ctx, self.env.references, set_references(given))
        view = await self.read(ctx, spec, service, given)
        want = view.want
        assert want is not None
        made = decide(view, self._settings)
        shared, tail = Writes(self.env.client), Writes(self.env.client)
        self._services(ctx, want, shared)
        grow_claims(ctx, self.env, view, want, tail)
        keep = [name_of(want.config)]
        collect_configs(self.env, obj, COMPONENT, view.pods, keep, tail, rolled=not made.created)
        intents = (*shared.intents, *made.decision.intents, *tail.intents)
        plan = replace(made.decision, intents=intents).act(ctx, self.env.client)
        self._report(ctx, view, made, plan)
        return plan

    def _report(self, ctx: Context, view: CNSetView, made: CNSetDecision, plan: Writes | None) -> None:
        """Status, and when to look again: soon while work is under way, else at the poll."""
        report = made.report
        if isinstance(report, Serving):
            report.report(ctx, view, pending=plan is not None and plan.writes_workload)
        else:
            report.report(ctx, view)
        settings = self.env.settings
        if plan or report.busy:
            ctx.wait(settings.busy_poll_seconds, "the CNs' work under way (drains, registrations, labels)")
        else:
            ctx.requeue(settings.poll_seconds, "the CN stores as HAKeeper sees them")
        if report.recheck is not None:
            ctx.requeue(report.recheck, "whether a starting CN is stalled")

    async def read(
        self, ctx: Context, spec: CNSetSpec, service: LogService, given: SetInput[CNSetSpec]
    ) -> CNSetView:
        """Every read the round decides from, once: its pods, HAKeeper, and what
        MatrixOne says of the CNs the decision may need (the loads due for a refresh or,
        on scale-in, every one; draining CNs whose drain may be over, and their lock
        tables), the cache claims, the clock."""
        obj = ctx.obj
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
        pods = tuple(self.env.caches.list(r.PODS, ctx.namespace, given.selector))
        admin = self.env.admin.admin(service.discovery_address)
        now, settings = self.env.clock(), self.env.settings
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
            cache_claims=self._cache_claims(pods) if spec.cache_volume else frozenset(),
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
                (ctx.namespace, ctx.name), waiting, now, settings.busy_poll_seconds
            )
        refreshed(pods, refresh, loads, self._stats_due, now)
        known = frozenset(name_of(p) for p in stats)
        return replace(
            view, loads=loads, locks=locks, refresh=refresh, sessions_known=known, registration_look=look
        )

    def _cache_claims(self, pods: Sequence[Mapping[str, Any]]) -> frozenset[str]:
        caches = self.env.caches
        return frozenset(
            name
            for namespace, name in claims_to_mount(pods)
            if caches.get(r.PVCS, namespace, name) is not None
        )

    def _services(self, ctx: Context, want: Desired, plan: Writes) -> None:
        """The config and the Services every pod shares."""
        name, obj = ctx.name, want.obj
        headless = headless_service(
            obj, names.headless_service_name(COMPONENT, name), want.obj_labels, want.selector, HEADLESS_PORTS
        )
        client = client_service(
            obj,
            names.client_service_name(COMPONENT, name),
            want.obj_labels,
            want.selector,
            ports.CN_SERVICE_PORT_NAME,
            ports.CN_SQL,
            service_type=want.spec.service_type,
            node_port=want.spec.node_port,
            annotations=want.spec.service_annotations,
        )
        desired = [
            (r.CONFIGMAPS, stamped(want.config)),
            (r.SERVICES, stamped(headless)),
            (r.SERVICES, stamped(client)),
        ]
        sync_desired(ctx, self.env, COMPONENT, want.spec, desired, plan)

    # --------------------------------------------------------------- finalize
    async def finalize(self, ctx: Context) -> bool:
        """With ``terminationPolicy: Drain``, every CN is drained before the set
        goes (its pods then go by owner reference, and each pod's finalizer
        removes its store from HAKeeper)."""
        view = await self._read_finalize(ctx)
        decision = Decision(finalized=True) if view is None else decide_finalize(view, self._settings)
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
