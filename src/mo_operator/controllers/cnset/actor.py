"""The CNSet controller: a group of compute nodes, with MatrixOne in the loop.

What it owns, named as upstream names them: the CN pods ``<cn>-cn-<i>``
(managed directly, see ``scaling.py`` and docs/design.md), their cache
volume claims, the headless Service ``<cn>-cn-headless``, the client
Service ``<cn>-cn`` (SQL 6001, of ``serviceType``), the metric Service
``<cn>-cn-metric`` (when Prometheus discovers it by Service) and the
immutable hashed ConfigMap.

Each round reads the set, its pods, HAKeeper and the clock once
(``observed.py``), then goes through its steps: load, shared objects
(config and Services), serving or pooling, report.

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

from mo_operator.kube.actor import Context
from mo_operator.kube.selectors import selector_from_dict
from mo_operator.matrixone import labels, layout, names, ports
from mo_operator.matrixone.admin import (
    WorkState,
)
from mo_operator.matrixone.component import Component
from mo_operator.matrixone.config import config_map_data

from ..common import pods as podutil
from ..common import resources as r
from ..common.admission import admitted
from ..common.configmaps import collect_unused, hashed_config_map, invalid_config_is_terminal
from ..common.deps import LogService, Waiting, logset_ref, resolve
from ..common.desired import stamped
from ..common.env import Env
from ..common.expansion import expand_claims
from ..common.meta import is_deleting, name_of, set_labels
from ..common.podtemplate import PodTemplateInput, canonical_resources, pod_template, restart_stamp
from ..common.prometheus import sync_metric_service
from ..common.services import client_service, headless_service
from ..common.statefulsets import Rollout, stall
from ..common.status import UP_TO_DATE, set_rollout_conditions
from ..common.writes import Writes
from . import pods as cnpods
from . import pooling
from .drain import drain_enabled, progress_drains, start_drain, undrain, with_drain_default
from .observed import Desired, Observed
from .scaling import CNPod, decide, strategy_of
from .stats import sync_stats
from .stores import cordoned, hakeeper_state, store_of, sync_stores
from .udf import python_udf_sidecar

Obj = dict[str, Any]

COMPONENT = Component.CN
HEADLESS_PORTS = (("service", ports.CN_SQL), ("rpc", ports.CN_RPC), ("lock-service", ports.CN_LOCK_SERVICE))


class CNSetActor:
    def __init__(self, env: Env) -> None:
        self.env = env
        self._stats_due: dict[str, float] = {}
        """Pod uid → when its load annotations are next refreshed (``stats.py``)."""

    # ---------------------------------------------------------------- observe
    async def observe(self, ctx: Context) -> Writes | None:
        loaded = await self._load(ctx)
        if loaded is None:
            return None
        seen, want = loaded
        self._services(seen, want)
        if pooling.is_pooling(seen.spec):
            busy, recheck = await self._pool(seen, want)
        else:
            busy, recheck = await self._serve(seen, want)
        settings = self.env.settings
        ctx.requeue(settings.busy_poll_seconds if busy else settings.poll_seconds)
        if recheck is not None:
            ctx.requeue(recheck)
        return seen.plan or None

    async def _load(self, ctx: Context) -> tuple[Observed, Desired] | None:
        """Read everything this round decides from, once: None while the log service is not there."""
        obj = ctx.obj
        spec = admitted("CNSet", obj)["spec"]
        service = resolve(self.env.caches, obj, spec)
        if isinstance(service, Waiting):
            ctx.set_condition("Ready", False, service.reason, service.message)
            return None
        selector = labels.sub_resource_labels(COMPONENT, ctx.name, ctx.namespace)
        obj_labels = set_labels(COMPONENT, obj)
        config = self._config_map(obj, with_drain_default(spec), service, obj_labels)
        template = self._template(obj, spec, service, selector, obj_labels, config["metadata"]["name"])
        want = Desired(obj, service, selector, obj_labels, config, template, cnpods.template_hash(template))
        pods = self.env.caches.list(r.PODS, ctx.namespace, selector)
        admin = self.env.admin.admin(service.discovery_address)
        state = await hakeeper_state(ctx, admin) if pods else None
        plan = Writes(self.env.client)
        seen = Observed(
            ctx, spec, pods, state, admin, self.env.clock(), plan, self.env.settings.drain_timeout_seconds
        )
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
            seen.spec,
        )
        desired = [
            (r.CONFIGMAPS, stamped(want.config)),
            (r.SERVICES, stamped(headless)),
            (r.SERVICES, stamped(client)),
        ]
        seen.plan.sync(self.env.caches, desired)
        sync_metric_service(self.env.caches, obj, COMPONENT, seen.spec, seen.plan)

    async def _serve(self, seen: Observed, want: Desired) -> tuple[bool, float | None]:
        """A serving set: pods toward ``replicas`` on the current template, drained
        before they leave. Whether it is busy, and when to look again."""
        plan, spec = seen.plan, seen.spec
        active = [p for p in seen.pods if not is_deleting(p) and cnpods.draining_since(p) is None]
        loads = await sync_stats(seen, self._stats_due, read_all=len(active) > seen.replicas)
        decision = decide(
            [self._member(p, want.digest, loads) for p in seen.pods],
            seen.replicas,
            strategy_of(spec, seen.replicas),
        )
        for index in decision.create:
            plan.create(self._new_pod(want, index), r.PODS)
        self._cache_claims(seen, want)
        self._grow_cache_claims(seen, want)
        by_name = seen.by_name()
        for pod_name in decision.undrain:
            undrain(seen.ctx, seen.admin, by_name[pod_name], spec, plan)
        draining_now = self._retire(seen, decision.retire)
        drains_pending = await progress_drains(seen, decision.undrain)
        unsettled = sync_stores(seen, set(decision.retire) | draining_now)
        if decision.create == () and not plan:
            self._collect_configs(seen, want)
        roll = self._rollout(seen, want.digest)
        self._status(seen, roll, decision.waiting, pending=bool(plan))
        busy = bool(plan) or drains_pending or unsettled or not roll.complete
        return busy, roll.recheck_after

    @staticmethod
    def _member(pod: Mapping[str, Any], digest: str, loads: Mapping[str, int]) -> CNPod:
        return CNPod(
            name_of(pod),
            cnpods.index_of(pod),
            (pod["metadata"].get("labels") or {}).get(cnpods.TEMPLATE_HASH) == digest,
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
            registered = store_of(seen.state, victim) is not None
            if drain_enabled(seen.spec) and registered and (podutil.is_ready(victim) or cordoned(victim)):
                start_drain(seen.admin, victim, seen.now, seen.plan)
                draining_now.add(pod_name)
            else:
                seen.plan.delete(r.PODS, seen.ctx.namespace, pod_name, uid=victim["metadata"]["uid"])
        return draining_now

    def _collect_configs(self, seen: Observed, want: Desired) -> None:
        """Delete the set's ConfigMaps no pod uses any more."""
        base = names.config_map_base_name(COMPONENT, seen.ctx.name)
        name = want.config["metadata"]["name"]
        collect_unused(self.env.caches, want.obj, COMPONENT, base, seen.pods, [name], seen.plan)

    async def _pool(self, seen: Observed, want: Desired) -> tuple[bool, float | None]:
        """``podManagementPolicy: Pooling`` (see ``pooling.py``): the set keeps the pods
        its pool asks for, moves them along their pool phases, and never rolls."""
        plan = seen.plan
        decision = pooling.decide_pooling(
            pooling.members(seen.pods), seen.replicas, seen.spec.get("podsToDelete") or ()
        )
        by_name = seen.by_name()
        for index in decision.create:
            plan.create(pooling.as_pool_pod(self._new_pod(want, index)), r.PODS)
        self._cache_claims(seen, want)
        self._grow_cache_claims(seen, want)
        for pod_name in decision.retire:
            pooling.retire(by_name[pod_name], plan)
        unsettled = await pooling.sync_pool_stores(seen, decision.retire)
        # After the phase moves: those carry the resourceVersion they were decided on.
        await sync_stats(seen, self._stats_due, read_all=False)
        if decision.create == () and not plan:
            self._collect_configs(seen, want)
        starting = [
            p for p in seen.pods if not is_deleting(p) and pooling.phase_of(p) == labels.POOL_PHASE_UNKNOWN
        ]
        stalled, recheck = stall(starting, seen.now, self.env.settings.rollout_stall_seconds)
        self._pooling_status(seen, want.selector, stalled)
        return bool(plan) or unsettled, recheck

    def _pooling_status(self, seen: Observed, selector: Mapping[str, str], stalled: str | None) -> None:
        ctx, replicas = seen.ctx, seen.replicas
        status = ctx.status
        live = sorted((p for p in seen.pods if not is_deleting(p)), key=name_of)
        stores = []
        for pod in live:
            store = store_of(seen.state, pod)
            work = store.work_state if store is not None else None
            phase = {WorkState.WORKING: "Up", WorkState.DRAINING: "Draining"}.get(work, "Unknown")  # type: ignore[arg-type]
            stores.append({"uuid": cnpods.store_uuid(pod), "podName": name_of(pod), "state": phase})
        self._common_status(seen, selector, live, stores)
        status["readyReplicas"] = sum(1 for p in live if podutil.is_ready(p))
        counts = pooling.pool_counts(live)
        serving = len(live) - counts[labels.POOL_PHASE_TERMINATING]
        if stalled:
            ctx.set_condition("Ready", False, "RolloutStalled", stalled)
        elif seen.state is None and live:
            ctx.set_condition("Ready", False, "HAKeeperUnavailable", "HAKeeper does not answer")
        elif serving < replicas or counts[labels.POOL_PHASE_UNKNOWN]:
            registered = serving - counts[labels.POOL_PHASE_UNKNOWN]
            ctx.set_condition(
                "Ready",
                False,
                "CNsNotReady",
                f"{registered}/{replicas} CNs registered; {pooling.describe_counts(counts)}",
            )
        else:
            ctx.set_condition("Ready", True, "AllCNsReady", pooling.describe_counts(counts))
        ctx.set_condition(
            UP_TO_DATE,
            True,
            "Pooling",
            "a pooling set never rolls its pods: its pool starts a new set for a new template",
        )

    async def finalize(self, ctx: Context) -> bool:
        """With ``terminationPolicy: Drain``, every CN is drained before the set
        goes (its pods then go by owner reference, and each pod's finalizer
        removes its store from HAKeeper)."""
        spec = ctx.obj.get("spec") or {}
        if spec.get("terminationPolicy") != "Drain":
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
                start_drain(admin, pod, seen.now, seen.plan)
        await progress_drains(seen, ())
        await seen.plan(ctx)
        ctx.requeue(self.env.settings.busy_poll_seconds)
        return False

    # ---------------------------------------------------------------- desired
    def _config_map(
        self,
        obj: Mapping[str, Any],
        spec: Mapping[str, Any],
        service: LogService,
        obj_labels: Mapping[str, str],
    ) -> Obj:
        namespace, name = obj["metadata"].get("namespace") or "", obj["metadata"]["name"]
        with invalid_config_is_terminal():
            data = config_map_data(
                COMPONENT,
                name=name,
                namespace=namespace,
                spec=spec,
                shared_storage=service.shared_storage,
                hakeeper=service.endpoint,
            )
        return hashed_config_map(obj, names.config_map_base_name(COMPONENT, name), obj_labels, data)

    def _template(
        self,
        obj: Mapping[str, Any],
        spec: Mapping[str, Any],
        service: LogService,
        selector: Mapping[str, str],
        obj_labels: Mapping[str, str],
        config_map: str,
    ) -> Obj:
        namespace, name = obj["metadata"].get("namespace") or "", obj["metadata"]["name"]
        cache = spec.get("cacheVolume")
        template = pod_template(
            PodTemplateInput(
                component=COMPONENT,
                set_name=name,
                namespace=namespace,
                spec=spec,
                image=str(spec.get("image") or ""),
                config_map=config_map,
                selector_labels=selector,
                shared_storage=service.shared_storage,
                extra_labels=obj_labels,
                extra_mounts=[{"name": layout.DATA_VOLUME, "mountPath": layout.DATA_PATH}] if cache else (),
                readiness_gates=(labels.CN_STORE_READINESS,),
                headless_service=names.headless_service_name(COMPONENT, name),
                image_pull_policy=(spec.get("overlay") or {}).get("imagePullPolicy"),
                restart_at=restart_stamp(obj),
            )
        )
        sidecar = python_udf_sidecar(spec)
        if sidecar is not None:
            template["spec"]["containers"].append(sidecar)
        return template

    @staticmethod
    def _new_pod(want: Desired, index: int) -> Obj:
        """CN pod ``index`` of the set, on the current template."""
        ref = logset_ref(want.obj)
        spec = want.obj["spec"]
        return cnpods.cn_pod(
            want.obj,
            want.template,
            want.digest,
            index,
            discovery=want.service.discovery_address,
            logset=f"{ref[0]}/{ref[1]}" if ref else None,
            cn_labels=cnpods.cn_labels_json(spec),
            cache_volume=bool(spec.get("cacheVolume")),
        )

    def _cache_claims(self, seen: Observed, want: Desired) -> None:
        """A cache volume claim for each pod that mounts one and has none yet
        (made after the pod, since it is owned by the pod)."""
        spec = seen.spec
        volume = spec.get("cacheVolume")
        if not volume:
            return
        volume = {
            **volume,
            "size": canonical_resources({"requests": {"storage": volume["size"]}})["requests"]["storage"],
        }
        for pod in seen.pods:
            if is_deleting(pod):
                continue
            claim_name = cnpods.cache_claim_name(name_of(pod))
            mounts = any(
                (v.get("persistentVolumeClaim") or {}).get("claimName") == claim_name
                for v in (pod.get("spec") or {}).get("volumes") or ()
            )
            if mounts and self.env.caches.get(r.PVCS, pod["metadata"]["namespace"], claim_name) is None:
                claim = cnpods.cache_claim(
                    want.obj, pod, volume, want.obj_labels, reuse=bool(spec.get("reusePVC"))
                )
                seen.plan.create(claim, r.PVCS)

    def _grow_cache_claims(self, seen: Observed, want: Desired) -> None:
        """Grow the existing cache volume claims to ``cacheVolume.size`` (new pods get
        claims of that size anyway)."""
        volume = seen.spec.get("cacheVolume")
        if not volume:
            return
        prefix = f"{layout.DATA_VOLUME}-"
        claims = [
            c
            for c in self.env.caches.list(r.PVCS, seen.ctx.namespace, want.selector)
            if name_of(c).startswith(prefix)
        ]
        expand_claims(seen.ctx, self.env, str(volume["size"]), claims, seen.plan)

    # ---------------------------------------------------------------- status
    def _rollout(self, seen: Observed, digest: str) -> Rollout:
        replicas = seen.replicas
        live = [p for p in seen.pods if not is_deleting(p)]
        current = [p for p in live if (p["metadata"].get("labels") or {}).get(cnpods.TEMPLATE_HASH) == digest]
        ready = sum(1 for p in live if podutil.is_ready(p) and cnpods.draining_since(p) is None)
        updated = sum(1 for p in current if cnpods.draining_since(p) is None)
        complete = len(live) == replicas == updated and all(
            podutil.is_ready(p) or cordoned(p) for p in current
        )
        # draining and cordoned pods are not ready on purpose
        serving = [p for p in live if cnpods.draining_since(p) is None and not cordoned(p)]
        stalled, recheck = stall(serving, seen.now, self.env.settings.rollout_stall_seconds)
        return Rollout(replicas, min(ready, replicas), min(updated, replicas), complete, stalled, recheck)

    def _status(self, seen: Observed, roll: Rollout, waiting: str | None, *, pending: bool) -> None:
        ctx, replicas = seen.ctx, seen.replicas
        live = sorted((p for p in seen.pods if not is_deleting(p)), key=name_of)
        stores = []
        for pod in live:
            store = store_of(seen.state, pod)
            if cnpods.draining_since(pod) is not None or cordoned(pod):
                phase = "Draining"
            elif store is not None and store.work_state is WorkState.WORKING:
                phase = "Up"
            else:
                phase = "Unknown"
            stores.append({"uuid": cnpods.store_uuid(pod), "podName": name_of(pod), "state": phase})
        self._common_status(
            seen, labels.sub_resource_labels(COMPONENT, ctx.name, ctx.namespace), live, stores
        )
        ctx.status["readyReplicas"] = roll.ready
        fenced = [name_of(p) for p in live if cordoned(p)]
        if fenced:
            waiting = "; ".join(filter(None, [waiting, f"cordoned: {', '.join(fenced)}"]))
        if roll.stalled:
            ctx.set_condition("Ready", roll.ready >= replicas > 0, "RolloutStalled", roll.stalled)
        elif seen.state is None and live:
            ctx.set_condition("Ready", False, "HAKeeperUnavailable", "HAKeeper does not answer")
        elif roll.ready < replicas:
            ctx.set_condition(
                "Ready",
                False,
                "CNsNotReady",
                f"{roll.ready}/{replicas} CNs ready" + (f"; {waiting}" if waiting else ""),
            )
        else:
            ctx.set_condition("Ready", True, "AllCNsReady", f"{replicas} CNs registered and Working")
        set_rollout_conditions(ctx, roll, pending=pending)

    @staticmethod
    def _common_status(
        seen: Observed, selector: Mapping[str, str], live: Sequence[Mapping[str, Any]], stores: list[Obj]
    ) -> None:
        status = seen.ctx.status
        status["stores"] = stores
        status["replicas"] = len(live)
        status["labelSelector"] = str(selector_from_dict({"matchLabels": selector}))
        status["host"] = names.service_host(COMPONENT, seen.ctx.name, seen.ctx.namespace)
        status["port"] = ports.CN_SQL
