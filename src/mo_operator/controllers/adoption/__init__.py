"""Taking over a cluster the Go operator built (OpenKruise workloads) without downtime.

``kruise`` names upstream's workloads; ``guard`` keeps our controllers off a
set Kruise still runs; ``preflight`` decides, per set, whether a takeover is
safe (the dry run); ``takeover`` carries it out, set by set, in dependency order.
"""

from .guard import KruiseGuard

__all__ = ["KruiseGuard"]
