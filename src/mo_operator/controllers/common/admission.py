"""The spec as the webhooks would have admitted it.

Objects may reach a controller without passing our webhooks (created while
the operator was down with ``failurePolicy: Ignore`` elsewhere, or before
the webhooks existed). Each reconcile therefore validates the object with
the same pure functions the validating webhook uses and defaults a copy
with the defaulting webhook's rules: a bad spec becomes a condition and an
Event naming the fields, never a crash or a half-built cluster.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mo_operator.api.defaulting import default
from mo_operator.api.validation import validate_create
from mo_operator.kube.actor import TerminalError
from mo_operator.kube.frozen import thaw

Obj = dict[str, Any]

MAX_REPORTED = 5


def admitted(kind: str, obj: Mapping[str, Any]) -> Obj:
    """A defaulted, mutable copy of ``obj``; ``TerminalError`` (reason InvalidSpec) when invalid."""
    plain = thaw(obj)
    errors = validate_create(kind, plain)
    if errors:
        shown = "; ".join(str(e) for e in errors[:MAX_REPORTED])
        more = len(errors) - MAX_REPORTED
        raise TerminalError("InvalidSpec", shown + (f" (and {more} more)" if more > 0 else ""))
    defaulted: Obj = default(kind, plain)
    return defaulted
