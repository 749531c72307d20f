"""How a set says that its calls to MatrixOne fail, telling the three ways apart
(``matrixone.admin.Failure``):

- MatrixOne answered "not yet" (no HAKeeper yet, not bootstrapped, no quorum): the set
  waits, and its condition says what for;
- MatrixOne does not answer (refused, reset, a name that does not resolve, the
  deadline): the set waits too, as the Go operator would, and once that lasted longer
  than ``Settings.rpc_patience_seconds`` its condition says so, naming the address and
  the last error, with a Warning (``UNREACHABLE``);
- the operator's own client is at fault (an answer it cannot decode, ``ErrNotSupported``
  for a call MatrixOne knows): waiting does not help, so the condition says so at once,
  with a Warning (``CLIENT_FAULT``), and the set falls back where it can.

The Warning is the framework's: one Event when the condition turns to such a reason
(``kube/controller/status_policy.py``), not one per round.
"""

from __future__ import annotations

from dataclasses import dataclass

from mo_operator.matrixone.admin import AdminError, Failure, failure_of

WAITING = "WaitingForMatrixOne"
"""MatrixOne does not answer yet, for less than the patience."""
UNREACHABLE = "MatrixOneUnreachable"
"""MatrixOne has not answered for longer than the patience."""
CLIENT_FAULT = "MatrixOneClientFault"
"""The operator's client cannot use MatrixOne's answers."""
WARNING_REASONS = frozenset({UNREACHABLE, CLIENT_FAULT})


@dataclass(frozen=True)
class Trouble:
    """A failed call, judged: the condition's reason and message, and the class."""

    failure: Failure
    reason: str
    message: str

    @property
    def client_fault(self) -> bool:
        return self.failure is Failure.CLIENT_FAULT


class Patience:
    """Since when the calls of each object have gone unanswered (in memory: a restarted
    operator is patient again)."""

    def __init__(self) -> None:
        self._since: dict[tuple[str, str], float] = {}

    def answered(self, key: tuple[str, str]) -> None:
        self._since.pop(key, None)

    def unanswered(self, key: tuple[str, str], now: float) -> float:
        """Seconds the object's calls have gone unanswered, counting this one."""
        return now - self._since.setdefault(key, now)


def judge(
    error: AdminError,
    what: str,
    *,
    not_yet: str,
    waited: float,
    patience: float,
) -> Trouble:
    """The condition for a call about ``what`` (e.g. "HAKeeper at <address>") that failed
    with ``error``; ``not_yet`` is the reason for MatrixOne's own "not yet", ``waited``
    how long the object's calls have gone unanswered."""
    failure = failure_of(error)
    if failure is Failure.CLIENT_FAULT:
        return Trouble(
            failure,
            CLIENT_FAULT,
            f"the operator cannot use the answer of {what}: {error}; this is the operator's fault, "
            "not MatrixOne's: please report it",
        )
    if failure is Failure.UNREACHABLE:
        if waited >= patience:
            return Trouble(
                failure, UNREACHABLE, f"{what} has not answered for more than {int(patience)}s: {error}"
            )
        return Trouble(failure, WAITING, f"waiting for {what} to answer: {error}")
    return Trouble(failure, not_yet, f"{what} is not ready yet: {error}")
