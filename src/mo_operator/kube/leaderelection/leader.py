"""Leader election on a coordination.k8s.io/v1 Lease, as client-go's
leaderelection package does it, plus a write fence.

Only the leader runs controllers. Expiry is judged by *local* observation
time (when we last saw the lease record change), not by the timestamps in the
lease, so clock skew between replicas does not matter. A leader that cannot
renew within ``renew_deadline`` steps down; since ``renew_deadline`` is
shorter than ``lease_duration``, it stops before anyone else may take over.
The fence (``may_write``) makes that hold even when the process was frozen
(SIGSTOP) past its deadline: the first check after waking says no.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from typing import Any, Protocol

from ..meta.objects import spec_of
from ..meta.times import format_micro_time
from ..metrics.metrics import LEADER_ELECTION_MASTER_STATUS

log = logging.getLogger(__name__)
Obj = dict[str, Any]


class LeaseStore(Protocol):
    """The three calls leader election needs; raise ``LeaseConflict`` on a
    409 and return None from ``get`` when the lease does not exist."""

    async def get(self, namespace: str, name: str) -> Obj | None: ...

    async def create(self, namespace: str, lease: Obj) -> Obj: ...

    async def replace(self, namespace: str, lease: Obj) -> Obj: ...


class LeaseConflict(Exception):
    """Someone else wrote the lease first (409 Conflict or AlreadyExists)."""


@dataclass(frozen=True)
class LeaderElectionConfig:
    name: str
    namespace: str
    identity: str
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0

    def __post_init__(self) -> None:
        if not self.lease_duration > self.renew_deadline > self.retry_period > 0:
            raise ValueError("need lease_duration > renew_deadline > retry_period > 0")


class LeaderElector:
    def __init__(
        self, store: LeaseStore, config: LeaderElectionConfig, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.store = store
        self.config = config
        self._clock = clock
        self._observed_record: Obj | None = None
        self._observed_at = 0.0
        self._last_renew = -1e18
        self._leading = False
        self.leadership_changes = 0

    # ------------------------------------------------------------- the fence
    @property
    def is_leader(self) -> bool:
        return self._leading

    def may_write(self) -> bool:
        """True only while leading and within the renew deadline of the last renewal."""
        return self._leading and self._clock() - self._last_renew < self.config.renew_deadline

    # ------------------------------------------------------------ the loops
    async def run(
        self,
        on_started_leading: Callable[[], Coroutine[Any, Any, None]],
        on_stopped_leading: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        """Acquire, lead until the lease is lost or we are cancelled, then release.

        ``on_started_leading`` runs while we lead and is cancelled when we stop.
        Returns when leadership is lost (the caller should exit, as
        controller-runtime does) or after release on cancellation.
        """
        await self._acquire()
        work: asyncio.Task[None] = asyncio.create_task(on_started_leading(), name="leader-work")
        renew = asyncio.create_task(self._renew_loop(), name="leader-renew")
        try:
            done, _ = await asyncio.wait({work, renew}, return_when=asyncio.FIRST_COMPLETED)
            if renew in done:
                log.error("lost leadership of lease %s/%s", self.config.namespace, self.config.name)
        finally:
            self._set_leading(False)
            for t in (work, renew):
                t.cancel()
            await asyncio.gather(work, renew, return_exceptions=True)
            if on_stopped_leading is not None:
                await on_stopped_leading()
            await self.release()  # a no-op unless we still hold it

    async def _acquire(self) -> None:
        while True:
            if await self.try_acquire_or_renew():
                log.info(
                    "acquired lease %s/%s as %s",
                    self.config.namespace,
                    self.config.name,
                    self.config.identity,
                )
                return
            await asyncio.sleep(self.config.retry_period)

    async def _renew_loop(self) -> None:
        while True:
            await asyncio.sleep(self.config.retry_period)
            deadline = self._last_renew + self.config.renew_deadline
            while True:
                if self._clock() >= deadline:
                    return  # could not renew in time: step down
                # asyncio.timeout, not wait_for: on Python 3.11 wait_for can swallow a
                # cancellation that arrives as the renewal completes, and a leader
                # told to stop would keep renewing its lease.
                try:
                    async with asyncio.timeout(max(0.01, deadline - self._clock())):
                        renewed = await self.try_acquire_or_renew()
                except TimeoutError:
                    return
                if renewed:
                    break
                await asyncio.sleep(min(self.config.retry_period, max(0.0, deadline - self._clock())))

    async def try_acquire_or_renew(self) -> bool:
        cfg = self.config
        now = self._clock()
        try:
            lease = await self.store.get(cfg.namespace, cfg.name)
        except Exception as e:
            log.warning("reading lease %s/%s failed: %s", cfg.namespace, cfg.name, e)
            return False
        spec_now = format_micro_time()
        if lease is None:
            new = {
                "apiVersion": "coordination.k8s.io/v1",
                "kind": "Lease",
                "metadata": {"name": cfg.name, "namespace": cfg.namespace},
                "spec": {
                    "holderIdentity": cfg.identity,
                    "leaseDurationSeconds": int(cfg.lease_duration),
                    "acquireTime": spec_now,
                    "renewTime": spec_now,
                    "leaseTransitions": 0,
                },
            }
            try:
                created = await self.store.create(cfg.namespace, new)
            except LeaseConflict:
                return False
            except Exception as e:
                log.warning("creating lease failed: %s", e)
                return False
            self._observe(created["spec"], now)
            self._renewed(now)
            return True
        spec = spec_of(lease)
        record = {
            k: spec.get(k)
            for k in ("holderIdentity", "renewTime", "leaseDurationSeconds", "leaseTransitions")
        }
        if record != self._observed_record:
            self._observe(record, now)
        holder = spec.get("holderIdentity") or ""
        duration = float(spec.get("leaseDurationSeconds") or cfg.lease_duration)
        if holder and holder != cfg.identity and self._observed_at + duration > now:
            self._set_leading(False)
            return False
        new_spec = dict(spec)
        if holder != cfg.identity:
            new_spec["leaseTransitions"] = int(spec.get("leaseTransitions") or 0) + 1
            new_spec["acquireTime"] = spec_now
        new_spec.update(
            holderIdentity=cfg.identity, leaseDurationSeconds=int(cfg.lease_duration), renewTime=spec_now
        )
        updated = dict(lease, spec=new_spec)
        try:
            stored = await self.store.replace(cfg.namespace, updated)
        except LeaseConflict:
            return False
        except Exception as e:
            log.warning("renewing lease failed: %s", e)
            return False
        self._observe(stored.get("spec") or new_spec, now)
        self._renewed(now)
        return True

    async def release(self) -> None:
        """Give the lease up at once so the next replica need not wait for expiry."""
        cfg = self.config
        try:
            lease = await self.store.get(cfg.namespace, cfg.name)
            if lease is None or spec_of(lease).get("holderIdentity") != cfg.identity:
                return
            spec = dict(
                lease["spec"], holderIdentity="", leaseDurationSeconds=1, renewTime=format_micro_time()
            )
            await self.store.replace(cfg.namespace, dict(lease, spec=spec))
            log.info("released lease %s/%s", cfg.namespace, cfg.name)
        except Exception as e:  # best effort: the lease expires anyway
            log.warning("releasing lease failed: %s", e)

    # ------------------------------------------------------------- helpers
    def _observe(self, record: Obj, now: float) -> None:
        self._observed_record = {
            k: record.get(k)
            for k in ("holderIdentity", "renewTime", "leaseDurationSeconds", "leaseTransitions")
        }
        self._observed_at = now

    def _renewed(self, now: float) -> None:
        self._last_renew = now
        self._set_leading(True)

    def _set_leading(self, leading: bool) -> None:
        if leading != self._leading:
            self.leadership_changes += 1
        self._leading = leading
        LEADER_ELECTION_MASTER_STATUS.labels(self.config.name).set(1 if leading else 0)
