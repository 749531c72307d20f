"""The webhook server as anyone on the network meets it: a body that is not an
AdmissionReview v1 request is answered 400 with the reason and never admitted;
bodies, the time to send headers and body, the TLS handshake and the number of
connections are bounded; each refusal is one log line without a traceback, and
the server keeps answering well-formed reviews whatever came before.
(https://kubernetes.io/docs/reference/access-authn-authz/extensible-admission-controllers/#request)"""

from __future__ import annotations

import asyncio
import json
import logging
import ssl
import time
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest

from mo_operator.kube.webhook.admission_review import MAX_DEPTH
from mo_operator.kube.webhook.server import AdmissionRequest, Limits, WebhookServer
from mo_operator.kube.webhook.serving_certs import GeneratedCerts

LIMITS = Limits(
    max_body_bytes=64 * 1024,
    request_seconds=0.5,
    body_seconds=0.5,
    handshake_seconds=0.5,
    max_connections=4,
)
PATH = "/validate"


def review(**request: Any) -> dict[str, Any]:
    return {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": "u-1",
            "operation": "CREATE",
            "kind": {"group": "", "version": "v1", "kind": "ConfigMap"},
            "object": {"metadata": {"name": "x"}},
            **request,
        },
    }


class Served:
    def __init__(self, server: WebhookServer, certs: GeneratedCerts) -> None:
        self.server = server
        self.ssl = ssl.create_default_context(cadata=certs.ca_bundle.decode())
        self.calls = 0

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.server.port}{PATH}"

    async def post(self, body: bytes) -> tuple[int, str]:
        async with aiohttp.ClientSession() as s, s.post(self.url, data=body, ssl=self.ssl) as r:
            return r.status, await r.text()

    async def open(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        return await asyncio.open_connection("127.0.0.1", self.server.port, ssl=self.ssl)

    def request_head(self, length: int) -> bytes:
        return (
            f"POST {PATH} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            f"Content-Length: {length}\r\n\r\n"
        ).encode()


@pytest.fixture
async def served() -> AsyncIterator[Served]:
    certs = GeneratedCerts(["127.0.0.1"])
    server = WebhookServer(certs, host="127.0.0.1", port=0, limits=LIMITS)
    out = Served(server, certs)

    async def admit_all(req: AdmissionRequest) -> None:
        out.calls += 1

    server.add_validating(PATH, admit_all)
    await server.start()
    try:
        yield out
    finally:
        await server.stop()


async def _closed_within(reader: asyncio.StreamReader, seconds: float) -> bytes:
    """What the server sent before closing the connection, which it must do within ``seconds``."""
    return await asyncio.wait_for(reader.read(), seconds)


MALFORMED = [
    (b"", "the body is not JSON"),
    (b"{not json", "the body is not JSON"),
    (b"\xff\xfe", "the body is not JSON"),
    (b"{}", "request must be an object"),
    (b"[]", "an AdmissionReview must be a JSON object"),
    (b'{"request": 5}', "request must be an object"),
    (json.dumps({"kind": "AdmissionReview"}).encode(), "request must be an object"),
    (json.dumps(review(uid="")).encode(), "request.uid must be a string"),
    (json.dumps(review(uid=7)).encode(), "request.uid must be a string"),
    (json.dumps(review(uid="u" * 300)).encode(), "request.uid must be a string"),
    (json.dumps(review(operation="PATCH")).encode(), "request.operation must be one of"),
    (json.dumps(review(operation=["CREATE"])).encode(), "request.operation must be one of"),
    (json.dumps(review(object=None)).encode(), "request.object is required on CREATE"),
    (json.dumps(review(object=[1])).encode(), "request.object must be an object"),
    (json.dumps(review(operation="UPDATE")).encode(), "request.oldObject is required on UPDATE"),
    (json.dumps(review(kind="ConfigMap")).encode(), "request.kind must be an object"),
    (json.dumps(review(namespace=["a"])).encode(), "request.namespace must be a string"),
    (json.dumps(review(dryRun="yes")).encode(), "request.dryRun must be a boolean"),
    (json.dumps({**review(), "apiVersion": "admission.k8s.io/v1beta1"}).encode(), "apiVersion must be"),
    (json.dumps({**review(), "kind": "TokenReview"}).encode(), "kind must be AdmissionReview"),
    (b"[" * 30_000 + b"]" * 30_000, f"nests deeper than {MAX_DEPTH} levels"),
    (b"[" * 600 + b"]" * 600, f"nests deeper than {MAX_DEPTH} levels"),
]


@pytest.mark.parametrize(("body", "reason"), MALFORMED, ids=[str(i) for i in range(len(MALFORMED))])
async def test_a_malformed_review_is_answered_400_with_the_reason_never_admitted(
    served: Served, body: bytes, reason: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="mo_operator")
    status, text = await served.post(body)
    assert status == 400 and reason in text, (status, text)
    assert served.calls == 0, "a handler never sees a malformed review"
    refusals = [r for r in caplog.records if "refused a request" in r.getMessage()]
    assert len(refusals) == 1 and refusals[0].levelno == logging.WARNING
    assert refusals[0].exc_info is None and "\n" not in refusals[0].getMessage()
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]


async def test_a_well_formed_review_is_still_answered_after_malformed_ones(served: Served) -> None:
    for body, _ in MALFORMED[:5]:
        await served.post(body)
    status, text = await served.post(json.dumps(review()).encode())
    assert status == 200 and json.loads(text)["response"] == {"uid": "u-1", "allowed": True}
    assert served.calls == 1


async def test_refusals_are_logged_at_most_once_per_interval_and_counted(
    served: Served, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="mo_operator")
    for _ in range(20):
        assert (await served.post(b"garbage"))[0] == 400
    lines = [r.getMessage() for r in caplog.records if "refused a request" in r.getMessage()]
    assert len(lines) == 1, "a client sending garbage in a loop cannot fill the log"


async def test_a_body_over_the_limit_is_refused_413(served: Served) -> None:
    status, text = await served.post(b" " * (LIMITS.max_body_bytes + 1))
    assert status == 413 and "larger than" in text
    reader, writer = await served.open()
    writer.write(served.request_head(LIMITS.max_body_bytes + 1))  # announced, never sent
    answer = await _closed_within(reader, 5)
    assert answer.startswith(b"HTTP/1.1 413"), answer
    writer.close()
    assert served.calls == 0


async def test_a_body_that_does_not_arrive_in_time_is_refused_and_the_connection_closed(
    served: Served,
) -> None:
    reader, writer = await served.open()
    writer.write(served.request_head(100) + b'{"apiVersion"')
    started = time.monotonic()
    answer = await _closed_within(reader, 5)
    assert answer.startswith(b"HTTP/1.1 408"), answer
    assert time.monotonic() - started >= LIMITS.body_seconds * 0.9
    writer.close()


@pytest.mark.parametrize(
    "sent", [b"", b"POST /validate HTTP/1.1\r\nHost: x\r\n"], ids=["idle", "slow-headers"]
)
async def test_a_connection_without_a_whole_request_in_time_is_closed(served: Served, sent: bytes) -> None:
    reader, writer = await served.open()
    writer.write(sent)
    await _closed_within(reader, LIMITS.request_seconds + 5)
    writer.close()


async def test_a_connection_that_never_completes_tls_is_closed(served: Served) -> None:
    reader, writer = await asyncio.open_connection("127.0.0.1", served.server.port)
    writer.write(b"\x16\x03\x01")  # the start of a ClientHello, and nothing more
    assert await _closed_within(reader, LIMITS.handshake_seconds + 5) == b""
    writer.close()


async def test_a_client_dropping_mid_body_is_one_log_line(
    served: Served, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="mo_operator")
    _, writer = await served.open()
    writer.write(served.request_head(1000) + b'{"apiVersion": "admission.k8s.io/v1"')
    await writer.drain()
    writer.transport.abort()

    async def logged() -> bool:
        return any("refused a request" in r.getMessage() for r in caplog.records)

    deadline = time.monotonic() + 5
    while not await logged():
        assert time.monotonic() < deadline, "the dropped request was not logged"
        await asyncio.sleep(0.05)
    assert all(r.exc_info is None for r in caplog.records)
    assert (await served.post(json.dumps(review()).encode()))[0] == 200


async def test_connections_past_the_limit_are_reset_at_once(served: Served) -> None:
    held = [await served.open() for _ in range(LIMITS.max_connections)]

    async def refused() -> bool:
        try:
            _, writer = await asyncio.wait_for(served.open(), 2)
        except (ConnectionError, ssl.SSLError, OSError):
            return True
        writer.close()
        return False

    assert await refused(), "one connection more than the limit is refused"
    assert served.server.open_connections == LIMITS.max_connections
    for _, writer in held:
        writer.close()
    deadline = time.monotonic() + 5
    while served.server.open_connections:
        assert time.monotonic() < deadline
        await asyncio.sleep(0.05)
    assert (await served.post(json.dumps(review()).encode()))[0] == 200


@pytest.mark.parametrize(
    "sent",
    [b"NOT HTTP AT ALL\r\n\r\n", b"POST /" + b"x" * 10_000 + b" HTTP/1.1\r\nHost: x\r\n\r\n"],
    ids=["garbage", "long-line"],
)
async def test_a_request_aiohttp_cannot_parse_is_one_log_line(
    served: Served, sent: bytes, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    reader, writer = await served.open()
    writer.write(sent)
    answer = await _closed_within(reader, 5)
    assert answer.startswith((b"HTTP/1.0 400", b"HTTP/1.1 400")), answer[:100]
    writer.close()
    assert not [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR], caplog.text
