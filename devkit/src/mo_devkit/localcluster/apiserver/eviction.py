"""The eviction subresource of pods (``POST pods/<name>/eviction``, a policy/v1
Eviction): a deletion that a PodDisruptionBudget may refuse, which ``kubectl drain``,
node-pool upgrades and cluster autoscalers use instead of deleting pods.

It follows kube-apiserver 1.28 (``pkg/registry/core/pod/storage/eviction.go``):

- a pod that is Pending, Succeeded or Failed, or already being deleted, is deleted at
  once (it disrupts nothing more);
- otherwise the PodDisruptionBudgets of its namespace whose selector matches it are
  found: none, the pod is deleted; more than one, the request fails (500);
- a pod that is not Ready is deleted without using the budget when its
  ``unhealthyPodEvictionPolicy`` is ``AlwaysAllow``, or when the budget has as many
  healthy pods as it needs (and needs some); the deletion then carries the pod's
  resourceVersion, and a conflict becomes a 429;
- else the budget must have seen its latest generation (429 "still being processed")
  and allow a disruption (429 naming how many healthy pods it needs and has); the
  eviction takes one (``disruptionsAllowed`` decremented, the pod recorded in
  ``disruptedPods`` so the disruption controller stops counting it) before the pod goes.

The deletion first sets the pod's ``DisruptionTarget`` condition (reason
``EvictionByEvictionAPI``), as kube-apiserver does with PodDisruptionConditions on.
"""

from __future__ import annotations

from typing import Any

from mo_operator.kube.meta.times import now_time

from .encoding.jsonutil import clone
from .errors import StatusError, bad_request, forbidden
from .objects import ObjectAPI, WriteOptions
from .resources import ResourceType
from .selectors import match_label_selector_object

Obj = dict[str, Any]

MAX_DISRUPTED_PODS = 2000
"""``MaxDisruptedPodSize``: evictions the disruption controller has not confirmed yet."""
DISRUPTION_ALLOWED = "DisruptionAllowed"


def success() -> Obj:
    """What a successful eviction answers (HTTP 201)."""
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}


def _too_many_requests(message: str, cause: str, retry_after: int) -> StatusError:
    details: Obj = {"causes": [{"reason": "DisruptionBudget", "message": cause}]}
    headers: dict[str, str] = {}
    if retry_after:
        details["retryAfterSeconds"] = retry_after
        headers["Retry-After"] = str(retry_after)
    return StatusError(429, "TooManyRequests", message, details=details, headers=headers)


def _still_processing(pdb: str) -> StatusError:
    return _too_many_requests(
        "Cannot evict pod as it would violate the pod's disruption budget.",
        f"The disruption budget {pdb} is still being processed by the server.",
        10,
    )


def _is_ready(pod: Obj) -> bool:
    return any(
        c.get("type") == "Ready" and c.get("status") == "True"
        for c in (pod.get("status") or {}).get("conditions") or ()
    )


def _can_ignore_budget(pod: Obj) -> bool:
    phase = (pod.get("status") or {}).get("phase")
    return phase in ("Succeeded", "Failed", "Pending") or bool(pod["metadata"].get("deletionTimestamp"))


def _enforces_version(pod: Obj) -> bool:
    phase = (pod.get("status") or {}).get("phase")
    return phase not in ("Succeeded", "Failed") and not pod["metadata"].get("deletionTimestamp")


def allowed_condition(status: Obj, generation: int) -> None:
    """``UpdateDisruptionAllowedCondition`` (component-helpers): ``DisruptionAllowed``
    True with reason SufficientPods while a disruption is allowed, else False with
    InsufficientPods; its transition time moves only when its status does."""
    allowed = int(status.get("disruptionsAllowed") or 0) > 0
    wanted = {
        "type": DISRUPTION_ALLOWED,
        "status": "True" if allowed else "False",
        "observedGeneration": generation,
        "reason": "SufficientPods" if allowed else "InsufficientPods",
        "message": "",
    }
    conditions = list(status.get("conditions") or [])
    for i, c in enumerate(conditions):
        if c.get("type") == DISRUPTION_ALLOWED:
            same = c.get("status") == wanted["status"]
            conditions[i] = {
                **wanted,
                "lastTransitionTime": c.get("lastTransitionTime") if same else now_time(),
            }
            break
    else:
        conditions.append({**wanted, "lastTransitionTime": now_time()})
    status["conditions"] = conditions


class Evictions:
    """``pods/<name>/eviction`` of one API server."""

    def __init__(self, api: ObjectAPI, pods: ResourceType, budgets: ResourceType) -> None:
        self.api = api
        self.pods = pods
        self.budgets = budgets

    async def evict(self, namespace: str, name: str, body: Obj, opts: WriteOptions) -> Obj:
        """Evict the pod; the Status to answer with (its ``code`` the HTTP status), or a
        StatusError."""
        if (body.get("metadata") or {}).get("name", "") != name:
            raise bad_request("name in URL does not match name in Eviction object")
        options: Obj = dict(body.get("deleteOptions") or {})
        dry_run = opts.dry_run or bool(options.get("dryRun"))
        pod = self.api.get(self.pods, namespace, name)
        given_version = (options.get("preconditions") or {}).get("resourceVersion")
        if _can_ignore_budget(pod):
            if _enforces_version(pod) and not given_version:
                options = _with_version(options, pod)
            await self._delete(namespace, name, options, opts, dry_run)
            return success()
        labels = pod["metadata"].get("labels") or {}
        budgets = [
            b
            for b in self.api.store.list(self.budgets.group_resource, namespace)
            if match_label_selector_object((b.get("spec") or {}).get("selector"), labels)
        ]
        if len(budgets) > 1:
            return {
                "kind": "Status",
                "apiVersion": "v1",
                "metadata": {},
                "status": "Failure",
                "message": "This pod has more than one PodDisruptionBudget, which the eviction subresource "
                "does not support.",
                "code": 500,
            }
        pinned = False
        if budgets:
            budget = budgets[0]
            if not _is_ready(pod) and _unhealthy_may_go(budget):
                pinned = True
            else:
                await self._take_one(budget, name, opts, dry_run)
        if pinned:
            options = _with_version(options, pod)
        try:
            await self._delete(namespace, name, options, opts, dry_run)
        except StatusError as e:
            if e.code == 409 and pinned and not given_version:
                raise _still_processing(budgets[0]["metadata"]["name"]) from e
            raise
        return success()

    async def _take_one(self, budget: Obj, pod: str, opts: WriteOptions, dry_run: bool) -> None:
        """``checkAndDecrement``: refuse (429, 403) or record the disruption on the budget."""
        meta, status = budget["metadata"], dict(budget.get("status") or {})
        name = meta["name"]
        if int(status.get("observedGeneration") or 0) < int(meta.get("generation") or 0):
            raise _still_processing(name)
        allowed = int(status.get("disruptionsAllowed") or 0)
        if allowed < 0:
            raise forbidden("poddisruptionbudget.policy", name, "pdb disruptions allowed is negative")
        if len(status.get("disruptedPods") or {}) > MAX_DISRUPTED_PODS:
            raise forbidden(
                "poddisruptionbudget.policy",
                name,
                "DisruptedPods map too big - too many evictions not confirmed by PDB controller",
            )
        if allowed == 0:
            raise _too_many_requests(
                "Cannot evict pod as it would violate the pod's disruption budget.",
                f"The disruption budget {name} needs {int(status.get('desiredHealthy') or 0)} healthy pods "
                f"and has {int(status.get('currentHealthy') or 0)} currently",
                0,
            )
        if dry_run:
            return
        status["disruptionsAllowed"] = allowed - 1
        if allowed - 1 == 0:
            allowed_condition(status, int(status.get("observedGeneration") or 0))
        status["disruptedPods"] = {**(status.get("disruptedPods") or {}), pod: now_time()}
        write = WriteOptions(field_manager=opts.field_manager, user_agent=opts.user_agent)
        await self.api.replace_with(
            self.budgets, budget, {**clone(budget), "status": status}, write, "status"
        )

    async def _delete(
        self, namespace: str, name: str, options: Obj, opts: WriteOptions, dry_run: bool
    ) -> None:
        """``addConditionAndDeletePod``: the DisruptionTarget condition, then the deletion."""
        if not dry_run:
            pod = self.api.get(self.pods, namespace, name)
            pre = options.get("preconditions") or {}
            if pre.get("uid") not in (None, "", pod["metadata"]["uid"]) or pre.get("resourceVersion") not in (
                None,
                "",
                pod["metadata"]["resourceVersion"],
            ):
                # a precondition that fails fails before the condition is set, with the
                # deletion's own Conflict (kube-apiserver's getLatestPod words it the same)
                await self.api.delete(self.pods, namespace, name, options, opts)
            status = dict(pod.get("status") or {})
            conditions = [c for c in status.get("conditions") or [] if c.get("type") != "DisruptionTarget"]
            conditions.append(
                {
                    "type": "DisruptionTarget",
                    "status": "True",
                    "lastProbeTime": None,
                    "lastTransitionTime": now_time(),
                    "reason": "EvictionByEvictionAPI",
                    "message": "Eviction API: evicting",
                }
            )
            updated = await self.api.replace_with(
                self.pods, pod, {**clone(pod), "status": {**status, "conditions": conditions}}, opts, "status"
            )
            if pre.get("resourceVersion"):
                options = _with_version(options, updated)
        await self.api.delete(self.pods, namespace, name, options, _dry(opts, dry_run))


def _unhealthy_may_go(budget: Obj) -> bool:
    """An unready pod goes without using the budget: ``AlwaysAllow``, or (the default,
    ``IfHealthyBudget``) the budget has the healthy pods it needs."""
    if (budget.get("spec") or {}).get("unhealthyPodEvictionPolicy") == "AlwaysAllow":
        return True
    status = budget.get("status") or {}
    desired = int(status.get("desiredHealthy") or 0)
    return int(status.get("currentHealthy") or 0) >= desired and desired > 0


def _with_version(options: Obj, pod: Obj) -> Obj:
    pre = dict(options.get("preconditions") or {})
    pre["resourceVersion"] = pod["metadata"]["resourceVersion"]
    return {**options, "preconditions": pre}


def _dry(opts: WriteOptions, dry_run: bool) -> WriteOptions:
    if opts.dry_run == dry_run:
        return opts
    return WriteOptions(
        field_manager=opts.field_manager,
        dry_run=dry_run,
        field_validation=opts.field_validation,
        user_agent=opts.user_agent,
        force=opts.force,
    )
