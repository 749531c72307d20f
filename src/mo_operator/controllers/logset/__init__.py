"""The LogSet controller: the log service, its HAKeeper bootstrap and failover.

What it owns, named as upstream names them: the StatefulSet ``<ls>-log``
(a ``mo-data`` volume per pod), the headless Service (store addresses), the
discovery Service (the HAKeeper address everyone else uses), the metric
Service (when Prometheus discovers it by Service), the immutable hashed ConfigMap,
and the bootstrap and gossip ConfigMaps, which change without restarting anything.

The HAKeeper bootstrap decision (which stores start it, with which replica
IDs) is made once and recorded on the LogSet before any pod exists, because
a HAKeeper cannot be re-bootstrapped with another membership. Once the
HAKeeper answers, the LogSet publishes its discovery address in status;
that is what TN, CN and proxy sets wait for.

Failover (failover.py decides, repair.py reads its facts and writes its judgement): a log store that HAKeeper
reports down and whose pod has not been ready for ``storeFailureTimeout`` is
lost; the controller replaces exactly the lost pods (``failedPodStrategy:
Delete``; the StatefulSet recreates them, with a fresh volume when the old one
is pinned to a node that is gone) or reports them for a human (``Orphan``, or
the operator's ``--no-failover``), and only while the losses are a minority of
the shard replicas: acting on a lost majority could split the Raft group, so
then it says so in a condition and an Event and waits.

Modules: ``actor`` (read: the cache, the references, HAKeeper and the failover's
facts, once), ``decide`` (the pure decision over that view), ``finalizer`` (the
finalizer's read and pure decision), ``desired`` (the objects), ``bootstrap`` (the
HAKeeper bootstrap decision), ``detached`` (the stores a taken-over LogSet keeps
itself), ``failover`` (the pure failover decision), ``stranded`` (volumes pinned to
nodes that are gone), ``repair`` (failover's facts and writes).
"""

from .actor import LogSetActor
from .failover import CONDITION as FAILOVER
from .finalizer import wrote

__all__ = ["FAILOVER", "LogSetActor", "wrote"]
