"""The DNSet controller (also TNSet, the newer name of the same thing): the
transaction nodes.

What it owns, named as upstream names them: the StatefulSet ``<tn>-dn``
(with a ``mo-data`` cache volume per pod when ``cacheVolume`` is set), the
headless Service (store addresses), the metric Service (when Prometheus
discovers it, see common/prometheus.py) and the immutable
hashed ConfigMap.

A TN needs its log service: until the LogSet has bootstrapped its HAKeeper
the set waits, saying so in its Ready condition; the LogSet's own progress
wakes it. A TN pod is Ready once its store registered in HAKeeper, so the
StatefulSet's one-pod-at-a-time roll never takes the next TN down before
the new one serves.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mo_operator.kube.actor import Context
from mo_operator.matrixone import labels, layout, names, ports
from mo_operator.matrixone.component import Component
from mo_operator.matrixone.config import config_map_data

from .common import resources as r
from .common.admission import admitted
from .common.configmaps import collect_unused, hashed_config_map, invalid_config_is_terminal
from .common.deps import LogService, Waiting, resolve
from .common.desired import stamped
from .common.env import Env
from .common.expansion import sync_stateful
from .common.meta import name_of, set_labels
from .common.podtemplate import PodTemplateInput, canonical_resources, pod_template, restart_stamp
from .common.prometheus import sync_metric_service
from .common.services import headless_service
from .common.statefulsets import force_rollback, rollout, statefulset, volume_claim_template
from .common.status import Readiness, report_rollout, store_status
from .common.writes import Writes

Obj = dict[str, Any]

COMPONENT = Component.TN
READINESS = Readiness(
    members="TN stores registered in HAKeeper", not_ready="StoresNotReady", all_ready="AllStoresReady"
)
HEADLESS_PORTS = (
    ("service", ports.TN_SERVICE),
    ("lock-service", ports.TN_LOCK_SERVICE),
    ("logtail", ports.TN_LOGTAIL),
)


class DNSetActor:
    """Reconciles a DNSet or a TNSet (``kind`` says which)."""

    def __init__(self, env: Env, kind: str = "DNSet") -> None:
        self.env = env
        self.kind = kind

    async def observe(self, ctx: Context) -> Writes | None:
        obj = ctx.obj
        spec = admitted(self.kind, obj)["spec"]
        service = resolve(self.env.caches, obj, spec)
        if isinstance(service, Waiting):
            ctx.set_condition("Ready", False, service.reason, service.message)
            return None
        namespace, name = ctx.namespace, ctx.name
        selector = labels.sub_resource_labels(COMPONENT, name, namespace)
        desired = self._desired(obj, spec, service, selector)
        plan = Writes(self.env.client)
        sync_stateful(ctx, self.env, desired, plan)
        sync_metric_service(self.env.caches, obj, COMPONENT, spec, plan)
        pods = self.env.caches.list(r.PODS, namespace, selector)
        sts = self.env.caches.get(r.STATEFULSETS, namespace, names.workload_name(COMPONENT, name))
        roll = rollout(sts, pods, now=self.env.clock(), stall_seconds=self.env.settings.rollout_stall_seconds)
        force_rollback(ctx, roll, plan)
        if roll.complete and not plan:
            base = names.config_map_base_name(COMPONENT, name)
            collect_unused(
                self.env.caches, obj, COMPONENT, base, pods, [name_of(d) for _, d in desired], plan
            )
        store_status(ctx.status, pods, self.env.clock())
        report_rollout(ctx, roll, int(spec["replicas"]), READINESS, pending=bool(plan))
        return plan or None

    async def finalize(self, ctx: Context) -> bool:
        """Owned objects go by owner reference; nothing else to release."""
        return True

    def _desired(
        self,
        obj: Mapping[str, Any],
        spec: Mapping[str, Any],
        service: LogService,
        selector: Mapping[str, str],
    ) -> list[tuple[Any, Obj]]:
        namespace, name = obj["metadata"].get("namespace") or "", obj["metadata"]["name"]
        obj_labels = set_labels(COMPONENT, obj)
        with invalid_config_is_terminal():
            data = config_map_data(
                COMPONENT,
                name=name,
                namespace=namespace,
                spec=spec,
                shared_storage=service.shared_storage,
                hakeeper=service.endpoint,
            )
        config = hashed_config_map(obj, names.config_map_base_name(COMPONENT, name), obj_labels, data)
        headless = names.headless_service_name(COMPONENT, name)
        cache = spec.get("cacheVolume")
        mounts = [{"name": layout.DATA_VOLUME, "mountPath": layout.DATA_PATH}] if cache else []
        template = pod_template(
            PodTemplateInput(
                component=COMPONENT,
                set_name=name,
                namespace=namespace,
                spec=spec,
                image=str(spec.get("image") or ""),
                config_map=config["metadata"]["name"],
                selector_labels=selector,
                shared_storage=service.shared_storage,
                extra_labels=obj_labels,
                extra_mounts=mounts,
                headless_service=headless,
                image_pull_policy=(spec.get("overlay") or {}).get("imagePullPolicy"),
                restart_at=restart_stamp(obj),
            )
        )
        claims: list[Obj] = []
        if cache:
            size = canonical_resources({"requests": {"storage": cache["size"]}})["requests"]["storage"]
            claims.append(
                volume_claim_template(layout.DATA_VOLUME, size, cache.get("storageClassName"), obj_labels)
            )
        claims += list((spec.get("overlay") or {}).get("volumeClaims") or ())
        workload = statefulset(
            obj,
            names.workload_name(COMPONENT, name),
            obj_labels,
            selector,
            replicas=int(spec["replicas"]),
            service_name=headless,
            template=template,
            volume_claim_templates=claims,
            pvc_retention="Delete",
        )
        return [
            (r.CONFIGMAPS, stamped(config)),
            (r.SERVICES, stamped(headless_service(obj, headless, obj_labels, selector, HEADLESS_PORTS))),
            (r.STATEFULSETS, stamped(workload)),
        ]
