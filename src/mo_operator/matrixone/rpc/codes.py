"""The numbers of MatrixOne's that are not in its ``.proto`` files: the error codes the
client tells apart and the HAKeeper shard's ID, and how CN labels travel.

Sources: matrixorigin/matrixone 7c27538f5a3d5aab816c845b5fd0ab0ef07eb69e
``pkg/common/moerr/error.go`` (codes), ``pkg/logservice/errors.go`` (``toErrorCode``:
the server fills ``Response.ErrorCode``/``ErrorMessage`` with them; a MatrixOne error
keeps its code and text, dragonboat errors map to the 204xx codes with an empty text),
``pkg/hakeeper/rsm.go`` (``DefaultHAKeeperShardID``).
"""

from __future__ import annotations

import enum

from mo_operator.matrixone.rpc.logservice_pb import LabelList

HAKEEPER_SHARD_ID = 0
"""``hakeeper.DefaultHAKeeperShardID``."""


class ErrorCode(enum.IntEnum):
    """``Response.ErrorCode`` and ``moerr.Error.code`` values that matter here."""

    OK = 0
    INTERNAL = 20101
    NOT_SUPPORTED = 20105
    NO_HAKEEPER = 20417
    DRAGONBOAT_TIMEOUT = 20429
    DRAGONBOAT_SHARD_NOT_READY = 20434
    DRAGONBOAT_SYSTEM_CLOSED = 20435
    DRAGONBOAT_SHARD_NOT_FOUND = 20437
    DRAGONBOAT_OTHER_SYSTEM_ERROR = 20438


Labels = dict[str, LabelList]
"""A CN's labels as ``map<string, metadata.LabelList>``."""


def labels_to_pb(labels: dict[str, tuple[str, ...]]) -> Labels:
    return {k: LabelList(tuple(v)) for k, v in labels.items()}


def labels_from_pb(labels: Labels) -> dict[str, tuple[str, ...]]:
    return {k: v.labels for k, v in labels.items()}
