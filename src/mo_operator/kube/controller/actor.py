"""The Actor framework: a kind's logic is an Actor with
``observe(ctx) -> action | None`` and ``finalize(ctx) -> done``; this module
does everything around it that every controller would otherwise repeat.

- the finalizer is added before the first observe and removed when
  ``finalize`` reports done; a kind with nothing to finalize (its children go by
  owner references) is given none, and one it carries from elsewhere (an older
  version, another operator of the same kind) is removed on deletion all the same;
- ``status.observedGeneration`` and conditions are kept, written through
  ``/status`` only when they changed (``lastTransitionTime`` moves only when
  a condition's status does); a status written but not yet back through the
  cache is remembered, so it is neither written nor announced twice, nor
  mistaken for the older one the cache still shows;
- non-urgent status changes are coalesced, one write per window per object,
  and one Event per meaningful transition (``status_policy.py``);
- ``Synced`` goes False while the current generation is being applied and
  True once it was; corrections made later for the same generation leave it
  True, so it does not flap with every write the object needs;
- every log line carries kind, namespace, name and a reconcile id;
- terminal errors (a bad spec) become a ``Synced=False`` condition and a
  Warning Event with no retry until the object changes; any other failure of a
  reconcile (an API server refusing a write, a bug) becomes ``Synced=False``
  with reason ``ReconcileError`` and the error as message, one Warning Event and
  one log line with its traceback per distinct error of an object (a retry that
  fails the same way only logs a line), and is retried with backoff; a
  conflict or throttling (409, 429) is only retried, it is how optimistic
  concurrency and rate limits work;
- a pause annotation stops all writes for that object;
- observation and action are separate: ``observe`` reads the cache once and
  decides, the returned action writes.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..cache.reads import CacheNotSynced
from ..meta.conditions import get_condition, lead_with, set_condition
from ..meta.errors import ApiError, NotFound
from ..meta.objects import meta_of, spec_of, status_of
from ..meta.times import now_time
from .controller import ReportedError, Request, Result
from .outcome import Later, Requeue, TerminalError, Wait, current_reconcile_id, routine, sooner
from .status_policy import StatusWindow, announcements, urgent

log = logging.getLogger(__name__)
Obj = dict[str, Any]

#: Condition types every kind carries.
READY = "Ready"
SYNCED = "Synced"
RECONCILE_ERROR = "ReconcileError"
"""Reason of ``Synced=False`` (and of the Warning Event) when a reconcile failed."""
MAX_MESSAGE = 1024
"""Characters of an error kept in a condition or an Event."""


class Writer(Protocol):
    """The writes the framework makes on the reconciled object."""

    async def merge_patch(self, namespace: str, name: str, patch: Obj) -> Obj: ...

    async def patch_status(self, namespace: str, name: str, status: Obj) -> Obj: ...


class Recorder(Protocol):
    def event(self, obj: Mapping[str, Any], type: str, reason: str, message: str) -> None: ...


Action = Callable[["Context"], Awaitable[None]]


@dataclass
class Context:
    """What an Actor sees: the cached object, its status draft, helpers."""

    obj: Mapping[str, Any]
    reconcile_id: str
    log: logging.LoggerAdapter[logging.Logger]
    recorder: Recorder
    status: Obj = field(default_factory=dict)
    later: Later | None = None
    """When to look again without a change, and why (the soonest asked)."""

    @property
    def namespace(self) -> str:
        return meta_of(self.obj).namespace

    @property
    def name(self) -> str:
        return str(self.obj["metadata"]["name"])

    @property
    def generation(self) -> int:
        return meta_of(self.obj).generation

    @property
    def spec(self) -> Mapping[str, Any]:
        return spec_of(self.obj)

    def event(self, type: str, reason: str, message: str) -> None:
        self.recorder.event(self.obj, type, reason, message)

    def set_condition(self, type: str, status: bool | str, reason: str, message: str = "") -> None:
        value = status if isinstance(status, str) else ("True" if status else "False")
        self.status["conditions"] = set_condition(
            list(self.status.get("conditions") or []),
            {
                "type": type,
                "status": value,
                "reason": reason,
                "message": message,
                "observedGeneration": self.generation,
            },
            now=now_time(),
        )

    def condition(self, type: str) -> Mapping[str, Any] | None:
        """The condition ``type`` of the status draft: as last written, or as this
        reconcile set it."""
        return get_condition(self.status.get("conditions") or (), type)

    @property
    def requeue_after(self) -> float | None:
        return self.later.after if self.later is not None else None

    def requeue(self, after: float, reason: str = "") -> None:
        """Look again after ``after`` seconds for ``reason`` (a poll, a deadline; the
        soonest asked wins)."""
        self.later = sooner(self.later, Requeue(after, reason))

    def wait(self, after: float, reason: str) -> None:
        """Look again after ``after`` seconds: waiting for ``reason`` (pods, MatrixOne)."""
        self.later = sooner(self.later, Wait(after, reason))


class Actor(Protocol):
    async def observe(self, ctx: Context) -> Action | None: ...

    async def finalize(self, ctx: Context) -> bool: ...


class ObjectLogger(logging.LoggerAdapter[logging.Logger]):
    """Every line names the object and the reconcile: the object as a prefix for
    people, both as structured fields for JSON logs (the text format shows the
    reconcile's id on every line written during it, ours or not)."""

    def process(self, msg: Any, kwargs: Any) -> tuple[Any, Any]:
        extra = self.extra or {}
        prefix = f"{extra.get('kind')} {extra.get('namespace')}/{extra.get('objectName')}"
        kwargs["extra"] = {**extra, **(kwargs.get("extra") or {})}
        return f"{prefix}: {msg}", kwargs


class ActorReconciler:
    """Turns an Actor into a controller's reconcile function."""

    def __init__(
        self,
        *,
        kind: str,
        actor: Actor,
        get: Callable[[Request], Mapping[str, Any] | None],
        writer: Writer,
        recorder: Recorder,
        finalizer: str,
        pause_annotation: str,
        progress_requeue: float = 2.0,
        warning_reasons: frozenset[str] = frozenset(),
        status_window: StatusWindow | None = None,
        adds_finalizer: bool = True,
        quiet_fields: frozenset[str] = frozenset(),
        leading_conditions: tuple[str, ...] = (),
    ) -> None:
        """``warning_reasons``: condition reasons announced as Warning Events (the others
        as Normal ones). ``status_window``: how non-urgent status writes are spaced
        (default: ``status_policy.DEFAULT_WINDOW``). ``adds_finalizer``: False for a kind
        whose deletion waits for nothing (``finalize`` has no work): an object then
        costs no finalizer write and no round trip before its first observe, and
        ``finalizer`` is only removed where found. ``quiet_fields``: top-level status
        fields that only report (nothing waits for them to appear), whose appearing is
        written with the next write rather than at once. ``leading_conditions``: condition
        types always written first, in this order (``conditions.lead_with``)."""
        self.kind = kind
        self.actor = actor
        self.get = get
        self.writer = writer
        self.recorder = recorder
        self.finalizer = finalizer
        self.pause_annotation = pause_annotation
        self.adds_finalizer = adds_finalizer
        self.progress_requeue = progress_requeue
        self.warning_reasons = warning_reasons
        self.quiet_fields = quiet_fields
        self.leading_conditions = leading_conditions
        self._written: dict[tuple[str, str], _WrittenStatus] = {}
        self._failing: dict[tuple[str, str], str] = {}
        """The last error of each object whose reconciles fail, until one succeeds."""
        self.status_window = status_window or StatusWindow()
        self._held: set[tuple[str, str]] = set()

    @property
    def holding(self) -> bool:
        """Some object's status change is held back by the window (its requeue will
        write it): the operator is not done converging even when its queues are empty."""
        return bool(self._held)

    def _known_status(self, req: Request, cached: Mapping[str, Any]) -> Obj:
        """The object's status as the server holds it, as far as we know.

        That is the cached one, unless we wrote a status since the cache took this
        version of the object, or the cache holds a version older than the one our
        write made (another write, a finalizer or an annotation, landed just before
        ours): the cache has not caught up, and the server holds ours.
        """
        meta = meta_of(cached)
        key = (req.namespace, req.name)
        written = self._written.get(key)
        version = (meta.uid, meta.resource_version)
        if written is not None and (
            (written.uid, written.based_on) == version
            or (written.uid == version[0] and _older(version[1], written.made))
        ):
            source: Mapping[str, Any] = written.status
        else:
            self._written.pop(key, None)  # the cache moved on: only writes in flight are kept
            source = status_of(cached)
        status: Obj = _plain(source)
        return status

    async def __call__(self, req: Request) -> Result | None:
        cached = self.get(req)
        if cached is None:
            self._written.pop((req.namespace, req.name), None)
            self._failing.pop((req.namespace, req.name), None)
            self.status_window.forget((req.namespace, req.name))
            self._held.discard((req.namespace, req.name))
            return None  # gone: its children go by owner references
        rid = current_reconcile_id()
        logger = ObjectLogger(
            log, {"kind": self.kind, "namespace": req.namespace, "objectName": req.name, "reconcileID": rid}
        )
        if meta_of(cached).annotations.get(self.pause_annotation, "") in ("true", "True", "1"):
            logger.debug("paused by annotation %s", self.pause_annotation)
            return None
        known = self._known_status(req, cached)
        ctx = Context(cached, rid, logger, self.recorder, status=_plain(known))
        try:
            result = await self._reconcile(req, cached, ctx, known)
        except (asyncio.CancelledError, CacheNotSynced):
            raise
        except Exception as e:
            if routine(e):
                raise
            await self._report_failure(req, cached, known, ctx, e)
            raise ReportedError(str(e)) from e
        self._failing.pop((req.namespace, req.name), None)
        return result

    async def _reconcile(
        self, req: Request, cached: Mapping[str, Any], ctx: Context, known: Obj
    ) -> Result | None:
        meta, logger = cached["metadata"], ctx.log
        finalizers = list(meta.get("finalizers") or [])
        if meta.get("deletionTimestamp"):
            if self.finalizer not in finalizers:
                return None
            if await self.actor.finalize(ctx):
                # NotFound: an earlier round removed our finalizer, and the cache had
                # not seen the object go.
                with contextlib.suppress(NotFound):
                    await self.writer.merge_patch(
                        req.namespace,
                        req.name,
                        {
                            "metadata": {
                                "finalizers": [f for f in finalizers if f != self.finalizer] or None,
                                "resourceVersion": meta["resourceVersion"],
                            }
                        },
                    )
                logger.info("finalized")
                return None
            return self._progress(ctx, "the finalizer's work to finish")
        if self.adds_finalizer and self.finalizer not in finalizers:
            with contextlib.suppress(NotFound):  # deleted meanwhile: nothing left to guard
                await self.writer.merge_patch(
                    req.namespace,
                    req.name,
                    {
                        "metadata": {
                            "finalizers": [*finalizers, self.finalizer],
                            "resourceVersion": meta["resourceVersion"],
                        }
                    },
                )
            return None  # the update event brings us back with the finalizer in place
        try:
            action = await self.actor.observe(ctx)
        except TerminalError as e:
            ctx.later = None  # no retry until the object changes, unless the window holds the write
            ctx.set_condition(SYNCED, False, e.reason, e.message)
            ctx.set_condition(READY, False, e.reason, e.message)
            await self._write_status(ctx, req, cached, known, warnings=frozenset({e.reason}))
            logger.warning("cannot reconcile: %s", e.message)
            return _requeue(ctx.later)
        if action is not None:
            await action(ctx)
            synced = _synced_condition(known, ctx.generation)
            if synced is None or synced.get("reason") == RECONCILE_ERROR:
                ctx.set_condition(SYNCED, False, "Progressing", _describe(action))
            await self._write_status(ctx, req, cached, known)
            return self._progress(ctx, "the plan's writes to take effect")
        ctx.set_condition(SYNCED, True, "Synced", "the observed state matches the spec")
        await self._write_status(ctx, req, cached, known)
        return _requeue(ctx.later)

    def _progress(self, ctx: Context, what: str) -> Result:
        """After work: as the actor asked, else soon (``progress_requeue``), waiting for ``what``."""
        later = ctx.later if ctx.later is not None and ctx.later.after else Wait(self.progress_requeue, what)
        return Result(requeue_after=later.after, later=later)

    async def _report_failure(
        self, req: Request, cached: Mapping[str, Any], known: Obj, ctx: Context, error: Exception
    ) -> None:
        """``Synced=False`` with the error over the status the server holds (whatever the
        failed round had drafted is dropped), and, the first time an object fails this
        way, a Warning Event and the traceback."""
        message = _clip(str(error) if isinstance(error, ApiError) else f"{type(error).__name__}: {error}")
        key = (req.namespace, req.name)
        again = self._failing.get(key) == message
        self._failing[key] = message
        if again:
            ctx.log.warning("reconcile failed again, will retry: %s", message)
        else:
            ctx.log.error(
                "reconcile failed, will retry: %s",
                message,
                exc_info=None if isinstance(error, ApiError | ConnectionError | TimeoutError) else error,
            )
            ctx.event("Warning", RECONCILE_ERROR, message)
        failed = Context(cached, ctx.reconcile_id, ctx.log, self.recorder, status=_plain(known))
        failed.set_condition(SYNCED, False, RECONCILE_ERROR, message)
        try:
            await self._write_status(failed, req, cached, known, warnings=frozenset({RECONCILE_ERROR}))
        except Exception as e:  # the API server that refused the write may refuse this one too
            ctx.log.debug("could not record the failure in the status: %s", e)

    async def _write_status(
        self,
        ctx: Context,
        req: Request,
        cached: Mapping[str, Any],
        current: Obj,
        *,
        warnings: frozenset[str] = frozenset(),
    ) -> bool:
        """Write the status if it differs from ``current`` (the server's, as far as we
        know) and the status window lets it (else look again when it does), then
        announce the transition as Events (``status_policy.announcements``: ``kubectl
        describe`` then tells what happened, Day-2 operations included). Synced is
        never announced: the other conditions say what it would."""
        ctx.status["observedGeneration"] = ctx.generation
        if self.leading_conditions and ctx.status.get("conditions"):
            ctx.status["conditions"] = lead_with(ctx.status["conditions"], self.leading_conditions)
        key = (req.namespace, req.name)
        if ctx.status == current:
            self._held.discard(key)
            self.status_window.unchanged(key)
            return False
        trouble = warnings | self.warning_reasons
        is_urgent = urgent(current, ctx.status, trouble, self.quiet_fields) or _failure_news(
            current, ctx.status
        )
        hold = self.status_window.wait(key, is_urgent)
        if hold > 0:
            ctx.requeue(hold, "a status change held back by the status window")
            self._held.add(key)
            return False
        self._held.discard(key)
        meta = cached["metadata"]
        try:
            answer = await self.writer.patch_status(meta.get("namespace") or "", meta["name"], ctx.status)
        except NotFound:
            # Deleted since the cache showed it (a finalizer just removed): its deletion
            # event ends the matter, and a retry would only fail the same way.
            ctx.log.debug("gone before its status was written")
            return False
        self.status_window.wrote(key, is_urgent)
        made = (answer.get("metadata") or {}).get("resourceVersion") if isinstance(answer, Mapping) else None
        self._written[key] = _WrittenStatus(
            str(meta.get("uid") or ""),
            str(meta.get("resourceVersion") or ""),
            _plain(ctx.status),
            str(made or ""),
        )
        served = self.status_window.has_served(key, current, ctx.generation)
        for warning, condition in announcements(
            current, ctx.status, skip={SYNCED}, warnings=trouble, served=served
        ):
            reason = str(condition.get("reason") or condition["type"])
            ctx.event(
                "Warning" if warning else "Normal",
                reason,
                str(condition.get("message") or f"{condition['type']} is {condition['status']}"),
            )
        return True


@dataclass(frozen=True)
class _WrittenStatus:
    """The last status we wrote on an object, and the version of it the cache then held."""

    uid: str
    based_on: str
    status: Obj
    made: str = ""
    """The version our write made, as the server answered ("" if it did not say)."""


def _older(version: str, than: str) -> bool:
    """``version`` precedes ``than``. Resource versions are opaque to clients, but
    both servers we speak to (etcd's revision, the embedded store's counter) give
    integers that grow with every write; anything else compares as not older."""
    try:
        return int(version) < int(than)
    except ValueError:
        return False


def _requeue(later: Later | None) -> Result | None:
    return Result(requeue_after=later.after, later=later) if later is not None else None


def _synced_condition(status: Mapping[str, Any], generation: int) -> Mapping[str, Any] | None:
    """``Synced`` as it stands for ``generation``: True once it was applied in full;
    False while it is being applied (its message then names the first step, not
    each one: a new message per step would be a status write per step) or when a
    reconcile failed; None when it says nothing of this generation."""
    for condition in status.get("conditions") or ():
        if condition.get("type") == SYNCED and condition.get("observedGeneration") == generation:
            found: Mapping[str, Any] = condition
            return found
    return None


def _failure_news(before: Mapping[str, Any], after: Mapping[str, Any]) -> bool:
    """``Synced`` enters or leaves ``ReconcileError``, or names another error: the one
    waiting to read why the reconciles fail, or that they work again, reads it now."""

    def synced(status: Mapping[str, Any]) -> tuple[Any, Any]:
        found = _synced_condition(status, int(status.get("observedGeneration") or 0)) or {}
        return found.get("reason"), found.get("message")

    was, now = synced(before), synced(after)
    return was != now and RECONCILE_ERROR in (was[0], now[0])


def _clip(text: str) -> str:
    return text if len(text) <= MAX_MESSAGE else text[:MAX_MESSAGE] + "... (truncated)"


def _describe(action: Action) -> str:
    """An action's ``description`` (e.g. a plan of writes), else its docstring."""
    return str(getattr(action, "description", None) or getattr(action, "__doc__", None) or "applying changes")


def _plain(value: Any) -> Any:
    """A mutable deep copy of a (possibly read-only) cached value."""
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value
