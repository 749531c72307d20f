"""The MatrixOneCluster controller (``actor``) and the child sets it asks for (``children``)."""

from .actor import MatrixOneClusterActor

__all__ = ["MatrixOneClusterActor"]
