"""Log store ordinals a failover retired, carried over from the Go operator.

Upstream's log failover replaces a lost store by a new ordinal and adds the lost
one to its Advanced StatefulSet's ``reserveOrdinals`` (OpenKruise): no pod is made
at a reserved ordinal again, and the live stores keep their names, which are their
identities (the store UUID derives from the ordinal, its Raft and gossip addresses
are the pod's DNS name). A taken-over LogSet records them (annotation
``logset.matrixorigin.io/reserved-ordinals``, a JSON list as Kruise's field) so
that its stores keep those names under our StatefulSet.

An apps/v1 StatefulSet runs consecutive ordinals from ``spec.ordinals.start``, so
reserved ordinals carry over when they are the lowest ones, ``0..k-1`` (the live
stores are then ``k..k+replicas-1``, as Kruise numbers them); a reserved ordinal
between live stores would leave a hole no StatefulSet can keep.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping

from mo_operator.matrixone import labels


class ReservedOrdinalsError(ValueError):
    """A record of reserved ordinals that is malformed or that our StatefulSet cannot keep."""


def decode(value: str) -> frozenset[int]:
    """The ordinals of the annotation's value (``[0]``, ``[0, 1]``)."""
    try:
        found = json.loads(value)
    except ValueError as e:
        raise ReservedOrdinalsError(f"not a JSON list of ordinals: {value!r}") from e
    if not isinstance(found, list) or not all(type(o) is int and o >= 0 for o in found):
        raise ReservedOrdinalsError(f"not a JSON list of non-negative ordinals: {value!r}")
    return frozenset(found)


def encode(ordinals: Collection[int]) -> str:
    return json.dumps(sorted(ordinals), separators=(",", ":"))


def hole(reserved: Collection[int]) -> str | None:
    """Why ``reserved`` cannot be kept by a StatefulSet (a live ordinal below a reserved
    one); None when they are ``0..k-1``."""
    gaps = sorted(set(range(max(reserved, default=-1) + 1)) - set(reserved))
    if not gaps:
        return None
    return (
        f"reserved ordinals {sorted(reserved)} leave ordinal(s) {gaps} live below a reserved one: "
        "a StatefulSet runs consecutive ordinals only"
    )


def first_live(reserved: Collection[int]) -> int:
    """The lowest live ordinal (the StatefulSet's ``spec.ordinals.start``): the first
    past the reserved ones, which must be ``0..k-1``."""
    why = hole(reserved)
    if why is not None:
        raise ReservedOrdinalsError(why)
    return len(set(reserved))


def recorded_first_live(annotations: Mapping[str, str]) -> int:
    """The lowest live ordinal of a LogSet with these annotations (0 when it records no
    reserved ordinals)."""
    recorded = annotations.get(labels.LOGSET_RESERVED_ORDINALS)
    return 0 if recorded is None else first_live(decode(recorded))
