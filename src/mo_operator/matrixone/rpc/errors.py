"""Why a call to MatrixOne failed, finer than ``AdminError`` so the clients can react.

Every class is an ``AdminError``: controllers only see the admin interface's two errors,
while the HAKeeper client uses the subclasses to decide whether a connection is still
good (a server error) or must be dropped and the HAKeeper found again (everything else).
"""

from __future__ import annotations

from mo_operator.matrixone.admin import AdminError


class RpcError(AdminError):
    """A morpc exchange failed."""


class Unreachable(RpcError):
    """No TCP connection to the address (refused, unresolvable, timed out connecting)."""


class ConnectionLost(RpcError):
    """The connection closed or broke before the answer came (possibly mid-frame)."""


class ProtocolError(RpcError):
    """The peer sent bytes that are not a valid morpc frame or protobuf message."""


class NoHAKeeper(RpcError):
    """No reachable log store says it is the HAKeeper (``moerr.ErrNoHAKeeper``)."""


class ServerError(RpcError):
    """MatrixOne answered with an error code (``Response.ErrorCode`` or ``moerr.Error``)."""

    def __init__(self, code: int, message: str, what: str = "") -> None:
        self.code = code
        self.message = message
        super().__init__(f"{what + ': ' if what else ''}MatrixOne error {code}: {message or '(no message)'}")


class NotSupported(ServerError):
    """The peer does not know the method (``moerr.ErrNotSupported``): an older MatrixOne."""
