"""The CNSet controller: a group of compute nodes, with MatrixOne in the loop.

What it owns, named as upstream names them: the CN pods ``<cn>-cn-<i>``
(managed directly, see ``scaling.py`` and docs/design.md), their cache
volume claims, the headless Service ``<cn>-cn-headless``, the client
Service ``<cn>-cn`` (SQL 6001, of ``serviceType``) and the immutable hashed
ConfigMap.

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

Draining is on unless ``scalingConfig.storeDrainEnabled`` is false: removing
a CN with live sessions kills them, which is never what a platform engineer
wants by default (upstream drains only when asked).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any

from mo_operator.api.fields import parse_duration
from mo_operator.kube.actor import Context, TerminalError
from mo_operator.kube.selectors import selector_from_dict
from mo_operator.matrixone import labels, layout, names, ports
from mo_operator.matrixone.admin import (
    AdminError,
    CNStore,
    HAKeeperState,
    MOAdmin,
    StoreNotFound,
    WorkState,
    cn_labels_from_spec,
)
from mo_operator.matrixone.component import Component
from mo_operator.matrixone.config import config_map_data
from mo_operator.matrixone.config.tomlconfig import ConfigError

from ..common import pods as podutil
from ..common import resources as r
from ..common.admission import admitted
from ..common.configmaps import collect_unused, hashed_config_map
from ..common.deps import LogService, Waiting, logset_ref, resolve
from ..common.desired import stamped
from ..common.env import Env
from ..common.meta import is_deleting, name_of, set_labels
from ..common.podtemplate import PodTemplateInput, canonical_resources, pod_template, restart_stamp
from ..common.services import client_service, headless_service
from ..common.statefulsets import Rollout, stall
from ..common.status import set_rollout_conditions
from ..common.writes import Writes
from . import pods as cnpods
from .scaling import CNPod, decide, strategy_of

Obj = dict[str, Any]

COMPONENT = Component.CN
HEADLESS_PORTS = (("service", ports.CN_SQL), ("rpc", ports.CN_RPC), ("lock-service", ports.CN_LOCK_SERVICE))
DEFAULT_MIN_DRAIN_SECONDS = 15
PYTHON_UDF_IMAGE = "composer000/mo-python-udf-server:latest"


def drain_enabled(spec: Mapping[str, Any]) -> bool:
    return (spec.get("scalingConfig") or {}).get("storeDrainEnabled") is not False


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
        render_spec = _with_drain_default(spec)
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
        template = self._template(obj, spec, service, selector, obj_labels, config["metadata"]["name"])
        digest = cnpods.template_hash(template)
        pods = self.env.caches.list(r.PODS, namespace, selector)
        admin = self.env.admin.admin(service.discovery_address)
        state = await _hakeeper(ctx, admin) if pods else None
        replicas = int(spec["replicas"])
        loads = await self._sessions(admin, pods, state) if _scaling_in(pods, replicas) else {}
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
        ref = logset_ref(obj)
        for index in decision.create:
            new_pod = cnpods.cn_pod(
                obj,
                template,
                digest,
                index,
                discovery=service.discovery_address,
                logset=f"{ref[0]}/{ref[1]}" if ref else None,
                cn_labels=cnpods.cn_labels_json(spec),
                cache_volume=bool(spec.get("cacheVolume")),
            )
            plan.create(new_pod, r.PODS)
        self._cache_claims(obj, spec, pods, obj_labels, plan)
        for pod_name in decision.undrain:
            self._undrain(ctx, admin, by_name[pod_name], spec, plan)
        draining_now: set[str] = set()
        for pod_name in decision.retire:
            victim = by_name[pod_name]
            if drain_enabled(spec) and _store(state, victim) is not None and podutil.is_ready(victim):
                self._start_drain(admin, victim, now, plan)
                draining_now.add(pod_name)
            else:
                plan.delete(r.PODS, namespace, pod_name, uid=victim["metadata"]["uid"])
        drains_pending = await self._progress_drains(ctx, admin, spec, pods, decision.undrain, now, plan)
        retiring = set(decision.retire) | draining_now
        unsettled = self._sync_stores(ctx, admin, spec, pods, state, retiring, plan)
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
                self._start_drain(admin, pod, now, plan)
        await self._progress_drains(ctx, admin, spec, live, (), now, plan)
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
        try:
            data = config_map_data(
                COMPONENT,
                name=name,
                namespace=namespace,
                spec=spec,
                shared_storage=service.shared_storage,
                hakeeper=service.endpoint,
            )
        except ConfigError as e:
            raise TerminalError("InvalidConfig", f"spec.config: {e}") from e
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
        udf = spec.get("pythonUdfSidecar") or {}
        if udf.get("enabled"):
            sidecar: Obj = {
                "name": layout.PYTHON_UDF_CONTAINER,
                "image": udf.get("image") or PYTHON_UDF_IMAGE,
                "ports": [
                    {"name": "udf", "containerPort": int(udf.get("port") or ports.CN_PYTHON_UDF_DEFAULT)}
                ],
            }
            resources = canonical_resources(udf.get("resources"))
            if resources:
                sidecar["resources"] = resources
            template["spec"]["containers"].append(sidecar)
        return template

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

    # ---------------------------------------------------------------- drains
    async def _sessions(
        self, admin: MOAdmin, pods: Sequence[Mapping[str, Any]], state: HAKeeperState | None
    ) -> dict[str, int]:
        """Sessions per pod, to retire the least busy CNs on scale-in."""
        loads: dict[str, int] = {}
        for pod in pods:
            if _store(state, pod) is None or is_deleting(pod):
                continue
            try:
                loads[name_of(pod)] = (await admin.cn_load(cnpods.store_uuid(pod))).sessions
            except AdminError:
                continue
        return loads

    def _start_drain(self, admin: MOAdmin, pod: Mapping[str, Any], now: float, plan: Writes) -> None:
        uuid = cnpods.store_uuid(pod)
        plan.patch(
            r.PODS,
            pod["metadata"]["namespace"],
            name_of(pod),
            {"metadata": {"annotations": {labels.STORE_DRAINING_START: podutil.format_time(now)}}},
            what=f"start draining CN {name_of(pod)}",
        )
        plan.call(
            f"set CN {name_of(pod)} Draining", lambda: admin.set_cn_work_state(uuid, WorkState.DRAINING)
        )
        plan.patch(
            r.PODS,
            pod["metadata"]["namespace"],
            name_of(pod),
            {
                "status": {
                    "conditions": [
                        _store_condition(pod, False, "Draining", "the CN is draining before it leaves", now)
                    ]
                }
            },
            subresource="status",
            patch_type="strategic",
            what=f"take CN {name_of(pod)} out of service",
        )

    def _undrain(
        self, ctx: Context, admin: MOAdmin, pod: Mapping[str, Any], spec: Mapping[str, Any], plan: Writes
    ) -> None:
        uuid = cnpods.store_uuid(pod)
        cn_labels = cn_labels_from_spec(spec.get("cnLabels"))
        plan.call(
            f"put CN {name_of(pod)} back to work",
            lambda: admin.set_cn_work_state(uuid, WorkState.WORKING, cn_labels),
        )
        plan.patch(
            r.PODS,
            pod["metadata"]["namespace"],
            name_of(pod),
            {"metadata": {"annotations": {labels.STORE_DRAINING_START: None}}},
            what=f"stop draining CN {name_of(pod)}",
        )
        ctx.event(
            "Normal", "DrainCancelled", f"CN {name_of(pod)} is back in service: the set grew while it drained"
        )

    async def _progress_drains(
        self,
        ctx: Context,
        admin: MOAdmin,
        spec: Mapping[str, Any],
        pods: Sequence[Mapping[str, Any]],
        undrained: Sequence[str],
        now: float,
        plan: Writes,
    ) -> bool:
        """Delete the draining CNs whose drain is over; True while some still drain."""
        scaling = spec.get("scalingConfig") or {}
        min_delay = float(scaling.get("minDelaySeconds", DEFAULT_MIN_DRAIN_SECONDS))
        timeout_text = scaling.get("storeDrainTimeout")
        timeout = (
            parse_duration(str(timeout_text)) if timeout_text else self.env.settings.drain_timeout_seconds
        )
        pending = False
        for pod in pods:
            started = podutil.parse_time(cnpods.draining_since(pod))
            if started is None or is_deleting(pod) or name_of(pod) in undrained:
                continue
            elapsed = now - started
            done, why = False, ""
            if elapsed >= timeout:
                done, why = True, f"drain timed out after {int(elapsed)}s"
                ctx.event(
                    "Warning", "DrainTimeout", f"CN {name_of(pod)}: {why}, removing it with its sessions"
                )
            elif elapsed >= min_delay:
                try:
                    load = await admin.cn_load(cnpods.store_uuid(pod))
                    done, why = load.idle, "drained"
                except StoreNotFound:
                    done, why = True, "store already gone"
                except AdminError as e:
                    ctx.log.info("cannot read the load of draining CN %s: %s", name_of(pod), e)
            if done:
                plan.delete(r.PODS, pod["metadata"]["namespace"], name_of(pod), uid=pod["metadata"]["uid"])
                ctx.log.info("CN %s %s: removing it", name_of(pod), why)
            else:
                pending = True
        return pending

    # ---------------------------------------------------------------- stores
    def _sync_stores(
        self,
        ctx: Context,
        admin: MOAdmin,
        spec: Mapping[str, Any],
        pods: Sequence[Mapping[str, Any]],
        state: HAKeeperState | None,
        retiring: set[str],
        plan: Writes,
    ) -> bool:
        """Put registered CNs to work, sync their labels and their readiness gate.
        True while some CN is not yet registered and Working."""
        if state is None:
            return bool(pods)
        want_labels = cn_labels_from_spec(spec.get("cnLabels"))
        unsettled = False
        now = self.env.clock()
        for pod in pods:
            if is_deleting(pod) or cnpods.draining_since(pod) is not None or name_of(pod) in retiring:
                continue
            store = _store(state, pod)
            uuid = cnpods.store_uuid(pod)
            if store is None:
                unsettled = True
                condition = (False, "NotRegistered", "the CN has not registered in HAKeeper yet")
            elif store.work_state is not WorkState.WORKING:
                unsettled = True
                plan.call(
                    f"put CN {name_of(pod)} to work",
                    functools.partial(admin.set_cn_work_state, uuid, WorkState.WORKING, want_labels),
                )
                condition = (
                    False,
                    store.work_state.mo_name,
                    f"the CN is {store.work_state.mo_name} in HAKeeper",
                )
            else:
                if dict(store.labels) != want_labels:
                    plan.call(
                        f"set the labels of CN {name_of(pod)}",
                        functools.partial(admin.set_cn_labels, uuid, want_labels),
                    )
                condition = (True, "Working", "the CN is registered and Working")
            current = podutil.condition(pod, labels.CN_STORE_READINESS)
            if (
                current is None
                or current.get("status") != str(condition[0])
                or current.get("reason") != condition[1]
            ):
                plan.patch(
                    r.PODS,
                    pod["metadata"]["namespace"],
                    name_of(pod),
                    {"status": {"conditions": [_store_condition(pod, *condition, now)]}},
                    subresource="status",
                    patch_type="strategic",
                    what=f"mark CN {name_of(pod)} {condition[1]}",
                )
            annotation = cnpods.cn_labels_json(spec)
            if (pod["metadata"].get("annotations") or {}).get(labels.CN_LABEL) != annotation:
                plan.patch(
                    r.PODS,
                    pod["metadata"]["namespace"],
                    name_of(pod),
                    {"metadata": {"annotations": {labels.CN_LABEL: annotation}}},
                    what=f"record the labels of CN {name_of(pod)}",
                )
        return unsettled

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
            store = _store(state, pod)
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


# -------------------------------------------------------------------- helpers
async def _hakeeper(ctx: Context, admin: MOAdmin) -> HAKeeperState | None:
    try:
        return await admin.hakeeper_state()
    except AdminError as e:
        ctx.log.debug("HAKeeper does not answer: %s", e)
        return None


def _store(state: HAKeeperState | None, pod: Mapping[str, Any]) -> CNStore | None:
    return state.cn(cnpods.store_uuid(pod)) if state is not None else None


def _scaling_in(pods: Sequence[Mapping[str, Any]], replicas: int) -> bool:
    active = [p for p in pods if not is_deleting(p) and cnpods.draining_since(p) is None]
    return len(active) > replicas


def _store_condition(pod: Mapping[str, Any], status: bool, reason: str, message: str, now: float) -> Obj:
    """The readiness-gate condition, its transition time moving only when its status does."""
    current = podutil.condition(pod, labels.CN_STORE_READINESS)
    value = str(status)
    since = (
        current.get("lastTransitionTime") if current is not None and current.get("status") == value else None
    )
    return {
        "type": labels.CN_STORE_READINESS,
        "status": value,
        "reason": reason,
        "message": message,
        "lastTransitionTime": since or podutil.format_time(now),
    }


def _with_drain_default(spec: Mapping[str, Any]) -> Mapping[str, Any]:
    """The spec config is rendered from: draining on unless turned off (a CN then
    starts Draining and works once the operator says so)."""
    scaling = dict(spec.get("scalingConfig") or {})
    if scaling.get("storeDrainEnabled") is None:
        scaling["storeDrainEnabled"] = True
    return {**spec, "scalingConfig": scaling}
