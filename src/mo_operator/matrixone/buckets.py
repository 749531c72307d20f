"""BucketClaims: what the LogSet controller, the BucketClaim controller and the
validating webhook agree on about the claim of an object-storage path.

A BucketClaim stands for one S3 path (``<bucket>/<prefix>``) used by exactly one
LogSet (and so one cluster), as a PersistentVolume stands for one volume:

- **unique path**: every claim carries the label ``matrixorigin.io/bucket-unique-id``,
  upstream's sha1 of ``<type>-<endpoint>-<path>``, so the claim of a path is found by
  label in any namespace (the same formula as upstream, so claims made by the Go
  operator are found too);
- **binding**: the annotation ``bucket.matrixorigin.io/bind-to`` names the LogSet
  (``<namespace>/<name>``) that holds the path, or is empty once released. Only LogSets
  write it, with the claim's resourceVersion as a precondition, so two LogSets can never
  both take a released claim; the BucketClaim controller alone writes the claim's status
  (``bindTo`` and ``state``, upstream's fields) from it. A claim made by the Go operator
  has no such annotation: its ``status.bindTo`` (when ``InUse``) counts instead;
- **reclaim policy**: ``spec.s3.s3RetentionPolicy``, kept equal to the LogSet's while
  bound (as a PersistentVolume carries its reclaim policy): ``Retain`` keeps the data
  when the claim is deleted, ``Delete`` runs the cleanup Job first;
- **data**: the annotation ``bucket.matrixorigin.io/any-instance-running`` (upstream's)
  is set once the LogSet's HAKeeper has bootstrapped, i.e. once MatrixOne may have
  written anything: without it there is nothing to delete and no Job runs.
"""

from __future__ import annotations

import hashlib
import shlex
from collections.abc import Mapping
from typing import Any, Final

from mo_operator.kube.meta.objects import annotations_of, meta_of, spec_of, status_of
from mo_operator.kube.meta.objects import is_deleting as is_deleting
from mo_operator.matrixone import labels

BIND_TO: Final = "bucket.matrixorigin.io/bind-to"
"""Annotation on a claim: the ``<namespace>/<name>`` of the LogSet bound to it, empty once released."""
ANY_INSTANCE_RUNNING: Final = "bucket.matrixorigin.io/any-instance-running"
"""Annotation on a claim (upstream's name): ``"true"`` once MatrixOne may have written data there."""
UNIQUE_ID: Final = labels.BUCKET_UNIQUE_ID

IN_USE: Final = "InUse"
RELEASED: Final = "Released"
DELETING: Final = "Deleting"

RETAIN: Final = "Retain"
DELETE: Final = "Delete"

CLEANUP_IMAGE: Final = "amazon/aws-cli"
"""Image of the Job that deletes a claim's data (upstream's ``bucketCleanJob.image`` default)."""

LEGACY_FINALIZERS: Final = ("matrixorigin.io/bucketclaim", labels.BUCKET_DATA_FINALIZER)
"""Finalizers removed with the BucketClaim controller's own (upstream's
``matrixorigin.io/BucketClaim``) once a claim's work is done: the one earlier versions
of this operator put on claims, and the data guard LogSets put on theirs."""
LEGACY_FINALIZER_PREFIXES: Final = ("matrixorigin.io/DN-", "matrixorigin.io/CN-")
"""The Go operator's per-set finalizers on a claim (``matrixorigin.io/DN-<hash7>``, ``CN-``)."""


def unique_id(s3: Mapping[str, Any]) -> str:
    """Upstream's ``UniqueBucketLabel``: sha1 of ``<type>-<endpoint>-<path>`` as written
    (an unset type or endpoint is empty), in hex."""
    text = f"{s3.get('type') or ''}-{s3.get('endpoint') or ''}-{s3.get('path') or ''}"
    return hashlib.sha1(text.encode()).hexdigest()


def claim_name(logset_uid: str) -> str:
    """The claim a LogSet creates: ``bucket-<LogSet UID>`` (upstream's name; one per LogSet)."""
    return f"bucket-{logset_uid}"


def bind_mark(namespace: str, name: str) -> str:
    """How a claim names its LogSet: ``<namespace>/<name>``."""
    return f"{namespace}/{name}"


def binding(claim: Mapping[str, Any]) -> str | None:
    """The LogSet (``<namespace>/<name>``) the claim is bound to, None when released."""
    annotations = annotations_of(claim)
    if BIND_TO in annotations:
        return str(annotations[BIND_TO] or "") or None
    status = status_of(claim)  # a claim made by the Go operator
    if status.get("state") == IN_USE and status.get("bindTo"):
        return str(status["bindTo"])
    return None


def ever_written(claim: Mapping[str, Any]) -> bool:
    return annotations_of(claim).get(ANY_INSTANCE_RUNNING) == "true"


def reclaim_policy(claim: Mapping[str, Any]) -> str:
    """The claim's reclaim policy; Retain unless it says Delete (never delete data by default)."""
    s3 = spec_of(claim).get("s3") or {}
    return DELETE if s3.get("s3RetentionPolicy") == DELETE else RETAIN


def state(claim: Mapping[str, Any]) -> str:
    """``status.state`` of a claim: Deleting once deleted, else InUse when bound, else Released."""
    if is_deleting(claim):
        return DELETING
    return IN_USE if binding(claim) else RELEASED


def holder(claims: list[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """Of several claims of one path (two LogSets raced to claim it), the one that holds
    it: the oldest, then by namespace and name. The others are refused."""
    if not claims:
        return None

    def key(c: Mapping[str, Any]) -> tuple[str, str, str]:
        meta = meta_of(c)
        return (meta.creation_timestamp, meta.namespace, meta.name)

    return min(claims, key=key)


def cleanup_job_name(claim: str) -> str:
    """The cleanup Job of a claim (upstream's ``job-<claim>``)."""
    return f"job-{claim}"


def s3_url(path: str) -> str:
    """``s3://<bucket>/<prefix>/``: with the trailing slash, ``aws s3 rm --recursive``
    removes the keys under the prefix and not those of a sibling prefix that merely starts
    the same (``mo`` must not take ``mo2`` with it, which upstream's command does)."""
    return f"s3://{path.strip('/')}/"


def endpoint_url(endpoint: str | None) -> str | None:
    """The ``--endpoint-url`` of aws-cli for a spec's endpoint (https when it names no scheme)."""
    if not endpoint:
        return None
    return endpoint if "://" in endpoint else f"https://{endpoint}"


def cleanup_script(s3: Mapping[str, Any]) -> str:
    """The shell script the cleanup Job runs in the aws-cli image.

    It first asks whether the bucket exists: a bucket that is gone has nothing left to
    delete, so the Job succeeds. Any other failure (credentials, network) fails the Job,
    unlike upstream's script, which took every failure of ``head-bucket`` for a missing
    bucket and reported success with the data still there.
    """
    path = str(s3.get("path") or "").strip("/")
    bucket = path.split("/", 1)[0]
    options = ""
    url = endpoint_url(s3.get("endpoint"))
    if url:
        options += f" --endpoint-url {shlex.quote(url)}"
    if s3.get("region"):
        options += f" --region {shlex.quote(str(s3['region']))}"
    return "\n".join(
        [
            "set -u",
            f"if ! out=$(aws{options} s3api head-bucket --bucket {shlex.quote(bucket)} 2>&1); then",
            '  case "$out" in',
            '    *"Not Found"*|*NoSuchBucket*|*"(404)"*) echo "no such bucket: nothing to delete"; exit 0 ;;',
            '    *) echo "$out" >&2; exit 1 ;;',
            "  esac",
            "fi",
            f"aws{options} s3 rm {shlex.quote(s3_url(path))} --recursive",
            "",
        ]
    )
