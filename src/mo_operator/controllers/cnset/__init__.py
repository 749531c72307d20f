"""The CNSet controller: the actor (``actor``) reads a round once into a view
(``observed``; MatrixOne's answers through ``reads``), decides purely one plan
(``decide``: the objects its pods share, ``shared``, and its claims, ``claims``; its
pods through ``scaling`` or ``pooling``, draining through ``drain`` with
lock-table migration in ``locks``, the CN stores in HAKeeper through ``stores``, the
load recorded on their pods through ``stats``) and reports (``report``); the pods
(``pods``), and the finalizer that removes a gone pod's store (``store_finalizer``)."""

from .actor import CNSetActor
from .store_finalizer import CNStoreFinalizer

__all__ = ["CNSetActor", "CNStoreFinalizer"]
