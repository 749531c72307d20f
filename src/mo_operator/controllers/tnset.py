"""The TNSet controller: the transaction nodes under the name upstream gave them
later. A TNSet is a DNSet but for its kind (its admission rules, its status and
Events), so its actor is the DNSet's with that kind, and its controller is wired
as the DNSet's (``dnset.wire_transaction_sets``), the sets of each kind apart."""

from __future__ import annotations

from mo_operator.api.dnset import TNSet

from .dnset import DNSetActor, wire_transaction_sets
from .framework import resources as r
from .wiring import Wiring


class TNSetActor(DNSetActor):
    model = TNSet


def setup(wiring: Wiring) -> None:
    """TNSets: a StatefulSet, its Services and ConfigMaps."""
    wire_transaction_sets(wiring, "tnset", r.TNSETS, TNSetActor(wiring.env))
