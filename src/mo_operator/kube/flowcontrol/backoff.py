"""Exponential backoff with jitter, for everything that retries against the
API server (informers re-listing, the client, the event writer).

Modelled on apimachinery's ``wait.Backoff`` (initial duration, factor, cap,
jitter) with one deliberate difference: jitter *shortens* a delay instead of
lengthening it. client-go's ``Jitter`` adds up to ``jitter * d`` and so can
overshoot the cap; taking it off instead keeps every delay within the cap
while still spreading clients out once they all sit at the cap, which is
where a fleet of operators restarted together would otherwise retry in
lock-step.
"""

from __future__ import annotations

import random


class Backoff:
    """Delays ``initial, initial*factor, ...`` up to ``cap``, each reduced by
    a random fraction of at most ``jitter`` (0 = exact, 1 = anywhere in
    ``[0, d]``).

    Not shared between independent retry loops: each loop owns one and calls
    ``reset()`` after a success, so a healthy period forgets past failures.
    """

    def __init__(
        self,
        initial: float,
        cap: float,
        factor: float = 2.0,
        jitter: float = 0.0,
        *,
        rng: random.Random | None = None,
    ) -> None:
        if initial <= 0:
            raise ValueError("initial must be positive")
        if cap < initial:
            raise ValueError("cap must be at least initial")
        if factor < 1:
            raise ValueError("factor must be at least 1")
        if not 0 <= jitter <= 1:
            raise ValueError("jitter must be between 0 and 1")
        self.initial = initial
        self.cap = cap
        self.factor = factor
        self.jitter = jitter
        self._rng = rng or random.Random()
        self._current = initial
        self._attempts = 0

    @property
    def attempts(self) -> int:
        """How many delays were handed out since the last reset."""
        return self._attempts

    def next(self) -> float:
        """The delay before the next try; grows the one after it."""
        delay = self._current
        self._current = min(self.cap, self._current * self.factor)
        self._attempts += 1
        if self.jitter:
            delay *= 1.0 - self.jitter * self._rng.random()
        return delay

    def reset(self) -> None:
        self._current = self.initial
        self._attempts = 0
