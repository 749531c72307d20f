"""The CNSet controller (``actor``), its pod decisions (``scaling``), pods
(``pods``), draining (``drain``), the CN stores in HAKeeper (``stores``), the
pods a CNPool hands out (``pooling``) and the finalizer that removes a gone
pod's store (``store_finalizer``)."""

from .actor import CNSetActor
from .store_finalizer import CNStoreFinalizer

__all__ = ["CNSetActor", "CNStoreFinalizer"]
