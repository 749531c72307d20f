"""The validating webhook's look at BucketClaims (upstream's ``validateIfBucketInUse``
and ``validateIfBucketDeleting``): a LogSet, or a MatrixOneCluster (whose LogSet bears
its name), may not be created on an S3 path whose claim another LogSet holds, nor on a
path whose claim is being deleted (its data is about to be removed)::

    spec.sharedStorage.s3: claimed bucket ns/bucket-1234 already bind to ns/other

Only creation is checked. The path cannot change afterwards (``sharedStorage.s3`` is
immutable), so an update has nothing new to check, and checking it anyway (upstream
does) can refuse the update that removes the finalizer of a LogSet that never got its
path, leaving it Terminating for ever.

A webhook has no cache: the claims of the path are listed from the API server, by the
path's unique-id label. When that read fails the object is admitted: the LogSet
controller makes the same check and refuses the path with a condition and an Event, so
the webhook only makes the refusal earlier and louder, never the only line of defence.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from mo_operator.api.kinds import GROUP, KINDS, VERSION
from mo_operator.api.validation import FieldError
from mo_operator.kube.client.client import ApiClient
from mo_operator.kube.client.resource import Resource
from mo_operator.kube.meta.objects import name_of, namespace_of
from mo_operator.kube.meta.selectors import selector_from_labels
from mo_operator.matrixone import buckets, names

__all__ = ["ClaimLookup", "api_claim_lookup", "bucket_errors"]

log = logging.getLogger(__name__)

ClaimLookup = Callable[[str], Awaitable[Sequence[Mapping[str, Any]]]]
"""The claims (in any namespace) of the path with a given unique id."""

_CLAIMS = Resource(GROUP, VERSION, "BucketClaim", KINDS["BucketClaim"].plural, True)
_WHERE = {"LogSet": ("spec",), "MatrixOneCluster": ("spec", "logService")}
"""Where each checked kind keeps its LogSet spec."""


def api_claim_lookup(client: ApiClient) -> ClaimLookup:
    """Claims listed from the API server by the unique-id label."""

    async def lookup(unique_id: str) -> Sequence[Mapping[str, Any]]:
        found = await client.list(
            _CLAIMS, None, label_selector=str(selector_from_labels({buckets.UNIQUE_ID: unique_id}))
        )
        return found.items

    return lookup


def _name(claim: Mapping[str, Any]) -> str:
    return f"{namespace_of(claim)}/{name_of(claim)}"


async def bucket_errors(
    kind: str, operation: str, obj: Any, namespace: str, lookup: ClaimLookup
) -> list[FieldError]:
    """Why ``obj`` may not use its S3 path; empty when it may (or when it cannot be told)."""
    where = _WHERE.get(kind)
    if where is None or operation != "CREATE" or not isinstance(obj, Mapping):
        return []
    spec: Any = obj
    for key in where:
        spec = spec.get(key) if isinstance(spec, Mapping) else None
    storage = spec.get("sharedStorage") if isinstance(spec, Mapping) else None
    s3 = storage.get("s3") if isinstance(storage, Mapping) else None
    meta = obj.get("metadata")
    meta = meta if isinstance(meta, Mapping) else {}
    name, ns = meta.get("name"), meta.get("namespace")
    if not isinstance(s3, Mapping) or not s3.get("path") or not isinstance(name, str) or not name:
        return []
    ns = ns if isinstance(ns, str) and ns else namespace
    try:
        claims = list(await lookup(buckets.unique_id(s3)))
    except Exception as e:  # admitted: the controller checks again
        log.warning("cannot list the BucketClaims of s3://%s: %s", s3.get("path"), e)
        return []
    path = ".".join([*where, "sharedStorage", "s3"])
    me = buckets.bind_mark(str(ns), name if kind == "LogSet" else names.cluster_child_name(name))
    live = [c for c in claims if not buckets.is_deleting(c)]
    bound = [c for c in live if buckets.binding(c) is not None]
    held = buckets.holder(bound)
    if held is not None and buckets.binding(held) != me:
        return [FieldError(path, f"claimed bucket {_name(held)} already bind to {buckets.binding(held)}")]
    deleting = [c for c in claims if buckets.is_deleting(c)]
    if deleting and held is None:
        return [FieldError(path, f"claimed bucket {_name(deleting[0])} state is deleting")]
    return []
