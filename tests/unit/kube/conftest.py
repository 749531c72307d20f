"""Fixtures of the kube runtime's unit tests: loopback servers for the HTTP clients."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from .closing_server import ClosingServer, serve


@pytest.fixture
async def closing() -> AsyncIterator[ClosingServer]:
    async for s in serve(ClosingServer()):
        yield s


@pytest.fixture
async def silent() -> AsyncIterator[ClosingServer]:
    async for s in serve(ClosingServer(answer_none=True)):
        yield s
