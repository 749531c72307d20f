"""The validating webhook of a kind: :func:`~mo_operator.api.validation.validate_create`
on CREATE, :func:`~mo_operator.api.validation.validate_update` (immutable fields,
volumes that only grow, no operatorVersion downgrade) on UPDATE, and a denial
worded as kube-apiserver words an invalid object; an admitted object gets the
AdmissionReview ``warnings`` of :func:`~mo_operator.api.validation.admission_warnings`
(a version that is not semantic, fields that have no effect), which kubectl prints
as ``Warning: ...``.

Upstream's validators return ``apierrors.NewInvalid(kind, name, errs)``, whose
message is ``<Kind>.<group> "<name>" is invalid: <errors>``; kube-apiserver puts
``admission webhook "<webhook>" denied the request: `` in front. We answer the
same message, so kubectl prints::

    ... admission webhook "vlogset.core.matrixorigin.io" denied the request:
    LogSet.core.matrixorigin.io "mo" is invalid: spec.volume.size: size must not be zero

The denial carries no ``details.causes`` on purpose: given causes, kubectl prints
them alone ("The request is invalid: * spec.x: ...") and drops both the
webhook's name and the file the object came from; the message already names
every field.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from mo_operator.api.kinds import GROUP
from mo_operator.api.validation import FieldError, admission_warnings, validate_create, validate_update
from mo_operator.kube.webhook.server import AdmissionRequest, Admitted, Denial

from .buckets import ClaimLookup, bucket_errors
from .owned_sets import OwnedSets

__all__ = ["MAX_ERRORS", "MAX_ERROR_LENGTH", "Validator", "denial", "invalid_message"]

Obj = dict[str, Any]

MAX_ERRORS: Final = 20
"""Errors listed in one denial; the rest are counted. An object broken in a
thousand places gets a readable answer and a small AdmissionReview."""
MAX_ERROR_LENGTH: Final = 1024
"""Characters of one error kept (a 64 KiB string quoted back is of no help)."""


def _clip(text: str) -> str:
    if len(text) <= MAX_ERROR_LENGTH:
        return text
    return text[:MAX_ERROR_LENGTH] + "... (truncated)"


def _aggregate(errors: Sequence[FieldError]) -> str:
    """The errors as Go's ``field.ErrorList.ToAggregate().Error()`` prints them:
    duplicates dropped, one error bare, several in brackets joined by ", "."""
    texts = list(dict.fromkeys(str(e) for e in errors))
    shown = [_clip(t) for t in texts[:MAX_ERRORS]]
    if len(texts) > MAX_ERRORS:
        shown.append(f"and {len(texts) - MAX_ERRORS} more errors")
    return shown[0] if len(shown) == 1 else "[" + ", ".join(shown) + "]"


def invalid_message(kind: str, name: str, errors: Sequence[FieldError]) -> str:
    """``apierrors.NewInvalid``'s message: ``<Kind>.<group> "<name>" is invalid: <errors>``."""
    quoted = name.replace("\\", "\\\\").replace('"', '\\"')
    return f'{kind}.{GROUP} "{quoted}" is invalid: {_aggregate(errors)}'


def denial(kind: str, name: str, errors: Sequence[FieldError]) -> Denial:
    """The 422 Invalid answer for an object with ``errors`` (at least one)."""
    return Denial(invalid_message(kind, name, errors), code=422, reason="Invalid")


def _name(req: AdmissionRequest) -> str:
    """The object's name; on create it may only exist as ``generateName``. Whatever
    the request holds, a string (the message must be written even for garbage)."""
    if isinstance(req.name, str) and req.name:
        return req.name
    meta = (req.object or {}).get("metadata")
    if not isinstance(meta, dict):
        return ""
    name = meta.get("name") or meta.get("generateName") or ""
    return name if isinstance(name, str) else ""


class Validator:
    """The validating handler of one kind.

    ``claims``: how to find the BucketClaims of an S3 path; with it, a LogSet or
    MatrixOneCluster is also refused a path another LogSet holds (see :mod:`.buckets`).
    ``owned``: the warning on a direct change of a set a MatrixOneCluster owns (see
    :mod:`.owned_sets`), also on a write through ``/scale``, which is not validated
    here (the API server checks the Scale and the CRD schema the object).
    """

    def __init__(
        self, kind: str, *, claims: ClaimLookup | None = None, owned: OwnedSets | None = None
    ) -> None:
        self.kind = kind
        self.claims = claims
        self.owned = owned

    def errors(self, operation: str, obj: Any, old: Any = None) -> list[FieldError]:
        """Every reason to refuse the request; empty to admit it (and for operations
        other than CREATE and UPDATE, which our configurations do not send)."""
        if operation == "CREATE":
            return validate_create(self.kind, obj)
        if operation == "UPDATE":
            return validate_update(self.kind, old, obj)
        return []

    def warnings(self, operation: str, obj: Any, old: Any = None) -> list[str]:
        """What to tell the user about an admitted object (see
        :func:`~mo_operator.api.validation.admission_warnings`), on CREATE and UPDATE:
        a field that has no effect still has none after an edit of another one."""
        if operation not in ("CREATE", "UPDATE"):
            return []
        return admission_warnings(self.kind, obj, old=old if operation == "UPDATE" else None)

    async def __call__(self, req: AdmissionRequest) -> Denial | Admitted | None:
        """A denial, an admission with warnings, or None: admitted with nothing to say."""
        if req.subresource:
            owned = await self._owned(req)
            return Admitted(owned) if owned else None
        errs = self.errors(req.operation, req.object, req.old_object)
        if not errs and self.claims is not None and req.operation == "CREATE":
            errs = await bucket_errors(self.kind, req.operation, req.object, req.namespace, self.claims)
        if errs:
            return denial(self.kind, _name(req), errs)
        warnings = self.warnings(req.operation, req.object, req.old_object) + await self._owned(req)
        return Admitted(warnings) if warnings else None

    async def _owned(self, req: AdmissionRequest) -> list[str]:
        return await self.owned.warnings(self.kind, req) if self.owned is not None else []
