"""API errors as kube-apiserver reports them: a ``metav1.Status`` with code,
reason, message and details, so clients (kubectl, client-go, lightkube) react
exactly as they would to the real server."""

from __future__ import annotations

from typing import Any


class StatusError(Exception):
    """An error the server answers with a ``Status`` object."""

    def __init__(
        self,
        code: int,
        reason: str,
        message: str,
        *,
        details: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.details = details
        self.headers = headers or {}

    def status(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "code": self.code,
        }
        if self.reason:  # Go omits an empty reason
            body["reason"] = self.reason
        if self.details is not None:
            body["details"] = self.details
        return body


def _details(group_resource: str, name: str | None) -> dict[str, Any]:
    plural, _, grp = group_resource.partition(".")
    details: dict[str, Any] = {"kind": plural}
    if grp:
        details["group"] = grp
    if name:
        details["name"] = name
    return details


def not_found(group_resource: str, name: str) -> StatusError:
    return StatusError(
        404, "NotFound", f'{group_resource} "{name}" not found', details=_details(group_resource, name)
    )


def already_exists(group_resource: str, name: str) -> StatusError:
    return StatusError(
        409,
        "AlreadyExists",
        f'{group_resource} "{name}" already exists',
        details=_details(group_resource, name),
    )


def conflict(group_resource: str, name: str, why: str) -> StatusError:
    return StatusError(
        409,
        "Conflict",
        f'Operation cannot be fulfilled on {group_resource} "{name}": {why}',
        details=_details(group_resource, name),
    )


def stale_conflict(group_resource: str, name: str) -> StatusError:
    return conflict(
        group_resource,
        name,
        "the object has been modified; please apply your changes to the latest version and try again",
    )


def invalid(kind: str, group: str, name: str, causes: list[dict[str, str]]) -> StatusError:
    """422 Invalid, with one cause per field as kubectl prints them."""
    parts = [f"{c['field']}: {c['message']}" if c.get("field") else c["message"] for c in causes]
    summary = parts[0] if len(parts) == 1 else "[" + ", ".join(parts) + "]"
    details: dict[str, Any] = {"causes": causes}
    if kind:  # Go omits empty strings
        details["kind"] = kind
    if name:
        details["name"] = name
    if group:
        details["group"] = group
    return StatusError(
        422,
        "Invalid",
        f'{kind}{"." + group if group else ""} "{name}" is invalid: {summary}',
        details=details,
    )


def field_cause(field: str, message: str, reason: str = "FieldValueInvalid") -> dict[str, str]:
    return {"reason": reason, "message": message, "field": field}


def bad_request(message: str) -> StatusError:
    return StatusError(400, "BadRequest", message)


def forbidden(group_resource: str, name: str, why: str) -> StatusError:
    return StatusError(
        403,
        "Forbidden",
        f'{group_resource} "{name}" is forbidden: {why}',
        details=_details(group_resource, name),
    )


def method_not_allowed(message: str) -> StatusError:
    return StatusError(405, "MethodNotAllowed", message, details={})


def unsupported_media_type(content_type: str) -> StatusError:
    return StatusError(
        415,
        "UnsupportedMediaType",
        f"the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml (got {content_type})",
    )


def gone(message: str) -> StatusError:
    return StatusError(410, "Expired", message)


def internal(message: str) -> StatusError:
    return StatusError(
        500,
        "InternalError",
        f"Internal error occurred: {message}",
        details={"causes": [{"message": message}]},
    )


def too_many_requests(retry_after: int) -> StatusError:
    return StatusError(
        429,
        "TooManyRequests",
        "Too many requests, please try again later.",
        details={"retryAfterSeconds": retry_after},
        headers={"Retry-After": str(retry_after)},
    )


def unauthorized() -> StatusError:
    return StatusError(401, "Unauthorized", "Unauthorized")
