"""API errors as one typed exception carrying the server's ``Status``, and the
predicates controllers branch on (apimachinery's ``apierrors.IsNotFound``
and friends), so no caller parses messages or compares raw codes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


class ApiError(Exception):
    """A non-success answer from the API server.

    ``status`` is the HTTP code; ``reason`` the ``Status.reason``
    (``NotFound``, ``AlreadyExists``, ``Conflict``, ``Expired``...);
    ``details`` the ``Status.details`` (name, kind, causes) when given.
    """

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

    @classmethod
    def from_status(cls, status: Mapping[str, Any], http_status: int | None = None, **kw: Any) -> ApiError:
        """From a ``Status`` object (a response body or a watch ``ERROR`` event)."""
        code = status.get("code") or http_status or 500
        return cls(
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
