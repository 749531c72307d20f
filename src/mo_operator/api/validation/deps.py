"""Dependencies of a set: the log service it connects to."""

from __future__ import annotations

from typing import Any

from .errors import FieldError, child

__all__ = ["logset_ref_errors"]


def logset_ref_errors(deps: dict[str, Any] | None, path: str) -> list[FieldError]:
    """Exactly one of logSet and externalLogSet, each naming something."""
    deps = deps or {}
    log_set, external = deps.get("logSet"), deps.get("externalLogSet")
    if log_set is None and external is None:
        return [FieldError(path, "one of deps.logSet or deps.externalLogSet must be set")]
    if log_set is not None and external is not None:
        return [FieldError(path, "only one of deps.logSet or deps.externalLogSet may be set")]
    if log_set is not None and not (log_set.get("metadata") or {}).get("name"):
        return [FieldError(child(child(child(path, "logSet"), "metadata"), "name"), "Required value")]
    if external is not None and not external["haKeeperEndpoint"]:
        return [FieldError(child(child(path, "externalLogSet"), "haKeeperEndpoint"), "Required value")]
    return []
