"""One request and its answer with a MatrixOne service that answers in kind:
the query service and the TN lock service both reply with a message whose
``error`` field carries a MatrixOne error, and read the request id from the
request itself."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, Protocol, TypeVar

from mo_operator.matrixone.rpc.codes import ErrorCode
from mo_operator.matrixone.rpc.connection import MorpcConnection
from mo_operator.matrixone.rpc.errors import NotSupported, ProtocolError, ServerError
from mo_operator.matrixone.rpc.metrics import observed
from mo_operator.matrixone.rpc.protobuf import DecodeError
from mo_operator.matrixone.rpc.query_pb import MOError


class Answer(Protocol):
    @property
    def error(self) -> bytes: ...


A = TypeVar("A", bound=Answer)


async def exchange(
    conn: MorpcConnection,
    request: Any,
    deadline: float,
    decode: Callable[[bytes], A],
    what: str,
    message: str,
) -> A:
    """Send ``request`` (a dataclass with ``request_id``; ``what`` names it in errors),
    decode the answer with ``decode`` (a ``message`` such as ``lock.Response``) and
    raise the error it carries."""

    def encode(request_id: int) -> bytes:
        return bytes(dataclasses.replace(request, request_id=request_id).encode())

    with observed(what, deadline):
        body = await conn.call(encode, deadline)
        try:
            response = decode(body)
            error = MOError.decode(response.error) if response.error else None
        except DecodeError as e:
            conn.abort()
            raise ProtocolError(f"{conn.address} sent an invalid {message} to {what}: {e}") from e
        if error is not None:
            kind = NotSupported if error.code == ErrorCode.NOT_SUPPORTED else ServerError
            raise kind(error.code, error.message, f"{what} at {conn.address}")
    return response
