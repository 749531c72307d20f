"""API errors as typed exceptions carrying the server's ``Status`` (kopf's
``APINotFoundError`` and friends; apimachinery's ``apierrors.IsNotFound``), so
a caller writes ``except AlreadyExists:`` instead of parsing messages or
comparing raw codes.

``ApiError(status, reason, ...)`` itself returns the subclass the answer
means, so every error made from a server answer (and every fake that builds
one the same way) is caught by the specific ``except``. The ``is_*``
predicates remain for callers that branch on an error they already hold.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


class ApiError(Exception):
    """A non-success answer from the API server.

    ``status`` is the HTTP code; ``reason`` the ``Status.reason``
    (``NotFound``, ``AlreadyExists``, ``Conflict``, ``Expired``...);
    ``details`` the ``Status.details`` (name, kind, causes) when given.
    """

    def __new__(cls, status: int = 500, reason: str = "", *args: Any, **kw: Any) -> ApiError:
        if cls is ApiError:
            cls = _class_of(int(status), reason)
        return super().__new__(cls)

    def __init__(
        self,
        status: int,
        reason: str = "",
        message: str = "",
        details: Mapping[str, Any] | None = None,
        *,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(f"{status} {reason}: {message}" if reason else f"{status}: {message}")
        self.status = status
        self.reason = reason
        self.message = message
        self.details: dict[str, Any] = dict(details or {})
        self.retry_after = retry_after

    def __reduce__(self) -> tuple[Any, ...]:
        return (
            ApiError,
            (self.status, self.reason, self.message, self.details),
            {"retry_after": self.retry_after},
        )

    @classmethod
    def from_status(cls, status: Mapping[str, Any], http_status: int | None = None, **kw: Any) -> ApiError:
        """From a ``Status`` object (a response body or a watch ``ERROR`` event)."""
        code = status.get("code") or http_status or 500
        return ApiError(
            int(code),
            str(status.get("reason") or ""),
            str(status.get("message") or ""),
            status.get("details") or None,
            **kw,
        )

    @property
    def causes(self) -> list[dict[str, Any]]:
        """Field-level causes of an Invalid error (``field``, ``message``, ``reason``)."""
        return list(self.details.get("causes") or [])


class BadRequest(ApiError):
    """400: the request itself is malformed; sending it again cannot help."""


class Unauthorized(ApiError):
    """401: the credentials are missing or no longer valid."""


class Forbidden(ApiError):
    """403: RBAC does not allow this verb on this resource."""


class NotFound(ApiError):
    """404: the object (or the kind: a CRD not installed) does not exist."""


class Conflict(ApiError):
    """409: a write lost an optimistic-concurrency race (stale resourceVersion,
    failed precondition) or an apply hit a field-manager conflict; re-read and retry."""


class AlreadyExists(ApiError):
    """409 AlreadyExists: a create found the name taken. Not a ``Conflict``
    (as ``is_conflict`` says too): a lost race and a taken name call for
    different answers."""


class Gone(ApiError):
    """410 (``Gone``/``Expired``): the resourceVersion or continue token is too old: relist."""


class Invalid(ApiError):
    """422: the object fails validation; ``causes`` names the fields."""


class TooManyRequests(ApiError):
    """429: throttled; ``retry_after`` says when to try again."""


class ServerError(ApiError):
    """5xx: the server failed; the same request may succeed later."""


_BY_REASON: dict[str, type[ApiError]] = {
    "AlreadyExists": AlreadyExists,
    "Expired": Gone,
    "Gone": Gone,
}
_BY_STATUS: dict[int, type[ApiError]] = {
    400: BadRequest,
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    409: Conflict,
    410: Gone,
    422: Invalid,
    429: TooManyRequests,
}


def _class_of(status: int, reason: str) -> type[ApiError]:
    if status == 409 or status == 410:
        return _BY_REASON.get(reason) or _BY_STATUS[status]
    if status >= 500:
        return ServerError
    return _BY_STATUS.get(status, ApiError)


def _api(err: BaseException | None) -> ApiError | None:
    return err if isinstance(err, ApiError) else None


def _has(err: BaseException | None, status: int, reason: str | None = None) -> bool:
    e = _api(err)
    if e is None:
        return False
    if reason is not None and e.reason:
        return e.reason == reason
    return e.status == status


def is_not_found(err: BaseException | None) -> bool:
    return _has(err, 404, "NotFound")


def is_already_exists(err: BaseException | None) -> bool:
    return _has(err, 409, "AlreadyExists")


def is_conflict(err: BaseException | None) -> bool:
    """A write lost an optimistic-concurrency race (stale resourceVersion), or
    an apply hit a field-manager conflict; re-read and retry."""
    return _has(err, 409, "Conflict")


def is_gone(err: BaseException | None) -> bool:
    """The resourceVersion (or continue token) is too old: relist."""
    e = _api(err)
    return e is not None and (e.status == 410 or e.reason in ("Gone", "Expired"))


def is_invalid(err: BaseException | None) -> bool:
    return _has(err, 422, "Invalid")


def is_bad_request(err: BaseException | None) -> bool:
    return _has(err, 400, "BadRequest")


def is_unauthorized(err: BaseException | None) -> bool:
    return _has(err, 401, "Unauthorized")


def is_forbidden(err: BaseException | None) -> bool:
    return _has(err, 403, "Forbidden")


def is_too_many_requests(err: BaseException | None) -> bool:
    return _has(err, 429, "TooManyRequests")


def is_server_timeout(err: BaseException | None) -> bool:
    e = _api(err)
    return e is not None and (e.status == 504 or e.reason in ("Timeout", "ServerTimeout"))


def is_server_error(err: BaseException | None) -> bool:
    e = _api(err)
    return e is not None and e.status >= 500


class ApiConnectionError(ConnectionError):
    """The API server could not be reached, or dropped the connection, and
    the request was not (or no longer) safe or worth retrying."""
