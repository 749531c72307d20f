"""The CNSet controller (``actor``), its pod decisions (``scaling``), pods
(``pods``) and the finalizer of CN stores (``store_finalizer``)."""

from .actor import CNSetActor
from .store_finalizer import CNStoreFinalizer

__all__ = ["CNSetActor", "CNStoreFinalizer"]
