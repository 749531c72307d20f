"""The defaulting (mutating) webhook of a kind: the object as
:func:`mo_operator.api.defaulting.default` fills it in, answered as a JSON patch.

The rules live in the api package, shared with the reconcilers; this module only
speaks AdmissionReview. The webhook server diffs what we return against the
request's object and sends the difference as an RFC 6902 patch, so we return the
whole object and only what defaulting changed ends up in the patch.

A mutating webhook never refuses: kube-apiserver runs schema validation and the
validating webhooks after it, and they word the rejection. An object too broken
to default comes back unchanged.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from mo_operator.api.defaulting import default
from mo_operator.kube.webhook.server import AdmissionRequest, Denial

__all__ = ["Defaulter"]

Obj = dict[str, Any]

_ADMITTED_OPERATIONS = ("CREATE", "UPDATE")


class Defaulter:
    """The mutating handler of one kind.

    ``default_args`` are the operator's default ``serviceArgs`` by component
    (``logService``, ``dn``, ``cn``, ``proxy``), from its configuration; an empty
    ``serviceArgs`` gets them, as upstream's defaulter does.
    """

    def __init__(self, kind: str, *, default_args: Mapping[str, Sequence[str]] | None = None) -> None:
        self.kind = kind
        self.default_args = dict(default_args or {})

    def mutate(self, operation: str, obj: Obj | None, old: Obj | None = None) -> Obj:
        """The object as it should be stored, for a request's operation, object and old object."""
        if obj is None:
            return {}
        if operation not in _ADMITTED_OPERATIONS:
            return obj
        defaulted = default(
            self.kind,
            obj,
            old=old if operation == "UPDATE" else None,
            default_args=self.default_args,
        )
        if not isinstance(defaulted, dict):
            return obj
        # Metadata is the API server's (managedFields, a null creationTimestamp on
        # create): keep it byte for byte so the patch never touches it.
        out = {**obj, **{k: v for k, v in defaulted.items() if k != "metadata"}}
        if "metadata" in obj:
            out["metadata"] = obj["metadata"]
        return out

    async def __call__(self, req: AdmissionRequest) -> Obj | Denial:
        return self.mutate(req.operation, req.object, req.old_object)
