"""The LogSet controller: the log service, its HAKeeper bootstrap and failover.

What it owns, named as upstream names them: the StatefulSet ``<ls>-log``
(a ``mo-data`` volume per pod), the headless Service (store addresses), the
discovery Service (the HAKeeper address everyone else uses), the metric
Service (when Prometheus discovers it by Service), the immutable hashed ConfigMap, and the bootstrap and gossip
ConfigMaps, which change without restarting anything.

The HAKeeper bootstrap decision (which stores start it, with which replica
IDs) is made once and recorded on the LogSet before any pod exists, because
a HAKeeper cannot be re-bootstrapped with another membership. Once the
HAKeeper answers, the LogSet publishes its discovery address in status;
that is what TN, CN and proxy sets wait for.

Failover: a log store that HAKeeper reports down and whose pod has not been
ready for ``storeFailureTimeout`` is lost; the controller replaces exactly
the lost pods (``failedPodStrategy: Delete``, the StatefulSet recreates
them) or marks them for a human (``Orphan``), and only while the losses are
a minority of the shard replicas: acting on a lost majority could split the
Raft group, so then it says so in a condition and an Event and waits.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from mo_operator.api.fields import parse_duration
from mo_operator.kube.actor import Context, TerminalError
from mo_operator.matrixone import identity, labels, layout, names, ports
from mo_operator.matrixone.admin import AdminError, HAKeeperState
from mo_operator.matrixone.bootstrap import (
    BootstrapError,
    BootstrapReplica,
    decode_annotation,
    default_log_shard_replicas,
    encode_annotation,
    plan_bootstrap,
)
from mo_operator.matrixone.component import Component
from mo_operator.matrixone.config import log as log_config

from .common import bucketclaims
from .common import pods as podutil
from .common import resources as r
from .common.admission import admitted
from .common.configmaps import collect_unused, hashed_config_map, invalid_config_is_terminal
from .common.desired import stamped
from .common.env import Env
from .common.expansion import sync_stateful
from .common.meta import child_metadata, name_of, set_labels
from .common.podtemplate import PodTemplateInput, canonical_resources, pod_template, restart_stamp
from .common.prometheus import sync_metric_service
from .common.services import discovery_service, headless_service
from .common.statefulsets import Rollout, force_rollback, rollout, statefulset, volume_claim_template
from .common.status import set_rollout_conditions, store_status
from .common.writes import Writes

Obj = dict[str, Any]

COMPONENT = Component.LOG
DEFAULT_STORE_FAILURE_TIMEOUT = 600.0
HEADLESS_PORTS = (("raft", ports.LOG_RAFT), ("logservice", ports.LOG_SERVICE), ("gossip", ports.LOG_GOSSIP))

FAILOVER = "Failover"
"""Condition: whether lost log stores are being (or can be) replaced."""


class LogSetActor:
    def __init__(self, env: Env) -> None:
        self.env = env

    # ---------------------------------------------------------------- observe
    async def observe(self, ctx: Context) -> Writes | None:
        obj = ctx.obj
        logset = admitted("LogSet", obj)
        spec = logset["spec"]
        plan = Writes(self.env.client)
        members = self._bootstrap_members(obj, spec, plan)
        if members is None:
            return plan  # record the decision first; the update brings us back
        namespace, name = obj["metadata"].get("namespace") or "", obj["metadata"]["name"]
        selector = labels.sub_resource_labels(COMPONENT, name, namespace)
        desired = self._desired(obj, spec, members, selector)
        if not self._holds_path(ctx, obj, spec, desired, plan):
            return plan or None  # nothing runs before the LogSet holds its S3 path
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
        state = await self._hakeeper(ctx, roll)
        self._status(ctx, spec, roll, pods, state, pending=bool(plan))
        if state is not None and not plan:
            self._failover(ctx, spec, pods, state, plan)
        return plan or None

    async def finalize(self, ctx: Context) -> bool:
        """Release the claim of the S3 path (``s3RetentionPolicy: Retain``: the data
        stays and the claim is Released) or delete it (``Delete``: its controller
        deletes the data once the cluster's pods are gone). Owned objects go by owner
        reference; the volumes follow the StatefulSet's retention policy
        (``pvcRetentionPolicy``)."""
        spec = ctx.obj.get("spec") or {}
        s3 = bucketclaims.s3_of(spec)
        if s3 is None:
            return True
        policy = bucketclaims.retention_policy(spec)
        claims = bucketclaims.claims_to_release(self.env.caches, ctx.obj, s3, policy)
        written = bool(claims) and (_wrote(ctx.obj) or await self._hakeeper_bootstrapped(ctx))
        for claim in claims:
            await bucketclaims.release(self.env.client, claim, policy, written=written)
            verb = "released (data kept)" if policy == "Retain" else "deleted (its data is deleted next)"
            ctx.event("Normal", "BucketReleased", f"BucketClaim {name_of(claim)} {verb}")
        return True

    async def _hakeeper_bootstrapped(self, ctx: Context) -> bool:
        """Whether HAKeeper answers as bootstrapped: the log service wrote to its path even
        if the LogSet never recorded it (the operator died between the two)."""
        try:
            state = await self.env.admin.admin(
                names.discovery_address(ctx.name, ctx.namespace)
            ).hakeeper_state()
        except AdminError:
            return False
        return state.bootstrapped

    # ------------------------------------------------------------ bucket claim
    def _holds_path(
        self,
        ctx: Context,
        obj: Mapping[str, Any],
        spec: Mapping[str, Any],
        desired: list[tuple[Any, Obj]],
        plan: Writes,
    ) -> bool:
        """Claim the S3 path (BucketClaim) and keep the claim in step; True once the
        LogSet holds it. A path another LogSet holds, or whose claim is being deleted,
        is refused with a condition and an Event until that changes."""
        s3 = bucketclaims.s3_of(spec)
        if s3 is None:
            return True
        template = next(d for res, d in desired if res is r.STATEFULSETS)["spec"]["template"]
        decision = bucketclaims.claim_decision(
            obj,
            s3,
            bucketclaims.claims_of_path(self.env.caches, s3),
            bucketclaims.scheduling_template(template),
            written=_wrote(obj),
        )
        if decision.refused is not None:
            raise TerminalError(*decision.refused)
        if decision.create is not None:
            plan.create(decision.create, r.BUCKETCLAIMS)
        if decision.patch is not None and decision.claim is not None:
            plan.patch(
                r.BUCKETCLAIMS,
                str(decision.claim["metadata"].get("namespace") or ""),
                name_of(decision.claim),
                decision.patch,
                what=f"{'update' if decision.holds else 'bind'} BucketClaim {name_of(decision.claim)}",
            )
        return decision.holds

    # -------------------------------------------------------------- bootstrap
    def _bootstrap_members(
        self, obj: Mapping[str, Any], spec: Mapping[str, Any], plan: Writes
    ) -> tuple[BootstrapReplica, ...] | None:
        """The recorded bootstrap decision; None (and the write that records it) on first sight."""
        recorded = (obj["metadata"].get("annotations") or {}).get(labels.LOGSET_BOOTSTRAP)
        if recorded is not None:
            try:
                return decode_annotation(recorded)
            except BootstrapError as e:
                raise TerminalError("InvalidBootstrapAnnotation", str(e)) from e
        initial = spec.get("initialConfig") or {}
        count = int(initial.get("logShardReplicas") or default_log_shard_replicas(int(spec["replicas"])))
        try:
            members = plan_bootstrap(count)
        except BootstrapError as e:
            raise TerminalError("InvalidSpec", f"spec.initialConfig.logShardReplicas: {e}") from e
        plan.patch(
            r.LOGSETS,
            obj["metadata"].get("namespace") or "",
            obj["metadata"]["name"],
            {
                "metadata": {
                    "annotations": {labels.LOGSET_BOOTSTRAP: encode_annotation(members)},
                    "resourceVersion": obj["metadata"]["resourceVersion"],
                }
            },
            what="record the HAKeeper bootstrap decision",
        )
        return None

    # ---------------------------------------------------------------- desired
    def _desired(
        self,
        obj: Mapping[str, Any],
        spec: Mapping[str, Any],
        members: Sequence[BootstrapReplica],
        selector: Mapping[str, str],
    ) -> list[tuple[Any, Obj]]:
        namespace, name = obj["metadata"].get("namespace") or "", obj["metadata"]["name"]
        obj_labels = set_labels(COMPONENT, obj)
        with invalid_config_is_terminal():
            data = log_config.config_map_data(name=name, namespace=namespace, spec=spec)
        config = hashed_config_map(obj, names.config_map_base_name(COMPONENT, name), obj_labels, data)
        bootstrap = _config_map(
            obj,
            names.log_bootstrap_config_map_name(name),
            obj_labels,
            log_config.bootstrap_config_map_data(spec=spec, replicas=members),
        )
        replicas = int(spec["replicas"])
        gossip = _config_map(
            obj,
            names.log_gossip_config_map_name(name),
            obj_labels,
            log_config.gossip_config_map_data(name=name, namespace=namespace, ordinals=range(replicas)),
        )
        headless = names.headless_service_name(COMPONENT, name)
        template = pod_template(
            PodTemplateInput(
                component=COMPONENT,
                set_name=name,
                namespace=namespace,
                spec=spec,
                image=str(spec.get("image") or ""),
                config_map=config["metadata"]["name"],
                selector_labels=selector,
                shared_storage=spec.get("sharedStorage"),
                extra_labels=obj_labels,
                extra_volumes=[
                    {"name": layout.BOOTSTRAP_VOLUME, "configMap": {"name": bootstrap["metadata"]["name"]}},
                    {"name": layout.GOSSIP_VOLUME, "configMap": {"name": gossip["metadata"]["name"]}},
                ],
                extra_mounts=[
                    {"name": layout.BOOTSTRAP_VOLUME, "mountPath": layout.BOOTSTRAP_PATH},
                    {"name": layout.GOSSIP_VOLUME, "mountPath": layout.GOSSIP_PATH},
                    {"name": layout.DATA_VOLUME, "mountPath": layout.DATA_PATH},
                ],
                headless_service=headless,
                image_pull_policy=(spec.get("overlay") or {}).get("imagePullPolicy"),
                restart_at=restart_stamp(obj),
            )
        )
        volume = spec["volume"]
        claims = [
            volume_claim_template(
                layout.DATA_VOLUME,
                canonical_resources({"requests": {"storage": volume["size"]}})["requests"]["storage"],
                volume.get("storageClassName"),
                obj_labels,
            ),
            *((spec.get("overlay") or {}).get("volumeClaims") or ()),
        ]
        workload = statefulset(
            obj,
            names.workload_name(COMPONENT, name),
            obj_labels,
            selector,
            replicas=replicas,
            service_name=headless,
            template=template,
            volume_claim_templates=claims,
            pvc_retention=spec.get("pvcRetentionPolicy") or "Retain",
        )
        return [
            (r.CONFIGMAPS, stamped(config)),
            (r.CONFIGMAPS, stamped(bootstrap)),
            (r.CONFIGMAPS, stamped(gossip)),
            (r.SERVICES, stamped(headless_service(obj, headless, obj_labels, selector, HEADLESS_PORTS))),
            (
                r.SERVICES,
                stamped(discovery_service(obj, names.discovery_service_name(name), obj_labels, selector)),
            ),
            (r.STATEFULSETS, stamped(workload)),
        ]

    # --------------------------------------------------------------- HAKeeper
    async def _hakeeper(self, ctx: Context, roll: Rollout) -> HAKeeperState | None:
        """HAKeeper's view, when there is any chance it answers (some store is ready)."""
        if roll.ready == 0:
            return None
        namespace, name = ctx.namespace, ctx.name
        try:
            return await self.env.admin.admin(names.discovery_address(name, namespace)).hakeeper_state()
        except AdminError as e:
            ctx.log.debug("HAKeeper does not answer: %s", e)
            return None

    # ----------------------------------------------------------------- status
    def _status(
        self,
        ctx: Context,
        spec: Mapping[str, Any],
        roll: Rollout,
        pods: Sequence[Mapping[str, Any]],
        state: HAKeeperState | None,
        *,
        pending: bool,
    ) -> None:
        status = ctx.status
        namespace, name = ctx.namespace, ctx.name
        bootstrapped = state is not None and state.bootstrapped
        if bootstrapped:
            status["discovery"] = {
                "address": names.discovery_host(name, namespace),
                "port": ports.LOG_SERVICE,
            }
        store_status(status, pods, self.env.clock())
        replicas = int(spec["replicas"])
        if not status.get("discovery"):
            ctx.set_condition(
                "Ready",
                False,
                "Bootstrapping",
                f"waiting for HAKeeper to bootstrap ({roll.ready}/{replicas} log stores ready)",
            )
            ctx.requeue(self.env.settings.busy_poll_seconds)
        elif roll.stalled:
            ctx.set_condition("Ready", False, "RolloutStalled", roll.stalled)
        elif state is None and replicas > 0:
            ctx.set_condition(
                "Ready",
                False,
                "HAKeeperUnavailable",
                f"HAKeeper does not answer ({roll.ready}/{replicas} log stores ready)",
            )
            ctx.requeue(self.env.settings.busy_poll_seconds)
        elif roll.ready < replicas:
            ctx.set_condition("Ready", False, "StoresNotReady", f"{roll.ready}/{replicas} log stores ready")
        else:
            ctx.set_condition(
                "Ready", True, "AllStoresReady", f"{replicas} log stores ready, HAKeeper running"
            )
        set_rollout_conditions(ctx, roll, pending=pending)
        ctx.requeue(self.env.settings.poll_seconds)
        if roll.recheck_after is not None:
            ctx.requeue(roll.recheck_after)

    # --------------------------------------------------------------- failover
    def _failover(
        self,
        ctx: Context,
        spec: Mapping[str, Any],
        pods: Sequence[Mapping[str, Any]],
        state: HAKeeperState,
        plan: Writes,
    ) -> None:
        timeout = (
            parse_duration(str(spec.get("storeFailureTimeout") or ""))
            if spec.get("storeFailureTimeout")
            else DEFAULT_STORE_FAILURE_TIMEOUT
        )
        now = self.env.clock()
        down = {s.uuid for s in state.log_stores if not s.up}
        lost: list[Mapping[str, Any]] = []
        waiting: list[str] = []
        soonest: float | None = None
        for pod in pods:
            ordinal = names.pod_ordinal(name_of(pod))
            since = podutil.not_ready_since(pod)
            if ordinal is None or since is None or _orphaned(pod):
                continue
            if identity.log_store_uuid(ordinal) not in down:
                continue
            if now - since >= timeout:
                lost.append(pod)
            else:
                waiting.append(name_of(pod))
                left = timeout - (now - since)
                soonest = left if soonest is None else min(soonest, left)
        if soonest is not None:
            ctx.requeue(soonest)
        shard_replicas = int(
            (spec.get("initialConfig") or {}).get("logShardReplicas")
            or default_log_shard_replicas(int(spec["replicas"]))
        )
        limit = shard_replicas // 2
        if not lost:
            if waiting:
                ctx.set_condition(
                    FAILOVER,
                    False,
                    "StoresDown",
                    f"log stores {', '.join(sorted(waiting))} down; replaced once down for {int(timeout)}s",
                )
            else:
                ctx.set_condition(FAILOVER, True, "NoLostStores", "every log store is up")
            return
        lost_names = ", ".join(sorted(name_of(p) for p in lost))
        if len(lost) > limit:
            message = (
                f"{len(lost)} log stores lost ({lost_names}), more than the {limit} a {shard_replicas}-replica "
                "Raft group can lose safely: not replacing them automatically"
            )
            ctx.set_condition(FAILOVER, False, "MajorityLost", message)
            ctx.event("Warning", "MajorityLost", message)
            return
        strategy = spec.get("failedPodStrategy") or "Delete"
        for pod in lost:
            if strategy == "Orphan":
                plan.patch(
                    r.PODS,
                    ctx.namespace,
                    name_of(pod),
                    {
                        "metadata": {
                            "labels": {
                                labels.ACTION_REQUIRED: labels.ACTION_REQUIRED_VALUE,
                                labels.LOGSET_OWNER: ctx.name,
                            }
                        }
                    },
                    what=f"mark lost log store {name_of(pod)} for a human",
                )
            else:
                plan.delete(
                    r.PODS, ctx.namespace, name_of(pod), uid=pod["metadata"]["uid"], grace_period_seconds=0
                )
        verb = "marked for a human" if strategy == "Orphan" else "replacing"
        ctx.set_condition(FAILOVER, False, "RepairingStores", f"lost log stores {lost_names}: {verb}")
        ctx.event("Warning", "StoreLost", f"log stores {lost_names} down for {int(timeout)}s: {verb}")


def _wrote(logset: Mapping[str, Any]) -> bool:
    """MatrixOne data is on the LogSet's path: its HAKeeper bootstrapped (it published its
    discovery address), or the path was restored from a backup before it started."""
    restored = ((logset.get("spec") or {}).get("initialConfig") or {}).get("restoreFrom")
    return bool((logset.get("status") or {}).get("discovery") or restored)


def _orphaned(pod: Mapping[str, Any]) -> bool:
    return (pod["metadata"].get("labels") or {}).get(labels.ACTION_REQUIRED) == labels.ACTION_REQUIRED_VALUE


def _config_map(
    owner: Mapping[str, Any], name: str, obj_labels: Mapping[str, str], data: Mapping[str, str]
) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": child_metadata(owner, name, obj_labels),
        "data": dict(data),
    }
