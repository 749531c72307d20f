"""Taking over a cluster the Go operator built (OpenKruise workloads) without downtime.

``kruise`` names upstream's workloads; ``preflight`` decides, per set, whether
a takeover is safe (the dry run); ``steps`` decides the next step of a
takeover from the current state, for both of its drivers: ``takeover`` (the
``mo-operator adopt`` loop, and the one write of each step) and ``guard``,
which keeps each set's controller off a set Kruise runs, or, when the set is
opted in (``optin``), takes it over from the cache (``cached``) one step per
reconcile.
"""

from .guard import KruiseGuard

__all__ = ["KruiseGuard"]
