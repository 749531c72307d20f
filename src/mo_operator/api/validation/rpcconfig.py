"""MatrixOne settings in a user's TOML config that would cut the operator off from
the cluster.

``rpc.enable-compress`` (``morpc.Config.EnableCompress``) makes a MatrixOne morpc
server LZ4-compress its answers; the operator's admin client
(``mo_operator.matrixone.rpc``) speaks uncompressed morpc only, so it could read
no answer of the servers it calls: HAKeeper, on the log stores (``[logservice.rpc]``,
``logservice.Config.RPC``), and a CN's query service (``[cn.rpc]``,
``cnservice.Config.RPC``). Failover, CN draining and store bookkeeping would all
fail, so the setting is refused up front. The TN's and the proxy's RPC settings
serve no call of ours and are left alone.

MatrixOne decodes its config with BurntSushi/toml, which matches a key that has no
exact match case-insensitively: ``[LogService.RPC] Enable-Compress`` is the same
setting, so names are compared ignoring case.
"""

from __future__ import annotations

import tomllib
from typing import Any

from .errors import FieldError, child

__all__ = ["compressed_rpc_errors"]

_WHY = "the operator's admin client speaks uncompressed morpc and could read none of the answers"


def _lookup(table: Any, name: str) -> list[Any]:
    """The values of ``table``'s keys equal to ``name`` ignoring case."""
    if not isinstance(table, dict):
        return []
    return [v for k, v in table.items() if k.lower() == name]


def compressed_rpc_errors(spec: dict[str, Any], path: str, section: str) -> list[FieldError]:
    """An error when ``spec.config`` sets ``[<section>.rpc] enable-compress = true``;
    ``section`` is the component's table (``logservice`` or ``cn``)."""
    config = spec.get("config")
    if not config:
        return []
    found = [
        value
        for component in _lookup(tomllib.loads(config), section)
        for rpc in _lookup(component, "rpc")
        for value in _lookup(rpc, "enable-compress")
    ]
    if True not in found:
        return []
    return [
        FieldError(child(path, "config"), f"[{section}.rpc] enable-compress = true is not supported: {_WHY}")
    ]
