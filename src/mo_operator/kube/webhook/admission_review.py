"""AdmissionReview v1 requests, read strictly.

A webhook's port can be reached by anyone on the network, not only by
kube-apiserver: what arrives is checked as a whole before any handler sees it.
A body that is not a well-formed AdmissionReview v1 request (not JSON, nested
past :data:`MAX_DEPTH`, another kind, no ``request``, no ``uid``, an operation
kube-apiserver never sends, a CREATE or UPDATE without its object) raises
:class:`MalformedReview` with a reason fit to answer with status 400: it is never
admitted, and a handler never has to guess what a missing field means.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

__all__ = [
    "MAX_DEPTH",
    "MAX_UID_LENGTH",
    "OPERATIONS",
    "AdmissionRequest",
    "MalformedReview",
    "parse_review",
]

Obj = dict[str, Any]

API_VERSION: Final = "admission.k8s.io/v1"
OPERATIONS: Final = frozenset({"CREATE", "UPDATE", "DELETE", "CONNECT"})
"""What kube-apiserver sends (``admissionv1.Operation``)."""
MAX_DEPTH: Final = 512
"""Deepest nesting of a review (the review, its request and the object are the first
three levels). Kubernetes objects stay far below it (a pod is about 15 levels); the
handlers answer an object nested past their own bound with a field error."""
MAX_UID_LENGTH: Final = 256
"""A request uid is a UUID; a longer one is not kube-apiserver's, and is echoed back."""


class MalformedReview(ValueError):
    """The body is not an AdmissionReview v1 request: answered 400 with this reason."""


@dataclass
class AdmissionRequest:
    """The parts of an AdmissionReview request handlers use."""

    uid: str
    operation: str
    kind: Obj
    namespace: str
    name: str
    object: Obj | None
    old_object: Obj | None
    dry_run: bool
    raw: Obj = field(repr=False)
    subresource: str = ""
    """``scale`` for a write through ``/scale`` (the objects are then autoscaling/v1 Scales)."""
    field_manager: str = ""
    """The ``fieldManager`` the writer gave (``options`` of the request), empty if none."""

    @classmethod
    def from_review(cls, review: Any) -> AdmissionRequest:
        """The request of a decoded review; :class:`MalformedReview` when it is not one."""
        if not isinstance(review, Mapping):
            raise MalformedReview("an AdmissionReview must be a JSON object")
        if review.get("apiVersion", API_VERSION) != API_VERSION:
            raise MalformedReview(f"apiVersion must be {API_VERSION}")
        if review.get("kind", "AdmissionReview") != "AdmissionReview":
            raise MalformedReview("kind must be AdmissionReview")
        req = review.get("request")
        if not isinstance(req, Mapping):
            raise MalformedReview("request must be an object")
        uid = req.get("uid")
        if not isinstance(uid, str) or not uid or len(uid) > MAX_UID_LENGTH:
            raise MalformedReview(f"request.uid must be a string of 1 to {MAX_UID_LENGTH} characters")
        operation = req.get("operation")
        if not isinstance(operation, str) or operation not in OPERATIONS:
            raise MalformedReview(f"request.operation must be one of {', '.join(sorted(OPERATIONS))}")
        kind = req.get("kind")
        if not isinstance(kind, Mapping) or not all(isinstance(kind.get(k, ""), str) for k in kind):
            raise MalformedReview("request.kind must be an object of strings (group, version, kind)")
        obj, old = _object(req, "object"), _object(req, "oldObject")
        if operation in ("CREATE", "UPDATE") and obj is None:
            raise MalformedReview(f"request.object is required on {operation}")
        if operation == "UPDATE" and old is None:
            raise MalformedReview("request.oldObject is required on UPDATE")
        dry_run = req.get("dryRun", False)
        if not isinstance(dry_run, bool | None):
            raise MalformedReview("request.dryRun must be a boolean")
        return cls(
            uid=uid,
            operation=str(operation),
            kind=dict(kind),
            namespace=_text(req, "namespace"),
            name=_text(req, "name"),
            object=obj,
            old_object=old,
            dry_run=bool(dry_run),
            raw=dict(req),
            subresource=_text(req, "subResource"),
            field_manager=_field_manager(req),
        )


def _object(req: Mapping[str, Any], name: str) -> Obj | None:
    value = req.get(name)
    if value is None:
        return None
    if not isinstance(value, dict):
        raise MalformedReview(f"request.{name} must be an object")
    return value


def _field_manager(req: Mapping[str, Any]) -> str:
    options = req.get("options")
    if options is None:
        return ""
    if not isinstance(options, Mapping):
        raise MalformedReview("request.options must be an object")
    manager = options.get("fieldManager")
    if manager is None:
        return ""
    if not isinstance(manager, str):
        raise MalformedReview("request.options.fieldManager must be a string")
    return manager


def _text(req: Mapping[str, Any], name: str) -> str:
    value = req.get(name)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise MalformedReview(f"request.{name} must be a string")
    return value


def _too_deep(value: Any, limit: int) -> bool:
    """Whether ``value`` nests deeper than ``limit``, found without recursion."""
    stack = [(value, 0)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return True
        if isinstance(node, dict):
            stack.extend((v, depth + 1) for v in node.values())
        elif isinstance(node, list):
            stack.extend((v, depth + 1) for v in node)
    return False


def parse_review(body: bytes) -> tuple[Obj, AdmissionRequest]:
    """The review in ``body`` and its request; :class:`MalformedReview` saying what is wrong."""
    try:
        review = json.loads(body)
    except RecursionError:
        raise MalformedReview(f"the body nests deeper than {MAX_DEPTH} levels") from None
    except (ValueError, UnicodeDecodeError) as e:
        raise MalformedReview(f"the body is not JSON: {e}") from None
    if _too_deep(review, MAX_DEPTH):
        raise MalformedReview(f"the body nests deeper than {MAX_DEPTH} levels")
    return review, AdmissionRequest.from_review(review)
