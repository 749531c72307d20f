"""A loopback HTTP/1.1 server that closes kept-alive connections between two calls:
what the keep-alive rule of both our HTTP clients is tested against."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

BODY = b'{"request":{"uid":"1"}}'


@dataclass
class ClosingServer:
    """Plain HTTP/1.1 on loopback. It answers the first request of each connection
    and keeps the connection open; the next request on that connection it reads
    whole, then closes the connection without a byte of answer. With
    ``answer_none`` it closes every connection on its first request."""

    answer_none: bool = False
    connections: int = 0
    requests: list[bytes] = field(default_factory=list)
    port: int = 0

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        served = 0
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value)
                self.requests.append(await reader.readexactly(length))
                if served or self.answer_none:
                    return
                served += 1
                writer.write(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11\r\n\r\n"
                )
                writer.write(b'{"ok":true}')
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            return
        finally:
            writer.close()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/review"


async def serve(server: ClosingServer) -> AsyncIterator[ClosingServer]:
    listener = await asyncio.start_server(server.handle, "127.0.0.1", 0)
    server.port = listener.sockets[0].getsockname()[1]
    async with listener:
        yield server
