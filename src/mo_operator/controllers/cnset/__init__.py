"""The CNSet controller (``actor``, over one round's ``observed`` state), its pod
decisions (``scaling``), pods (``pods``), draining (``drain``) with lock-table
migration (``locks``), the CN stores in HAKeeper (``stores``) and the load
recorded on their pods (``stats``), the pods a CNPool hands out (``pooling``) and
the finalizer that removes a gone pod's store (``store_finalizer``)."""

from .actor import CNSetActor
from .store_finalizer import CNStoreFinalizer

__all__ = ["CNSetActor", "CNStoreFinalizer"]
