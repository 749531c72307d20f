"""What a differential case runs against, and how its transcript is compared.

A ``Target`` is one API server (the embedded one or a real kube-apiserver)
reached through raw HTTP, so that status codes and ``Status`` bodies are seen
exactly, and through the project's own ``ApiClient``, as the operator sees
them. Both targets of a pair share the namespace name and the ``tag`` that
cluster-scoped names carry, so the transcripts mention the same names.

A case records what it observed in a ``Transcript``; ``normalise`` then
replaces what legitimately differs between two servers (uids, timestamps,
resourceVersion values, generated name suffixes, allocated cluster IPs,
continue tokens) with stable tokens, numbered in order of appearance, so that
"the same version twice" or "the owner's uid" still compare.
"""

from __future__ import annotations

import asyncio
import contextlib
import difflib
import json
import re
import ssl
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import aiohttp

from mo_operator.kube.client.client import ApiClient

from ..apiserver.raw_http import RawClient, Reply

Obj = dict[str, Any]

USER_AGENT = "differential/1.0"
"""Both servers name the default field manager after the User-Agent's product."""

MERGE = "application/merge-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"
JSON_PATCH = "application/json-patch+json"
APPLY = "application/apply-patch+yaml"
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"

_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_API_ACCESS_VOLUME = re.compile(r"kube-api-access-[a-z0-9]{5}")
_TIME_KEYS = frozenset(
    (
        "creationTimestamp",
        "deletionTimestamp",
        "time",
        "lastTransitionTime",
        "lastUpdateTime",
        "lastProbeTime",
        "startTime",
    )
)


class Target(RawClient):
    """One API server, as a case sees it: raw HTTP (exact codes and
    ``Status`` bodies) and the project's ``ApiClient`` (what the operator sees)."""

    def __init__(
        self,
        name: str,
        base: str,
        session: aiohttp.ClientSession,
        tls: ssl.SSLContext,
        token: str,
        ns: str,
        tag: str,
        client: ApiClient,
    ) -> None:
        super().__init__(base, session, tls, token, USER_AGENT)
        self.name = name
        self.ns = ns
        self.tag = tag
        self.client = client
        #: Paths of cluster-scoped objects to delete from the real server afterwards.
        self.cleanup: list[str] = []

    async def apply(self, path: str, body: Any, manager: str, *, force: bool = False, **kw: Any) -> Reply:
        params = {"fieldManager": manager, **({"force": "true"} if force else {}), **kw.pop("params", {})}
        return await self.request("PATCH", path, body, content_type=APPLY, params=params, **kw)

    def ns_path(self, resource: str, name: str = "", *, group: str = "", version: str = "v1") -> str:
        """The URL path of a namespaced resource (or one object) in this case's namespace."""
        prefix = f"/apis/{group}/{version}" if group else f"/api/{version}"
        path = f"{prefix}/namespaces/{self.ns}/{resource}"
        return f"{path}/{name}" if name else path

    async def expire_history(self) -> None:
        """Make every version before now too old to watch from. The embedded
        server keeps a bounded history that a test hook empties;
        kube-apiserver's watch cache of a custom resource begins when its
        CRD is served, after any version a case names as old, so it needs
        nothing."""
        if self.name == "embedded":
            reply = await self.post("/localcluster/faults/expire-history", None)
            assert reply.code == 200, reply

    async def wait_for(self, check: Callable[[], Awaitable[Any]], what: str, timeout: float = 30.0) -> Any:
        """Poll ``check`` until it returns a true value, which is returned: GC,
        namespace deletion and CRD establishment are asynchronous on both sides."""
        deadline = time.monotonic() + timeout
        while True:
            value = await check()
            if value:
                return value
            if time.monotonic() > deadline:
                raise AssertionError(f"{self.name}: timed out after {timeout} s waiting until {what}")
            await asyncio.sleep(0.05)

    async def gone(self, path: str, timeout: float = 30.0) -> None:
        """Wait until GET ``path`` answers 404."""

        async def check() -> bool:
            return (await self.get(path)).code == 404

        await self.wait_for(check, f"{path} is gone", timeout)

    @contextlib.asynccontextmanager
    async def watch(self, path: str, params: dict[str, str]) -> AsyncIterator[Watch]:
        """A watch read in the background; leave the block to close it."""
        w = Watch(self, path, params)
        w.task = asyncio.create_task(w.read())
        try:
            yield w
        finally:
            w.task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await w.task


@dataclass
class Watch:
    """The events of one watch stream as they arrive, and whether it ended."""

    target: Target
    path: str
    params: dict[str, str]
    events: list[Obj] = field(default_factory=list)
    arrivals: list[float] = field(default_factory=list)
    """Seconds from the request to each event."""
    code: int | None = None
    ended: bool = False
    task: asyncio.Task[None] | None = None
    _changed: asyncio.Event = field(default_factory=asyncio.Event)

    async def read(self) -> None:
        t = self.target
        params = dict(self.params, watch="true")
        started = time.monotonic()
        try:
            async with t.session.get(
                t.base + self.path, params=params, headers=t.headers(), ssl=t.ssl
            ) as resp:
                self.code = resp.status
                if resp.status != 200:
                    self.events.append({"status": json.loads(await resp.text())})
                    return
                async for line in resp.content:
                    if line.strip():
                        self.events.append(json.loads(line))
                        self.arrivals.append(time.monotonic() - started)
                        self._changed.set()
        finally:
            self.ended = True
            self._changed.set()

    async def until(self, done: Callable[[list[Obj]], bool], timeout: float = 15.0) -> list[Obj]:
        """The events once ``done(events)`` holds or the stream ended; a
        timeout returns what arrived, and the comparison shows what is missing."""
        deadline = time.monotonic() + timeout
        while not done(self.events) and not self.ended:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            self._changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._changed.wait(), left)
        return list(self.events)

    async def count(self, n: int, timeout: float = 15.0) -> list[Obj]:
        return await self.until(lambda events: len(events) >= n, timeout)


class Transcript:
    """What a case observed, step by step."""

    def __init__(self) -> None:
        self.steps: list[tuple[str, Any]] = []

    def add(self, label: str, value: Any) -> None:
        if isinstance(value, Reply):
            value = value.record()
        self.steps.append((label, value))


Case = Callable[[Target], Awaitable[Transcript]]


class _Tokens:
    """Stable names for values that differ between servers, by first appearance."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.seen: dict[str, str] = {}

    def __call__(self, value: str) -> str:
        return self.seen.setdefault(value, f"<{self.prefix}{len(self.seen) + 1}>")


def normalise(transcript: Transcript) -> list[Any]:
    """The transcript with what may differ between servers replaced by tokens.

    Dict keys are walked in sorted order, so tokens are numbered the same
    whatever order a server writes its fields in."""
    uids = _Tokens("uid")
    rvs = _Tokens("rv")

    def text(s: str) -> str:
        s = _UUID.sub(lambda m: uids(m.group(0)), s)
        return _API_ACCESS_VOLUME.sub("kube-api-access-<random>", s)

    def walk(value: Any) -> Any:
        if isinstance(value, dict):
            if value.get("kind") == "Status" and value.get("status") == "Failure":
                value = _status_shape(value)
            out: Obj = {}
            for key in sorted(value):
                v = value[key]
                if key == "creationTimestamp" and v is None:
                    # Go writes a zero time as null (an embedded ObjectMeta
                    # in a template, a bookmark); JSON clients read null and
                    # absent alike.
                    continue
                if key == "resourceVersion" and isinstance(v, str) and v:
                    out[key] = rvs(v)
                elif key in _TIME_KEYS and isinstance(v, str):
                    out[key] = "<time>"
                elif key == "continue" and isinstance(v, str) and v:
                    out[key] = "<continue>"
                elif key == "clusterIP" and isinstance(v, str) and v != "None":
                    out[key] = "<ip>"
                elif key == "clusterIPs" and isinstance(v, list):
                    out[key] = ["<ip>" if ip != "None" else ip for ip in v]
                else:
                    out[key] = walk(v)
            generate = (out.get("metadata") or {}).get("generateName") if "metadata" in out else None
            if isinstance(generate, str) and str(out["metadata"].get("name", "")).startswith(generate):
                out["metadata"]["name"] = generate + "<suffix>"
            return out
        if isinstance(value, list):
            return [walk(v) for v in value]
        if isinstance(value, str):
            return text(value)
        return value

    return [[label, walk(value)] for label, value in transcript.steps]


def _cause_message(message: str) -> str:
    """A cause's message without the value it quotes: ``Invalid value:
    <value>: <why>`` becomes ``Invalid value: <why>``. The value is printed
    with Go's ``%#v`` (``[]string{"a"}``, ``v1.LabelSelector{...}``), a
    rendering of Go types for people, which no client parses."""
    kind, sep, rest = message.partition(": ")
    if kind == "Too long":
        # Reworded in 1.30 ("must have at most N bytes"), as the embedded
        # server, which reports itself as 1.30, words it.
        return kind
    if not sep or kind not in _VALUE_QUOTING:
        return message
    return f"{kind}: {rest.rsplit(': ', 1)[-1]}" if ": " in rest else message


_VALUE_QUOTING = frozenset(
    ("Invalid value", "Unsupported value", "Duplicate value", "Too long", "Too many", "Not found")
)


def _status_shape(status: Obj) -> Obj:
    """A failure ``Status`` as clients read it: code, reason and details.
    The causes are sorted, since their order follows the validators' internal
    order (Go map iteration in places) and clients look causes up by field;
    cause messages lose their quoted values (``_cause_message``); the
    message of a 422 Invalid, which joins the causes, keeps only its subject
    (``Kind "name" is invalid``)."""
    out = dict(status)
    details = out.get("details")
    if isinstance(details, dict) and isinstance(details.get("causes"), list):
        causes = [
            {**c, "message": _cause_message(c["message"])} if isinstance(c.get("message"), str) else c
            for c in details["causes"]
        ]
        out["details"] = {**details, "causes": sorted(causes, key=lambda c: json.dumps(c, sort_keys=True))}
    message = out.get("message")
    if out.get("reason") == "Invalid" and isinstance(message, str) and " is invalid: " in message:
        out["message"] = message.split(" is invalid: ")[0] + " is invalid"
    return out


def difference(embedded: list[Any], real: list[Any]) -> str:
    """A unified diff of two normalised transcripts, step by step."""
    a = json.dumps(embedded, indent=1, sort_keys=True).splitlines()
    b = json.dumps(real, indent=1, sort_keys=True).splitlines()
    return "\n".join(difflib.unified_diff(a, b, "embedded", "kube-apiserver", lineterm="", n=6))


async def run_both(pair: tuple[Target, Target], case: Case) -> None:
    """Run ``case`` on both servers at once and fail with the diff if the
    normalised transcripts differ."""
    embedded, real = pair
    got_embedded, got_real = await asyncio.gather(case(embedded), case(real))
    a, b = normalise(got_embedded), normalise(got_real)
    if a != b:
        raise AssertionError(f"{case.__name__}: the servers differ\n{difference(a, b)}")


async def test_differential(pair: tuple[Target, Target], case: Case) -> None:
    """One case on both servers; each test module imports this, and the
    conftest makes one test of each of the module's ``case_*`` functions.
    Defined once, so that without a real server every case is skipped with
    one reason at one place."""
    await run_both(pair, case)
