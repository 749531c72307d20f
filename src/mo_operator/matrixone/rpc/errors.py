"""Why a call to MatrixOne failed, finer than ``AdminError`` so the clients can react.

Every class is one of the admin interface's failure classes (``admin.NotYet``,
``admin.Unreachable``, ``admin.ClientFault``), which is what controllers see, while the
HAKeeper client uses the finer ones to decide whether a connection is still good (a
server error) or must be dropped and the HAKeeper found again (everything else).
"""

from __future__ import annotations

from mo_operator.matrixone.admin import AdminError, ClientFault, NotYet
from mo_operator.matrixone.admin import Unreachable as NoAnswer


class RpcError(AdminError):
    """A morpc exchange failed."""


class Unreachable(RpcError, NoAnswer):
    """No TCP connection to the address (refused, unresolvable, timed out connecting)."""


class ConnectionLost(RpcError, NoAnswer):
    """The connection closed or broke before the answer came (possibly mid-frame)."""


class ProtocolError(RpcError, ClientFault):
    """The peer sent bytes that are not a valid morpc frame or protobuf message."""


class NoHAKeeper(RpcError, NotYet):
    """No reachable log store says it is the HAKeeper (``moerr.ErrNoHAKeeper``), or the
    HAKeeper shard has no leader yet."""


class ServerError(RpcError, NotYet):
    """MatrixOne answered with an error code (``Response.ErrorCode`` or ``moerr.Error``)."""

    def __init__(self, code: int, message: str, what: str = "") -> None:
        self.code = code
        self.message = message
        super().__init__(f"{what + ': ' if what else ''}MatrixOne error {code}: {message or '(no message)'}")


class NotSupported(ServerError, ClientFault):
    """The peer does not know the method (``moerr.ErrNotSupported``): an older MatrixOne,
    which the query service's version probes expect; anywhere else the client is at fault."""
