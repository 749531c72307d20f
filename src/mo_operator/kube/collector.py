"""Pausing Python's cyclic garbage collector around bursts of acyclic allocation.

Decoding a page of a list and freezing it into the cache allocate hundreds of
thousands of dicts, lists and strings, and every few hundred allocations count
towards a collection. The collections they trigger walk young generations made
of nothing but JSON, which holds no cycles to find, and the older generations
that keep growing with the cache: decoding a 3 MB page of pods took four times
as long with the collector on as with it off (``bench/operator_cold_start.py``
profiles). Pausing it for the burst finds the same garbage later, at one
collection instead of many.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """No cyclic collection inside the block. The block must not await, so
    nothing else runs while the collector is off; a collector already off
    (an outer pause, or a process that turned it off) stays off."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
