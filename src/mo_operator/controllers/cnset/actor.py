"""The CNSet controller: a group of compute nodes, with MatrixOne in the loop.

What it owns, named as upstream names them: the CN pods ``<cn>-cn-<i>``
(managed directly, see ``scaling.py`` and docs/design.md), their cache
volume claims, the headless Service ``<cn>-cn-headless``, the client
Service ``<cn>-cn`` (SQL 6001, of ``serviceType``), the metric Service
``<cn>-cn-metric`` (when Prometheus discovers it by Service) and the
immutable hashed ConfigMap.

Each round reads the set, its pods, HAKeeper and the clock once
(``observed.py``), then goes through its steps: load, shared objects
(config and Services), serving or pooling, report (``report.py``). Of the
component sets' skeleton (steps/podset.py) it takes the log service, the
config, the pod template's input, the sync of its shared objects and the
collection of unused configs; it makes its pods itself, so its roll is read
from them.

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

from collections.abc import Mapping, Sequence
from typing import Any

from mo_operator.api.cnset import CNSet, CNSetSpec
from mo_operator.kube.controller.actor import Context
from mo_operator.kube.controller.outcome import TerminalError
from mo_operator.kube.meta.objects import is_deleting, labels_of, name_of, uid_of
from mo_operator.matrixone import labels, layout, names, ports
from mo_operator.matrixone.component import Component

from ..framework import resources as r
from ..framework.admission import admit
from ..framework.desired import stamped
from ..framework.env import Env
from ..framework.references import report_references
from ..framework.writes import Writes
from ..specs import pods as podutil
from ..specs.services import client_service, headless_service
from ..specs.statefulsets import stall
from ..steps.deps import Waiting, logset_ref, resolve
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
from .claims import sync_cache_claims
from .drain import drain_enabled, progress_drains, start_drain, undrain, with_drain_default
from .observed import Desired, Observed
from .registration import Registration, unregistered
from .report import Pooling, Serving, first_fields, serving_rollout
from .scaling import CNPod, decide, strategy_of
from .stats import sync_stats
from .stores import cordoned, hakeeper_state, report_hakeeper, store_of, sync_stores
from .udf import python_udf_sidecar

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

    # ---------------------------------------------------------------- observe
    async def observe(self, ctx: Context) -> Writes | None:
        loaded = await self._load(ctx)
        if loaded is None:
            return None
        seen, want = loaded
        self._services(seen, want)
        if pooling.pooled(seen.spec):
            outcome: Serving | Pooling = await self._pool(seen, want)
        else:
            outcome = await self._serve(seen, want)
        outcome.report(seen, want.selector)
        settings = self.env.settings
        if outcome.busy:
            ctx.wait(settings.busy_poll_seconds, "the CNs' work under way (drains, registrations, labels)")
        else:
            ctx.requeue(settings.poll_seconds, "the CN stores as HAKeeper sees them")
        if outcome.recheck is not None:
            ctx.requeue(outcome.recheck, "whether a starting CN is stalled")
        return seen.plan or None

    async def _load(self, ctx: Context) -> tuple[Observed, Desired] | None:
        """Read everything this round decides from, once: None while the log service is not there."""
        obj = ctx.obj
        spec = admit(CNSet, obj).spec
        service = wait_for_log_service(ctx, self.env, obj, spec)
        if service is None:
            selector = labels.sub_resource_labels(COMPONENT, ctx.name, ctx.namespace)
            first_status(ctx, first_fields(ctx, selector), *NOT_STARTED, replicas=spec.replicas)
            return None
        given = served_input(obj, COMPONENT, spec, service, config_spec=with_drain_default(spec))
        await report_references(ctx, self.env.references, set_references(given))
        template = self._template(given)
        want = Desired(
            obj,
            spec,
            service,
            given.selector,
            given.labels,
            given.config,
            template,
            cnpods.template_hash(template),
        )
        pods = self.env.caches.list(r.PODS, ctx.namespace, given.selector)
        admin = self.env.admin.admin(service.discovery_address)
        now, settings = self.env.clock(), self.env.settings
        state, trouble = None, None
        if pods:
            state, trouble = await hakeeper_state(
                ctx, admin, service.discovery_address, self._patience, now, settings.rpc_patience_seconds
            )
            report_hakeeper(ctx, trouble)
        plan = Writes(self.env.client)
        seen = Observed(ctx, spec, pods, state, admin, now, plan, settings.drain_timeout_seconds, trouble)
        return seen, want

    def _services(self, seen: Observed, want: Desired) -> None:
        """The config and the Services every pod shares."""
        name, obj = seen.ctx.name, want.obj
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
        sync_desired(seen.ctx, self.env, COMPONENT, want.spec, desired, seen.plan)

    async def _serve(self, seen: Observed, want: Desired) -> Serving:
        """A serving set: pods toward ``replicas`` on the current template, drained
        before they leave."""
        plan, spec = seen.plan, seen.spec
        active = [p for p in seen.pods if not is_deleting(p) and cnpods.draining_since(p) is None]
        loads = await sync_stats(seen, self._stats_due, read_all=len(active) > seen.replicas)
        decision = decide(
            [self._member(p, want.digest, loads) for p in seen.pods],
            seen.replicas,
            strategy_of(spec, seen.replicas),
            max_create=plan.room,
        )
        for index in decision.create:
            plan.create(self._new_pod(want, index), r.PODS)
        sync_cache_claims(self.env, seen, want)
        by_name = seen.by_name()
        for pod_name in decision.undrain:
            undrain(seen.ctx, seen.admin, by_name[pod_name], seen.store_labels, plan)
        draining_now = self._retire(seen, decision.retire)
        drains_pending = await progress_drains(seen, decision.undrain)
        unsettled = sync_stores(seen, set(decision.retire) | draining_now)
        look = self._registration.next_look(
            (seen.ctx.namespace, seen.ctx.name),
            unregistered(seen.pods, seen.state),
            seen.now,
            self.env.settings.busy_poll_seconds,
        )
        if look is not None:
            seen.ctx.wait(look, "CN stores to register with HAKeeper")
        self._collect_configs(seen, want, rolled=decision.create == ())
        roll = serving_rollout(seen, want.digest, self.env.settings.rollout_stall_seconds)
        busy = bool(plan) or drains_pending or unsettled or not roll.complete
        return Serving(roll, decision.waiting, busy)

    @staticmethod
    def _member(pod: Mapping[str, Any], digest: str, loads: Mapping[str, int]) -> CNPod:
        return CNPod(
            name_of(pod),
            cnpods.index_of(pod),
            labels_of(pod).get(cnpods.TEMPLATE_HASH) == digest,
            podutil.is_ready(pod),
            cnpods.draining_since(pod) is not None,
            is_deleting(pod),
            loads.get(name_of(pod), 0),
        )

    @staticmethod
    def _retire(seen: Observed, retire: Sequence[str]) -> set[str]:
        """Start draining the pods that leave (a cordoned CN drains too, though not
        ready); delete at once those with nothing to drain. The pods now draining."""
        by_name = seen.by_name()
        draining_now: set[str] = set()
        for pod_name in retire:
            victim = by_name[pod_name]
            # unknown when HAKeeper does not say: drain, and the drain ends by its timeout at worst
            registered = seen.state is None or store_of(seen.state, victim) is not None
            if drain_enabled(seen.spec) and registered and (podutil.is_ready(victim) or cordoned(victim)):
                start_drain(seen.ctx, seen.admin, victim, seen.now, seen.plan)
                draining_now.add(pod_name)
            else:
                seen.plan.delete(r.PODS, seen.ctx.namespace, pod_name, uid=uid_of(victim))
        return draining_now

    def _collect_configs(self, seen: Observed, want: Desired, *, rolled: bool) -> None:
        """Delete the set's ConfigMaps no pod uses any more, once no pod is left to
        create (a pod made this round runs the current config, which is kept)."""
        keep = [name_of(want.config)]
        collect_configs(self.env, want.obj, COMPONENT, seen.pods, keep, seen.plan, rolled=rolled)

    async def _pool(self, seen: Observed, want: Desired) -> Pooling:
        """``podManagementPolicy: Pooling`` (see ``pooling.py``): the set keeps the pods
        its pool asks for, moves them along their pool phases, and never rolls."""
        plan = seen.plan
        decision = pooling.decide_pooling(
            pooling.members(seen.pods),
            seen.replicas,
            seen.spec.pods_to_delete or (),
            max_create=plan.room,
        )
        by_name = seen.by_name()
        for index in decision.create:
            plan.create(pooling.as_pool_pod(self._new_pod(want, index)), r.PODS)
        sync_cache_claims(self.env, seen, want)
        for pod_name in decision.retire:
            pooling.retire(by_name[pod_name], plan)
        unsettled = await pooling.sync_pool_stores(seen, decision.retire)
        # After the phase moves: those carry the resourceVersion they were decided on.
        await sync_stats(seen, self._stats_due, read_all=False)
        self._collect_configs(seen, want, rolled=decision.create == ())
        starting = [
            p for p in seen.pods if not is_deleting(p) and pooling.phase_of(p) == labels.POOL_PHASE_UNKNOWN
        ]
        stalled, recheck = stall(starting, seen.now, self.env.settings.rollout_stall_seconds)
        return Pooling(stalled, recheck, bool(plan) or unsettled)

    async def finalize(self, ctx: Context) -> bool:
        """With ``terminationPolicy: Drain``, every CN is drained before the set
        goes (its pods then go by owner reference, and each pod's finalizer
        removes its store from HAKeeper)."""
        try:
            spec = admit(CNSet, ctx.obj).spec
        except TerminalError:
            return True  # a spec the set never ran with: nothing of it to drain
        if spec.termination_policy != "Drain":
            return True
        namespace, name = ctx.namespace, ctx.name
        pods = self.env.caches.list(r.PODS, namespace, labels.sub_resource_labels(COMPONENT, name, namespace))
        live = [p for p in pods if not is_deleting(p)]
        if not live:
            return True
        service = resolve(self.env.caches, ctx.obj, spec)
        if isinstance(service, Waiting):
            return True  # no HAKeeper to drain through: nothing can hold sessions
        admin = self.env.admin.admin(service.discovery_address)
        seen = Observed(
            ctx,
            spec,
            live,
            None,
            admin,
            self.env.clock(),
            Writes(self.env.client),
            self.env.settings.drain_timeout_seconds,
        )
        for pod in live:
            if cnpods.draining_since(pod) is None:
                start_drain(ctx, admin, pod, seen.now, seen.plan)
        await progress_drains(seen, ())
        await seen.plan(ctx)
        ctx.wait(self.env.settings.busy_poll_seconds, "the CNs to drain before the set goes")
        return False

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

    @staticmethod
    def _new_pod(want: Desired, index: int) -> Obj:
        """CN pod ``index`` of the set, on the current template."""
        ref = logset_ref(want.obj)
        spec = want.spec
        return cnpods.cn_pod(
            want.obj,
            want.template,
            want.digest,
            index,
            discovery=want.service.discovery_address,
            logset=f"{ref[0]}/{ref[1]}" if ref else None,
            cn_labels=cnpods.cn_labels_json(spec),
            cache_volume=spec.cache_volume is not None,
        )
