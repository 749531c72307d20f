"""The CNSet controller: a group of compute nodes, with MatrixOne in the loop.

What it owns, named as upstream names them: the CN pods ``<cn>-cn-<i>``
(managed directly, see ``scaling.py`` and docs/design.md), their cache
volume claims, the headless Service ``<cn>-cn-headless``, the client
Service ``<cn>-cn`` (SQL 6001, of ``serviceType``), the metric Service
``<cn>-cn-metric`` (when Prometheus discovers it by Service) and the
immutable hashed ConfigMap.

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
  pipelines or replicas, or until ``storeDrainTimeout``; then delete it;
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
    HAKeeperState,
    MOAdmin,
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
from .drain import (
    drain_enabled,
    progress_drains,
    scaling_in,
    sessions_per_pod,
    start_drain,
    undrain,
    with_drain_default,
)
from .scaling import CNPod, decide, strategy_of
from .stores import hakeeper_state, store_of, sync_stores
from .udf import python_udf_sidecar

Obj = dict[str, Any]

COMPONENT = Component.CN
HEADLESS_PORTS = (("service", ports.CN_SQL), ("rpc", ports.CN_RPC), ("lock-service", ports.CN_LOCK_SERVICE))


class CNSetActor:
    def __init__(self, env: Env) -> None:
        self.env = env

    # ---------------------------------------------------------------- observe
    async def observe(self, ctx: Context) -> Writes | None:
        obj = ctx.obj
        spec = admitted("CNSet", obj)["spec"]
        service = resolve(self.env.caches, obj, spec)
        if isinstance(service, Waiting):
            ctx.set_condition("Ready", False, service.reason, service.message)
            return None
        namespace, name = ctx.namespace, ctx.name
        selector = labels.sub_resource_labels(COMPONENT, name, namespace)
        obj_labels = set_labels(COMPONENT, obj)
        render_spec = with_drain_default(spec)
        config = self._config_map(obj, render_spec, service, obj_labels)
        desired = [
            (r.CONFIGMAPS, stamped(config)),
            (
                r.SERVICES,
                stamped(
                    headless_service(
                        obj,
                        names.headless_service_name(COMPONENT, name),
                        obj_labels,
                        selector,
                        HEADLESS_PORTS,
                    )
                ),
            ),
            (
                r.SERVICES,
                stamped(
                    client_service(
                        obj,
                        names.client_service_name(COMPONENT, name),
                        obj_labels,
                        selector,
                        ports.CN_SERVICE_PORT_NAME,
                        ports.CN_SQL,
                        spec,
                    )
                ),
            ),
        ]
        plan = Writes(self.env.client)
        plan.sync(self.env.caches, desired)
        sync_metric_service(self.env.caches, obj, COMPONENT, spec, plan)
        template = self._template(obj, spec, service, selector, obj_labels, config["metadata"]["name"])
        digest = cnpods.template_hash(template)
        pods = self.env.caches.list(r.PODS, namespace, selector)
        admin = self.env.admin.admin(service.discovery_address)
        state = await hakeeper_state(ctx, admin) if pods else None
        replicas = int(spec["replicas"])
        if pooling.is_pooling(spec):
            return await self._observe_pooling(
                ctx,
                obj,
                spec,
                service,
                template,
                digest,
                pods,
                state,
                admin,
                selector,
                obj_labels,
                config,
                plan,
            )
        loads = await sessions_per_pod(admin, pods, state) if scaling_in(pods, replicas) else {}
        members = [
            CNPod(
                name_of(p),
                cnpods.index_of(p),
                (p["metadata"].get("labels") or {}).get(cnpods.TEMPLATE_HASH) == digest,
                podutil.is_ready(p),
                cnpods.draining_since(p) is not None,
                is_deleting(p),
                loads.get(name_of(p), 0),
            )
            for p in pods
        ]
        decision = decide(members, replicas, strategy_of(spec, replicas))
        by_name = {name_of(p): p for p in pods}
        now = self.env.clock()
        for index in decision.create:
            plan.create(self._new_pod(obj, spec, template, digest, index, service), r.PODS)
        self._cache_claims(obj, spec, pods, obj_labels, plan)
        self._grow_cache_claims(ctx, spec, selector, plan)
        for pod_name in decision.undrain:
            undrain(ctx, admin, by_name[pod_name], spec, plan)
        draining_now: set[str] = set()
        for pod_name in decision.retire:
            victim = by_name[pod_name]
            if drain_enabled(spec) and store_of(state, victim) is not None and podutil.is_ready(victim):
                start_drain(admin, victim, now, plan)
                draining_now.add(pod_name)
            else:
                plan.delete(r.PODS, namespace, pod_name, uid=victim["metadata"]["uid"])
        drains_pending = await progress_drains(
            ctx, admin, spec, pods, decision.undrain, now, plan, self.env.settings.drain_timeout_seconds
        )
        retiring = set(decision.retire) | draining_now
        unsettled = sync_stores(ctx, admin, spec, pods, state, retiring, now, plan)
        if decision.create == () and not plan:
            base = names.config_map_base_name(COMPONENT, name)
            collect_unused(self.env.caches, obj, COMPONENT, base, pods, [config["metadata"]["name"]], plan)
        roll = self._rollout(pods, digest, replicas)
        self._status(ctx, spec, pods, state, roll, selector, decision.waiting, pending=bool(plan))
        busy = bool(plan) or drains_pending or unsettled or not roll.complete
        ctx.requeue(self.env.settings.busy_poll_seconds if busy else self.env.settings.poll_seconds)
        if roll.recheck_after is not None:
            ctx.requeue(roll.recheck_after)
        return plan or None

    async def _observe_pooling(
        self,
        ctx: Context,
        obj: Mapping[str, Any],
        spec: Mapping[str, Any],
        service: LogService,
        template: Obj,
        digest: str,
        pods: Sequence[Mapping[str, Any]],
        state: HAKeeperState | None,
        admin: MOAdmin,
        selector: Mapping[str, str],
        obj_labels: Mapping[str, str],
        config: Obj,
        plan: Writes,
    ) -> Writes | None:
        """``podManagementPolicy: Pooling`` (see ``pooling.py``): the set keeps the pods
        its pool asks for, moves them along their pool phases, and never rolls."""
        replicas = int(spec["replicas"])
        decision = pooling.decide_pooling(pooling.members(pods), replicas, spec.get("podsToDelete") or ())
        by_name = {name_of(p): p for p in pods}
        now = self.env.clock()
        for index in decision.create:
            plan.create(
                pooling.as_pool_pod(self._new_pod(obj, spec, template, digest, index, service)), r.PODS
            )
        self._cache_claims(obj, spec, pods, obj_labels, plan)
        self._grow_cache_claims(ctx, spec, selector, plan)
        for pod_name in decision.retire:
            pooling.retire(by_name[pod_name], plan)
        unsettled = await pooling.sync_pool_stores(
            ctx,
            admin,
            spec,
            pods,
            state,
            decision.retire,
            now,
            plan,
            self.env.settings.drain_timeout_seconds,
        )
        if decision.create == () and not plan:
            base = names.config_map_base_name(COMPONENT, ctx.name)
            collect_unused(self.env.caches, obj, COMPONENT, base, pods, [config["metadata"]["name"]], plan)
        starting = [
            p for p in pods if not is_deleting(p) and pooling.phase_of(p) == labels.POOL_PHASE_UNKNOWN
        ]
        stalled, recheck = stall(starting, now, self.env.settings.rollout_stall_seconds)
        self._pooling_status(ctx, pods, state, replicas, selector, stalled)
        busy = bool(plan) or unsettled
        ctx.requeue(self.env.settings.busy_poll_seconds if busy else self.env.settings.poll_seconds)
        if recheck is not None:
            ctx.requeue(recheck)
        return plan or None

    def _pooling_status(
        self,
        ctx: Context,
        pods: Sequence[Mapping[str, Any]],
        state: HAKeeperState | None,
        replicas: int,
        selector: Mapping[str, str],
        stalled: str | None,
    ) -> None:
        status = ctx.status
        namespace, name = ctx.namespace, ctx.name
        live = sorted((p for p in pods if not is_deleting(p)), key=name_of)
        stores = []
        for pod in live:
            store = store_of(state, pod)
            work = store.work_state if store is not None else None
            phase = {WorkState.WORKING: "Up", WorkState.DRAINING: "Draining"}.get(work, "Unknown")  # type: ignore[arg-type]
            stores.append({"uuid": cnpods.store_uuid(pod), "podName": name_of(pod), "state": phase})
        status["stores"] = stores
        status["replicas"] = len(live)
        status["readyReplicas"] = sum(1 for p in live if podutil.is_ready(p))
        status["labelSelector"] = str(selector_from_dict({"matchLabels": selector}))
        status["host"] = names.service_host(COMPONENT, name, namespace)
        status["port"] = ports.CN_SQL
        counts = pooling.pool_counts(live)
        serving = len(live) - counts[labels.POOL_PHASE_TERMINATING]
        if stalled:
            ctx.set_condition("Ready", False, "RolloutStalled", stalled)
        elif state is None and live:
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
        plan = Writes(self.env.client)
        now = self.env.clock()
        for pod in live:
            if cnpods.draining_since(pod) is None:
                start_drain(admin, pod, now, plan)
        await progress_drains(ctx, admin, spec, live, (), now, plan, self.env.settings.drain_timeout_seconds)
        await plan(ctx)
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

    def _new_pod(
        self,
        obj: Mapping[str, Any],
        spec: Mapping[str, Any],
        template: Mapping[str, Any],
        digest: str,
        index: int,
        service: LogService,
    ) -> Obj:
        """CN pod ``index`` of the set, on the current template."""
        ref = logset_ref(obj)
        return cnpods.cn_pod(
            obj,
            template,
            digest,
            index,
            discovery=service.discovery_address,
            logset=f"{ref[0]}/{ref[1]}" if ref else None,
            cn_labels=cnpods.cn_labels_json(spec),
            cache_volume=bool(spec.get("cacheVolume")),
        )

    def _cache_claims(
        self,
        obj: Mapping[str, Any],
        spec: Mapping[str, Any],
        pods: Sequence[Mapping[str, Any]],
        obj_labels: Mapping[str, str],
        plan: Writes,
    ) -> None:
        """A cache volume claim for each pod that mounts one and has none yet
        (made after the pod, since it is owned by the pod)."""
        volume = spec.get("cacheVolume")
        if not volume:
            return
        volume = {
            **volume,
            "size": canonical_resources({"requests": {"storage": volume["size"]}})["requests"]["storage"],
        }
        for pod in pods:
            if is_deleting(pod):
                continue
            claim_name = cnpods.cache_claim_name(name_of(pod))
            mounts = any(
                (v.get("persistentVolumeClaim") or {}).get("claimName") == claim_name
                for v in (pod.get("spec") or {}).get("volumes") or ()
            )
            if mounts and self.env.caches.get(r.PVCS, pod["metadata"]["namespace"], claim_name) is None:
                claim = cnpods.cache_claim(obj, pod, volume, obj_labels, reuse=bool(spec.get("reusePVC")))
                plan.create(claim, r.PVCS)

    def _grow_cache_claims(
        self, ctx: Context, spec: Mapping[str, Any], selector: Mapping[str, str], plan: Writes
    ) -> None:
        """Grow the existing cache volume claims to ``cacheVolume.size`` (new pods get
        claims of that size anyway)."""
        volume = spec.get("cacheVolume")
        if not volume:
            return
        prefix = f"{layout.DATA_VOLUME}-"
        claims = [
            c for c in self.env.caches.list(r.PVCS, ctx.namespace, selector) if name_of(c).startswith(prefix)
        ]
        expand_claims(ctx, self.env, str(volume["size"]), claims, plan)

    # ---------------------------------------------------------------- status
    def _rollout(self, pods: Sequence[Mapping[str, Any]], digest: str, replicas: int) -> Rollout:
        live = [p for p in pods if not is_deleting(p)]
        current = [p for p in live if (p["metadata"].get("labels") or {}).get(cnpods.TEMPLATE_HASH) == digest]
        ready = sum(1 for p in live if podutil.is_ready(p) and cnpods.draining_since(p) is None)
        updated = sum(1 for p in current if cnpods.draining_since(p) is None)
        complete = len(live) == replicas == updated and all(podutil.is_ready(p) for p in current)
        serving = [
            p for p in live if cnpods.draining_since(p) is None
        ]  # draining pods are not ready on purpose
        stalled, recheck = stall(serving, self.env.clock(), self.env.settings.rollout_stall_seconds)
        return Rollout(replicas, min(ready, replicas), min(updated, replicas), complete, stalled, recheck)

    def _status(
        self,
        ctx: Context,
        spec: Mapping[str, Any],
        pods: Sequence[Mapping[str, Any]],
        state: HAKeeperState | None,
        roll: Rollout,
        selector: Mapping[str, str],
        waiting: str | None,
        *,
        pending: bool,
    ) -> None:
        status = ctx.status
        namespace, name = ctx.namespace, ctx.name
        live = sorted((p for p in pods if not is_deleting(p)), key=name_of)
        stores = []
        for pod in live:
            store = store_of(state, pod)
            if cnpods.draining_since(pod) is not None:
                phase = "Draining"
            elif store is not None and store.work_state is WorkState.WORKING:
                phase = "Up"
            else:
                phase = "Unknown"
            stores.append({"uuid": cnpods.store_uuid(pod), "podName": name_of(pod), "state": phase})
        status["stores"] = stores
        status["replicas"] = len(live)
        status["readyReplicas"] = roll.ready
        status["labelSelector"] = str(selector_from_dict({"matchLabels": selector}))
        status["host"] = names.service_host(COMPONENT, name, namespace)
        status["port"] = ports.CN_SQL
        replicas = int(spec["replicas"])
        if roll.stalled:
            ctx.set_condition("Ready", roll.ready >= replicas > 0, "RolloutStalled", roll.stalled)
        elif state is None and live:
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
