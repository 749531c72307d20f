"""Fault hooks and the request log, for tests and benchmarks only.

They let a test make the server misbehave the ways a real one does under
load or failure (errors, throttling, slow answers, dropped, expired or
silently stalled watches) and count the writes a client made.
"""

from __future__ import annotations

import asyncio
import collections
import time
from dataclasses import dataclass, field

from .errors import StatusError, internal, too_many_requests


@dataclass
class RequestRecord:
    time: float
    verb: str
    resource: str
    namespace: str
    name: str
    subresource: str
    user_agent: str
    field_manager: str
    code: int

    @property
    def is_write(self) -> bool:
        return self.verb in ("create", "update", "patch", "delete", "deletecollection")


@dataclass
class Faults:
    fail_count: int = 0
    fail_code: int = 500
    retry_after: int = 1
    hang: bool = False  # make failing requests time out instead of answering
    delay: float = 0.0
    match_user_agent: str = ""  # only requests whose User-Agent contains this fail
    refused: dict[str, str] = field(default_factory=dict)
    """Resource (plural) → the message of the 422 every write of it gets (``refuse_writes``)."""
    log: collections.deque[RequestRecord] = field(default_factory=lambda: collections.deque(maxlen=200_000))

    def fail_next(
        self, count: int, code: int = 500, *, retry_after: int = 1, hang: bool = False, user_agent: str = ""
    ) -> None:
        self.fail_count, self.fail_code, self.retry_after, self.hang = count, code, retry_after, hang
        self.match_user_agent = user_agent

    def refuse_writes(self, resource: str, message: str | None) -> None:
        """Answer every create, update and patch of ``resource`` (a plural such as
        ``services``) 422 Invalid with ``message``, as an admission webhook or a
        validation rule refuses them; None lifts it. Reads and watches are served."""
        if message is None:
            self.refused.pop(resource, None)
        else:
            self.refused[resource] = message

    async def before(self, user_agent: str, method: str = "GET", path: str = "") -> None:
        if self.delay:
            await asyncio.sleep(self.delay)
        if self.refused and method in ("POST", "PUT", "PATCH"):
            for resource, message in self.refused.items():
                if f"/{resource}" in path.split("?")[0]:
                    raise StatusError(422, "Invalid", message)
        if self.fail_count > 0 and (not self.match_user_agent or self.match_user_agent in user_agent):
            self.fail_count -= 1
            if self.hang:
                await asyncio.sleep(3600)
            raise self._error()

    def _error(self) -> StatusError:
        if self.fail_code == 429:
            return too_many_requests(self.retry_after)
        if self.fail_code == 500:
            return internal("injected fault")
        return StatusError(
            self.fail_code,
            "ServiceUnavailable" if self.fail_code == 503 else "InternalError",
            "injected fault",
        )

    def record(self, rec: RequestRecord) -> None:
        self.log.append(rec)

    def writes(
        self, *, user_agent: str = "", field_manager: str = "", since: float = 0.0
    ) -> list[RequestRecord]:
        return [
            r
            for r in self.log
            if r.is_write
            and r.time >= since
            and user_agent in r.user_agent
            and field_manager in r.field_manager
        ]


def now() -> float:
    return time.time()
