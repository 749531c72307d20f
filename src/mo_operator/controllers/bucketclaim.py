"""The BucketClaim controller: the object-storage path of one cluster, kept or
deleted as its policy says when the cluster goes, as a PersistentVolume is.

A LogSet claims its S3 path (``steps/bucketclaims.py``); this controller reports
the claim and carries out its end:

- **status**: ``state`` (InUse, Released, Deleting) and ``bindTo``, upstream's
  fields, derived from the binding the LogSet writes (``matrixone/buckets.py``);
  this controller is the only writer of the claim's status.
- **a claim whose LogSet is gone** without releasing it (its finalizer removed by
  hand) is released, its data kept, with a Warning Event: data is only ever
  deleted on an explicit decision, never inferred from an absence.
- **deletion** (the LogSet deletes its claim when its ``s3RetentionPolicy`` is
  Delete; a user may delete a released one): a claim still bound to a live LogSet
  waits (condition ``InUse``), as upstream's does; a claim whose reclaim policy
  (``spec.s3.s3RetentionPolicy``) is Retain, or on whose path MatrixOne never ran,
  goes at once with its data untouched. Otherwise it waits until no MatrixOne pod
  that writes there (the cluster's log, TN and CN pods) is left, so nothing writes
  behind the cleanup, then runs the Job ``job-<claim>``: ``aws s3 rm`` of the path
  (``matrixone/buckets.py`` for the script) with the credentials of the S3
  ``secretRef``, scheduled like the LogSet's pods, owned by the claim.
- **never hangs silently**: the Job retries a failed pod ``backoffLimit`` times and
  gives up after ``activeDeadlineSeconds``. The first failed pod already sets
  condition ``Ready=False`` reason ``CleanupFailed`` with its exit code and a
  Warning Event (the Job controller's backoff makes the Job itself fail only
  minutes later); the failed Job says so again, each time saying
  how to go on (delete the Job to retry, or set the claim's policy to Retain to
  keep the data and let the claim go). Every other wait says what it waits for.

Scripts written for the Go operator read its condition: ``recyclable`` is
``False`` with reason ``InUse`` while a LogSet holds the path, and with reason
``JobFailure`` when the cleanup Job failed (upstream's type and reasons; upstream
sets it only on a deletion attempt, we keep it current); otherwise it is ``True``
(reason ``Released``: deleting the claim proceeds).

The controller's finalizer is upstream's, ``matrixorigin.io/BucketClaim``; a claim
made by a LogSet also carries upstream's ``matrixorigin.io/bucket-data-finalizer``.
Claims made by the Go operator carry its per-set finalizers too, and claims made
by earlier versions of this operator ``matrixorigin.io/bucketclaim``: all of them
are removed with ours, since no other controller is left to remove them.

A reconcile reads the claim (as admitted) and what it looks at into a view, and a
pure decision says what to do: ``decide`` (``ClaimView``) while the claim lives,
``decide_deletion`` (``DeletionView``) for its finalizer, which writes the claim's
status itself (the framework writes none for a deleted object).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mo_operator.api.base import dump
from mo_operator.api.bucketclaim import BucketClaim, BucketClaimSpec, BucketClaimStatus
from mo_operator.api.common import S3Provider
from mo_operator.api.k8s import Condition
from mo_operator.kube.controller.actor import Context
from mo_operator.kube.controller.controller import deletion_started
from mo_operator.kube.controller.outcome import Wait
from mo_operator.kube.meta.objects import (
    labels_of,
    mapping_at,
    meta_of,
    namespace_of,
    spec_of,
    status_of,
    view,
)
from mo_operator.matrixone import buckets, labels, layout
from mo_operator.matrixone.component import Component

from .framework import resources as r
from .framework import typed
from .framework.admission import admit
from .framework.decision import Decision, Emit, SetCondition
from .framework.env import Env
from .framework.meta import child_metadata, is_controlled_by, is_deleting, name_of
from .framework.writes import Create, Intent, Patch, Writes
from .specs import pods as podutil
from .steps.bucketclaims import SCHEDULING_FIELDS, claims_of_logset
from .wiring import Wiring

Obj = dict[str, Any]

KIND = "BucketClaim"
READY = "Ready"
RECYCLABLE = "recyclable"
"""Upstream's condition type (lower case, as upstream spells it)."""
CLEANUP_BACKOFF_LIMIT = 3
"""Failed cleanup pods retried before the Job fails (each a fresh pod, its logs kept)."""
CLEANUP_DEADLINE_SECONDS = 900
"""A cleanup Job running longer than this fails (a pod that never starts, a hung call)."""
GAVE_UP = "failed to delete"
"""How the message of a failed cleanup Job (no longer retrying) reads."""
_RECYCLABLE_REASONS = {"InUse": "InUse", "CleanupFailed": "JobFailure"}
"""Our ``Ready=False`` reasons on deletion that upstream reports as ``recyclable=False``, with its reason."""
WRITER_KINDS = frozenset({Component.LOG.kind, Component.TN.kind, "TNSet", Component.CN.kind})
"""Pods of these components write to the shared storage."""


def job_labels(claim: Mapping[str, Any]) -> dict[str, str]:
    """Labels of the claim's Job and its pod: ours, naming the claim (and its cluster)."""
    meta = meta_of(claim)
    out = {
        labels.NAMESPACE: meta.namespace,
        labels.INSTANCE: meta.name,
        labels.COMPONENT: KIND,
    }
    cluster = meta.labels.get(labels.CLUSTER)
    if cluster:
        out[labels.CLUSTER] = cluster
    return out


def _storage_env(s3: S3Provider) -> list[Obj]:
    env: list[Obj] = []
    secret = s3.secret_ref.name if s3.secret_ref is not None else None
    if secret:
        for key in (layout.ENV_AWS_ACCESS_KEY_ID, layout.ENV_AWS_SECRET_ACCESS_KEY):
            env.append({"name": key, "valueFrom": {"secretKeyRef": {"name": secret, "key": key}}})
    env.append({"name": layout.ENV_AWS_REGION, "value": s3.region or layout.DEFAULT_AWS_REGION})
    cert = s3.certificate_ref
    if cert is not None and cert.files:
        env.append({"name": "AWS_CA_BUNDLE", "value": f"{layout.S3_CERT_PATH}/{cert.files[0]}"})
    return env


def cleanup_job(claim: Mapping[str, Any], spec: BucketClaimSpec, image: str = buckets.CLEANUP_IMAGE) -> Obj:
    """The Job that deletes the claim's data (``spec``, as admitted): the aws-cli image
    running ``buckets.cleanup_script``, scheduled as the claim's ``spec.logSetSpec`` says."""
    s3 = spec.s3
    name = buckets.cleanup_job_name(name_of(claim))
    obj_labels = job_labels(claim)
    template_spec = mapping_at(spec.log_set_spec, "spec")  # a Kubernetes PodTemplateSpec
    container: Obj = {
        "name": layout.MAIN_CONTAINER,
        "image": image,
        "command": ["/bin/sh", "-c"],
        "args": [buckets.cleanup_script(dump(s3))],
        "env": _storage_env(s3),
    }
    pod_spec: Obj = {"restartPolicy": "Never", "containers": [container]}
    for key in SCHEDULING_FIELDS:
        if template_spec.get(key) not in (None, [], {}):
            pod_spec[key] = copy.deepcopy(template_spec[key])
    cert = s3.certificate_ref
    if cert is not None:
        pod_spec["volumes"] = [{"name": layout.S3_CERT_VOLUME, "secret": {"secretName": cert.name}}]
        container["volumeMounts"] = [
            {"name": layout.S3_CERT_VOLUME, "mountPath": layout.S3_CERT_PATH, "readOnly": True}
        ]
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": child_metadata(claim, name, obj_labels),
        "spec": {
            "backoffLimit": CLEANUP_BACKOFF_LIMIT,
            "activeDeadlineSeconds": CLEANUP_DEADLINE_SECONDS,
            "template": {"metadata": {"labels": dict(obj_labels)}, "spec": pod_spec},
        },
    }


def job_outcome(job: Mapping[str, Any]) -> tuple[str, str] | None:
    """``("Complete"|"Failed", why)`` once the Job has finished, else None."""
    for c in view(job).conditions:
        if c.get("type") in ("Complete", "Failed") and c.get("status") == "True":
            why = ": ".join(str(x) for x in (c.get("reason"), c.get("message")) if x)
            return str(c["type"]), why
    return None


def path_url(spec: BucketClaimSpec) -> str:
    """The claim's ``spec.s3.path`` as the URL its conditions show."""
    return buckets.s3_url(spec.s3.path or "")


def written_path_url(claim: Mapping[str, Any]) -> str:
    """The URL of the path an invalid claim (no admitted spec to read) names as written."""
    return buckets.s3_url(str(mapping_at(claim, "spec", "s3").get("path") or ""))


def legacy_finalizers(claim: Mapping[str, Any]) -> list[str]:
    """The Go operator's finalizers on a claim."""
    return [
        f
        for f in meta_of(claim).finalizers
        if f in buckets.LEGACY_FINALIZERS or f.startswith(buckets.LEGACY_FINALIZER_PREFIXES)
    ]


def _age(pod: Mapping[str, Any]) -> tuple[str, str]:
    """Creation order of a Job's pods (a retry's pod is newer), name breaking ties."""
    return meta_of(pod).creation_timestamp, name_of(pod)


@dataclass(frozen=True)
class ClaimView:
    """What a live claim's decision reads: the claim as admitted, the LogSet its binding
    names, and whether that LogSet is gone."""

    claim: Mapping[str, Any]
    spec: BucketClaimSpec
    bound: str | None
    """``<namespace>/<name>`` of the LogSet the claim is bound to (``buckets.binding``)."""
    logset_gone: bool
    """The bound LogSet, of the claim's namespace, is not there."""


def decide(view: ClaimView) -> Decision:
    """Report the claim's state and whether it may be recycled; release a claim whose
    LogSet went without releasing it (its data kept), announcing it once released.
    Pure: a function of ``view``."""
    claim, bound = view.claim, view.bound
    intents: tuple[Intent, ...] = ()
    events: tuple[Emit, ...] = ()
    if bound is not None and view.logset_gone:
        # Conditional on the claim as seen: if the LogSet released (or deleted) it
        # meanwhile, the conflict sends us back to a fresher view instead.
        release = {
            "metadata": {
                "resourceVersion": claim["metadata"]["resourceVersion"],
                "annotations": {buckets.BIND_TO: ""},
            }
        }
        intents = (
            Patch(
                r.BUCKETCLAIMS,
                namespace_of(claim),
                name_of(claim),
                release,
                what=f"release the claim of LogSet {bound}, which is gone",
            ),
        )
        message = f"LogSet {bound} was deleted without releasing this claim: released, data kept"
        events = (Emit("Warning", "LogSetGone", message, after_writes=True),)
        bound = None
    status = BucketClaimStatus(state=buckets.IN_USE if bound else buckets.RELEASED, bind_to=bound or "")
    url = path_url(view.spec)
    if bound:
        conditions = (
            SetCondition(READY, True, "Bound", f"{url} is used by LogSet {bound}"),
            SetCondition(
                RECYCLABLE, False, "InUse", f"bucket is in use by LogSet {bound}, cannot be deleted"
            ),
        )
    elif buckets.reclaim_policy(claim) == buckets.DELETE:
        conditions = (
            SetCondition(RECYCLABLE, True, buckets.RELEASED, f"no LogSet uses {url}"),
            SetCondition(
                READY,
                True,
                "Released",
                f"no LogSet uses {url}; a LogSet of this namespace with the same path binds it again; "
                "deleting this claim deletes the data (s3RetentionPolicy Delete)",
            ),
        )
    else:
        conditions = (
            SetCondition(RECYCLABLE, True, buckets.RELEASED, f"no LogSet uses {url}"),
            SetCondition(
                READY,
                True,
                "Released",
                f"no LogSet uses {url}; its data is kept; a LogSet of this namespace with the same path "
                "binds it again; deleting this claim keeps the data (s3RetentionPolicy Retain)",
            ),
        )
    return Decision(intents, status, conditions, events)


@dataclass(frozen=True)
class DeletionView:
    """What a deleted claim's finalizer reads."""

    claim: Mapping[str, Any]
    spec: BucketClaimSpec | None
    """As admitted; None when admission refuses it (``invalid`` says why)."""
    invalid: str
    bound: str | None
    logset_in_use: bool
    """The bound LogSet is there and not being deleted (or out of our sight)."""
    writers: tuple[str, ...]
    """The MatrixOne pods that may still write to the path, by name."""
    job: Mapping[str, Any] | None
    """The cleanup Job of the claim's name, whoever owns it."""
    job_pods: tuple[Mapping[str, Any], ...]
    """The pods of that Job, when the claim owns it."""
    before: Condition | None
    """``Ready`` as the claim last reported it."""
    poll: float
    busy_poll: float
    cleanup_image: str


@dataclass
class _Deletion:
    """The finalizer's decision as it is built."""

    view: DeletionView
    url: str

    def wait(
        self,
        reason: str,
        message: str,
        after: float,
        *,
        warn: bool = False,
        gave_up: bool = False,
        intents: tuple[Intent, ...] = (),
        events: tuple[Emit, ...] = (),
    ) -> Decision:
        """Report what the claim waits for; ``warn`` announces a new problem with a
        Warning Event, and ``gave_up`` once more when the Job stops retrying."""
        conditions = [SetCondition(READY, False, reason, message)]
        recyclable = _RECYCLABLE_REASONS.get(reason)
        if recyclable is None:
            released = "no LogSet uses the bucket: it is being recycled"
            conditions.append(SetCondition(RECYCLABLE, True, buckets.RELEASED, released))
        else:
            conditions.append(SetCondition(RECYCLABLE, False, recyclable, message))
        before = self.view.before
        announced_give_up = before is not None and GAVE_UP in (before.message or "")
        reported = before.reason if before is not None else None
        if warn and (reported != reason or (gave_up and not announced_give_up)):
            events = (*events, Emit("Warning", reason, message))
        return Decision(intents, _deleting(self.view), tuple(conditions), events, later=Wait(after, message))

    def done(self, events: tuple[Emit, ...] = ()) -> Decision:
        """The claim's work is done: drop the Go operator's finalizers, if any, then ours goes."""
        claim = self.view.claim
        legacy = legacy_finalizers(claim)
        if not legacy:
            return Decision(events=events, finalized=True)
        patch = {
            "metadata": {
                "finalizers": [f for f in meta_of(claim).finalizers if f not in legacy],
                "resourceVersion": claim["metadata"]["resourceVersion"],
            }
        }
        return Decision(
            (Patch(r.BUCKETCLAIMS, namespace_of(claim), name_of(claim), patch),),
            events=events,
            later=Wait(self.view.busy_poll, "the claim's finalizer to come off"),
        )


def _deleting(view: DeletionView) -> BucketClaimStatus:
    return BucketClaimStatus(state=buckets.DELETING, bind_to=view.bound or "")


def decide_deletion(view: DeletionView) -> Decision:
    """Wait while a LogSet uses the path; let a claim go whose data stays or was never
    written; else, once no MatrixOne pod writes there, run the cleanup Job and follow it.
    Pure: a function of ``view``; its status (when it has one) is written by the actor."""
    url = path_url(view.spec) if view.spec is not None else written_path_url(view.claim)
    d = _Deletion(view, url)
    if view.bound is not None and view.logset_in_use:
        return d.wait(
            "InUse",
            f"bound to LogSet {view.bound}, which still uses {url}: delete that LogSet (or its cluster) first",
            view.poll,
        )
    if buckets.reclaim_policy(view.claim) == buckets.RETAIN or not buckets.ever_written(view.claim):
        return d.done()
    writers = view.writers
    if writers:
        shown = ", ".join(writers[:5]) + (f" and {len(writers) - 5} more" if len(writers) > 5 else "")
        return d.wait(
            "WaitingForPods",
            f"waiting for {len(writers)} MatrixOne pods to stop before deleting {url}: {shown}",
            view.busy_poll,
        )
    job_name = buckets.cleanup_job_name(name_of(view.claim))
    job = view.job
    if job is not None and not is_controlled_by(job, view.claim):
        return d.wait(
            "CleanupBlocked",
            f"a Job {job_name} that this claim does not own is in the way: delete it",
            view.poll,
        )
    if job is None:
        if view.spec is None:
            return d.wait("CleanupBlocked", f"{view.invalid}: fix the claim to delete {url}", view.poll)
        create = Create(r.JOBS, cleanup_job(view.claim, view.spec, view.cleanup_image))
        started = Emit("Normal", "DeletingData", f"started Job {job_name} to delete {url}", after_writes=True)
        return d.wait(
            "DeletingData",
            f"Job {job_name} deletes {url}",
            view.busy_poll,
            intents=(create,),
            events=(started,),
        )
    return _follow_job(d, job)


def _follow_job(d: _Deletion, job: Mapping[str, Any]) -> Decision:
    """Report the cleanup Job's progress; the claim goes once it completed."""
    view, url = d.view, d.url
    job_name = name_of(job)
    outcome = job_outcome(job)
    how_to_go_on = (
        f"Fix the cause (credentials, endpoint) and delete Job {job_name} to retry, or set "
        "spec.s3.s3RetentionPolicy of this claim to Retain to keep the data and let the claim go"
    )
    if outcome is None:
        failed = _failed_pod(view.job_pods)
        if failed is not None:
            # The Job controller backs failed pods off (10 s, 20 s, 40 s...), so it
            # gives up minutes after the first failure: say so at the first one.
            retries = int(status_of(job).get("failed") or 1)
            limit = int(spec_of(job).get("backoffLimit") or 0)
            message = (
                f"Job {job_name} is failing to delete {url}: pod {failed}; "
                f"{min(retries, limit)} of {limit} retries used, the Job keeps retrying. " + how_to_go_on
            )
            return d.wait("CleanupFailed", message, view.poll, warn=True)
        problem = _pod_problem(view.job_pods)
        return d.wait(
            "DeletingData",
            f"Job {job_name} deletes {url}" + (f"; its pod: {problem}" if problem else ""),
            view.busy_poll,
        )
    kind, why = outcome
    if kind == "Complete":
        return d.done(events=(Emit("Normal", "DataDeleted", f"Job {job_name} deleted {url}"),))
    problem = _pod_problem(view.job_pods)
    message = (
        f"Job {job_name} {GAVE_UP} {url} ({why or 'failed'}"
        + (f"; last pod: {problem}" if problem else "")
        + "). "
        + how_to_go_on
    )
    return d.wait("CleanupFailed", message, view.poll, warn=True, gave_up=True)


def _failed_pod(pods: Sequence[Mapping[str, Any]]) -> str | None:
    """The newest failed pod of a Job still retrying, and why it failed."""
    failed = [p for p in pods if status_of(p).get("phase") == "Failed"]
    if not failed:
        return None
    newest = max(failed, key=_age)
    return f"{name_of(newest)} failed ({podutil.problem(newest)})"


def _pod_problem(pods: Sequence[Mapping[str, Any]]) -> str | None:
    """Why the Job's newest pod is not doing its work, if its status says."""
    if not pods:
        return None
    newest = max(pods, key=_age)
    if status_of(newest).get("phase") in ("Succeeded", "Running"):
        return None
    return f"{name_of(newest)}: {podutil.problem(newest)}"


class BucketClaimActor:
    def __init__(self, env: Env) -> None:
        self.env = env

    async def read(self, ctx: Context) -> ClaimView:
        claim = ctx.obj
        spec = admit(BucketClaim, claim).spec
        bound = buckets.binding(claim)
        return ClaimView(claim, spec, bound, bound is not None and self._logset_gone(claim, bound))

    async def observe(self, ctx: Context) -> Writes | None:
        return decide(await self.read(ctx)).act(ctx, self.env.client)

    def _logset_gone(self, claim: Mapping[str, Any], bound: str) -> bool:
        namespace, _, name = bound.partition("/")
        if namespace != namespace_of(claim) or not name:
            return False  # not ours to judge (a claim is always in its LogSet's namespace)
        return self.env.caches.get(r.LOGSETS, namespace, name) is None

    # --------------------------------------------------------------- finalize
    async def read_deletion(self, ctx: Context) -> DeletionView:
        """The claim (an invalid one too), its LogSet, the pods that may write to its
        path, its cleanup Job and that Job's pods."""
        claim, settings = ctx.obj, self.env.settings
        admitted = typed.read(BucketClaim, claim)
        bound = buckets.binding(claim)
        job = self.env.caches.get(r.JOBS, ctx.namespace, buckets.cleanup_job_name(ctx.name))
        owned = job is not None and is_controlled_by(job, claim)
        return DeletionView(
            claim,
            admitted.spec if admitted is not None else None,
            "" if admitted is not None else typed.why_invalid(BucketClaim, claim),
            bound,
            bound is not None and self._logset_in_use(claim, bound),
            tuple(self._writers(claim)),
            job,
            tuple(self._job_pods(claim, job)) if owned and job is not None else (),
            typed.status_of(BucketClaimStatus, claim).condition(READY),
            settings.poll_seconds,
            settings.busy_poll_seconds,
            settings.cleanup_image,
        )

    async def finalize(self, ctx: Context) -> bool:
        decision = decide_deletion(await self.read_deletion(ctx))
        done = await decision.finalize(ctx, self.env.client)
        if not decision.finalized and isinstance(decision.status, BucketClaimStatus):
            await self._write_status(ctx)
        return done

    def _logset_in_use(self, claim: Mapping[str, Any], bound: str) -> bool:
        namespace, _, name = bound.partition("/")
        logset = self.env.caches.get(r.LOGSETS, namespace, name)
        if logset is None:
            # a LogSet of another namespace is out of our sight: trust the binding
            return namespace != namespace_of(claim)
        return not is_deleting(logset)

    def _writers(self, claim: Mapping[str, Any]) -> list[str]:
        """MatrixOne pods that may still write to the claim's path: those of its cluster,
        or of its LogSet when it belongs to none."""
        meta = meta_of(claim)
        namespace = meta.namespace
        claim_labels = meta.labels
        cluster, logset = claim_labels.get(labels.CLUSTER), claim_labels.get(labels.INSTANCE)
        if cluster:
            selector = labels.cluster_labels(cluster)
        elif logset:
            selector = labels.sub_resource_labels(Component.LOG, logset, namespace)
        else:
            return []
        pods = self.env.caches.list(r.PODS, namespace, selector)
        return sorted(name_of(p) for p in pods if labels_of(p).get(labels.COMPONENT) in WRITER_KINDS)

    def _job_pods(self, claim: Mapping[str, Any], job: Mapping[str, Any]) -> list[Mapping[str, Any]]:
        return [
            p
            for p in self.env.caches.list(r.PODS, namespace_of(claim), job_labels(claim))
            if is_controlled_by(p, job)
        ]

    async def _write_status(self, ctx: Context) -> None:
        ctx.status["observedGeneration"] = ctx.generation
        if ctx.status == status_of(ctx.obj):
            return
        body = {
            "apiVersion": ctx.obj["apiVersion"],
            "kind": KIND,
            "metadata": {"name": ctx.name, "namespace": ctx.namespace},
            "status": ctx.status,
        }
        await self.env.client.apply(body, resource=r.BUCKETCLAIMS, subresource="status", force=True)


WARNING_REASONS = frozenset({"InvalidSpec", "CleanupBlocked", "CleanupFailed"})
"""A spec refused, or a bucket's cleanup that cannot start or failed."""


def setup(wiring: Wiring) -> None:
    """BucketClaims and their cleanup Jobs, woken by the LogSets that bind them; named
    as upstream's controller, so its finalizer is upstream's ``matrixorigin.io/BucketClaim``."""
    claims = wiring.actor_controller(
        "BucketClaim",
        r.BUCKETCLAIMS,
        BucketClaimActor(wiring.env),
        (r.JOBS,),
        reads=(r.PODS,),
        warning_reasons=WARNING_REASONS,
    )
    # a claim reads of its LogSet only whether it is there and not being deleted
    wiring.watch(claims, r.LOGSETS, claims_of_logset(wiring.caches), deletion_started)
