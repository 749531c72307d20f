"""Property test of the webhook endpoints themselves, over HTTPS, with our handlers
registered as the operator registers them: whatever body, path or method a client
sends (random bytes, any JSON, AdmissionReviews with fields missing, of the wrong
type or mutated, objects of our kinds or junk), the server answers with a status,
never a 5xx; it admits only a well-formed AdmissionReview v1 request, answering it
with the request's uid; it never logs an error; and it still answers a
well-formed review afterwards."""

from __future__ import annotations

import asyncio
import copy
import json
import logging
import ssl
from collections.abc import Iterator
from typing import Any

import aiohttp
import pytest
from api.fuzzing import BASES, JUNK
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mo_operator.api.kinds import KINDS
from mo_operator.kube.client import keepalive
from mo_operator.kube.webhook.admission_review import AdmissionRequest, MalformedReview
from mo_operator.kube.webhook.server import WebhookServer
from mo_operator.kube.webhook.serving_certs import GeneratedCerts
from mo_operator.webhooks import register, route

from .conftest import DEFAULT_ARGS, review

Obj = dict[str, Any]
KIND_NAMES = sorted(KINDS)
PATHS = [route(k).validate_path for k in KIND_NAMES] + [route("LogSet").mutate_path, "/healthz", "/nope"]


class Endpoint:
    """One server and one keep-alive session on a loop of their own, driven from a
    synchronous property test."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        certs = GeneratedCerts(["127.0.0.1"])
        self.server = WebhookServer(certs, host="127.0.0.1", port=0)
        register(self.server, default_args=DEFAULT_ARGS)
        self.ssl = ssl.create_default_context(cadata=certs.ca_bundle.decode())
        self.loop.run_until_complete(self.server.start())
        self.session = self.loop.run_until_complete(self._session())

    async def _session(self) -> aiohttp.ClientSession:
        return aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=4))

    def send(self, method: str, path: str, body: bytes) -> tuple[int, bytes]:
        async def go() -> tuple[int, bytes]:
            url = f"https://127.0.0.1:{self.server.port}{path}"
            async with keepalive.request(self.session, method, url, data=body, ssl=self.ssl) as resp:
                return resp.status, await resp.read()

        return self.loop.run_until_complete(go())

    def close(self) -> None:
        self.loop.run_until_complete(self.session.close())
        self.loop.run_until_complete(self.server.stop())
        self.loop.close()


@pytest.fixture(scope="module")
def endpoint() -> Iterator[Endpoint]:
    ep = Endpoint()
    yield ep
    ep.close()


def _slots(value: Any, depth: int = 0) -> list[tuple[Any, Any]]:
    """The (container, key) places of a review's envelope a mutation may hit (the
    object's own fields are the spec fuzzers' business)."""
    out: list[tuple[Any, Any]] = []
    if isinstance(value, dict) and depth < 3:
        for k, v in value.items():
            out.append((value, k))
            if k not in ("object", "oldObject"):
                out += _slots(v, depth + 1)
    return out


@st.composite
def reviews(draw: st.DrawFn) -> tuple[str, bytes]:
    """A review of one of our kinds, its envelope mutated a few times; with its path."""
    kind = draw(st.sampled_from(KIND_NAMES))
    obj = copy.deepcopy(draw(st.sampled_from(BASES[kind])))
    operation = draw(st.sampled_from(["CREATE", "UPDATE", "DELETE", "CONNECT"]))
    body: Any = review(kind, operation, obj, obj if operation != "CREATE" else None)
    for _ in range(draw(st.integers(0, 3))):
        slots = _slots(body)
        if not slots:
            break
        container, key = draw(st.sampled_from(slots))
        op = draw(st.sampled_from(["delete", "junk", "wrap", "null"]))
        if op == "delete":
            del container[key]
        elif op == "junk":
            container[key] = draw(JUNK)
        elif op == "wrap":
            container[key] = [container[key]]
        else:
            container[key] = None
    path = draw(st.sampled_from([route(kind).validate_path, *PATHS]))
    return path, json.dumps(body).encode()


BODIES = st.one_of(
    reviews(),
    st.tuples(st.sampled_from(PATHS), st.binary(max_size=512)),
    st.tuples(st.sampled_from(PATHS), JUNK.map(lambda v: json.dumps(v).encode())),
)


def _well_formed(body: bytes) -> AdmissionRequest | None:
    try:
        return AdmissionRequest.from_review(json.loads(body))
    except (MalformedReview, ValueError):
        return None


@settings(
    max_examples=300,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(BODIES, st.sampled_from(["POST", "POST", "POST", "GET", "PUT"]))
def check(endpoint: Endpoint, sent: tuple[str, bytes], method: str) -> None:
    path, body = sent
    status, answer = endpoint.send(method, path, body)
    assert status < 500, (status, answer[:300])
    if path == "/healthz" or path == "/nope" or method != "POST":
        return
    request = _well_formed(body)
    if request is None:
        assert status == 400 and answer.strip(), "a malformed review gets a reason, never an admission"
        return
    assert status == 200, (status, answer[:300])
    response = json.loads(answer)["response"]
    assert response["uid"] == request.uid
    assert response["allowed"] is True or response["status"]["code"] < 500, response


def test_whatever_a_client_sends_the_endpoint_answers_without_a_server_error(
    endpoint: Endpoint, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="mo_operator")
    check(endpoint)
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info], caplog.text
    kind = "LogSet"
    ok = json.dumps(review(kind, "CREATE", copy.deepcopy(BASES[kind][0]))).encode()
    status, answer = endpoint.send("POST", route(kind).validate_path, ok)
    assert status == 200 and json.loads(answer)["response"]["allowed"] is True
