"""Log store ordinals a failover retired, carried over from the Go operator.

Upstream's log failover replaces a lost store by a new ordinal and adds the lost
one to its Advanced StatefulSet's ``reserveOrdinals`` (OpenKruise): no pod is made
at a reserved ordinal again, and the live stores keep their names, which are their
identities (the store UUID derives from the ordinal, its Raft and gossip addresses
are the pod's DNS name). A taken-over LogSet records them (annotation
``logset.matrixorigin.io/reserved-ordinals``, a JSON list as Kruise's field) so
that its stores keep those names under our StatefulSet.

Kruise runs the ``replicas`` lowest ordinals that are not reserved: stores 0, 1, 2
with store 1 lost run ``0, 2, 3``. An apps/v1 StatefulSet runs consecutive ordinals
from ``spec.ordinals.start``, so ours keeps the live stores above the highest
reserved ordinal (``start = max(reserved) + 1``); the live stores below it
(*detached*, ``0`` here) are pods the LogSet keeps itself (``controllers/logset/
detached.py``). No store is renumbered and no pod runs at a reserved ordinal.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Collection, Mapping
from dataclasses import dataclass

from mo_operator.matrixone import labels


class ReservedOrdinalsError(ValueError):
    """A record of reserved ordinals that is malformed."""


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


@dataclass(frozen=True)
class Numbering:
    """Where a LogSet's stores run, given the ordinals it keeps reserved."""

    live: tuple[int, ...]
    """The ordinals of its stores: the ``replicas`` lowest not reserved (as Kruise numbers them)."""
    start: int
    """The StatefulSet's first ordinal (``spec.ordinals.start``): past every reserved one."""
    detached: tuple[int, ...]
    """The live ordinals below ``start``: pods the LogSet keeps itself."""

    @property
    def statefulset_replicas(self) -> int:
        return len(self.live) - len(self.detached)


def numbering(reserved: Collection[int], replicas: int) -> Numbering:
    """Where ``replicas`` stores run when ``reserved`` are kept reserved."""
    taken = set(reserved)
    start = max(taken, default=-1) + 1
    live = tuple(itertools.islice((o for o in itertools.count() if o not in taken), max(replicas, 0)))
    return Numbering(live, start, tuple(o for o in live if o < start))


def recorded(annotations: Mapping[str, str], replicas: int) -> Numbering:
    """The numbering of a LogSet with these annotations and ``replicas`` (ordinals from 0
    when it records no reserved ordinals)."""
    value = annotations.get(labels.LOGSET_RESERVED_ORDINALS)
    return numbering(() if value is None else decode(value), replicas)
