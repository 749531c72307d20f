"""Where the names and ports of a simulated cluster lead: the address book the simulated
MatrixOne publishes, and the dialer that reaches its servers through it.

A real cluster resolves a Service's DNS name (``<svc>.<ns>.svc``, with or without
``.cluster.local``) to a ClusterIP that sends each connection to one of the Service's
ready endpoints, a pod's DNS name (``<pod>.<subdomain>.<ns>.svc``) or its IP to the pod;
a connection to a pod where nothing listens on the port is refused, and a name that does
not exist does not resolve. The book holds exactly that: ``host:port`` → the loopback
ports of the simulated servers behind it (none: refused), and nothing for names a
cluster would not resolve.

The simulated MatrixOne keeps the book in memory (``MorpcNetwork.book``) and, for an
operator in another process, in a file it replaces whole on every change
(``write``); ``BookDialer`` reads either.
"""

from __future__ import annotations

import asyncio
import errno
import ipaddress
import json
import os
import socket
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

CLUSTER_DOMAIN = ".cluster.local"


def canonical(host: str, port: int) -> str:
    """``host:port`` as the book keys it: lower case, no trailing dot, no cluster domain."""
    host = host.lower().rstrip(".")
    host = host.removesuffix(CLUSTER_DOMAIN)
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    return f"{host}:{port}"


@dataclass(frozen=True)
class AddressBook:
    """``host:port`` → loopback ports of the servers answering there (empty: refused)."""

    entries: Mapping[str, tuple[int, ...]] = field(default_factory=dict)

    def lookup(self, host: str, port: int) -> tuple[int, ...] | None:
        return self.entries.get(canonical(host, port))

    def to_json(self) -> str:
        return json.dumps({"entries": {k: list(v) for k, v in sorted(self.entries.items())}})

    @classmethod
    def from_json(cls, text: str) -> AddressBook:
        raw = json.loads(text).get("entries") or {}
        return cls({str(k): tuple(int(p) for p in v) for k, v in raw.items()})

    def write(self, path: Path) -> None:
        """Replace ``path`` with this book whole, so a reader never sees half of it."""
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(self.to_json())
        os.replace(tmp, path)


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


class BookDialer:
    """A ``Dialer`` (``matrixone.rpc.connection``) that reaches the simulated MatrixOne.

    A Service name leads to its endpoints in turn, as kube-proxy spreads connections.
    """

    def __init__(self, book: Callable[[], AddressBook]) -> None:
        self._book = book
        self._turn: dict[str, int] = {}

    async def __call__(self, host: str, port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        ports = self._book().lookup(host, port)
        if ports is None:
            if _is_ip(host):
                raise OSError(errno.EHOSTUNREACH, f"No route to host {host}")
            raise socket.gaierror(socket.EAI_NONAME, f"Name or service not known: {host}")
        if not ports:
            raise ConnectionRefusedError(errno.ECONNREFUSED, "Connection refused")
        key = canonical(host, port)
        turn = self._turn.get(key, 0)
        self._turn[key] = turn + 1
        return await asyncio.open_connection("127.0.0.1", ports[turn % len(ports)])


class BookFile:
    """The book in a file another process writes, read again whenever the file changes."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._seen: tuple[int, int, int] | None = None
        self._book = AddressBook()

    def __call__(self) -> AddressBook:
        try:
            stat = self.path.stat()
        except FileNotFoundError:
            return AddressBook()
        seen = (stat.st_ino, stat.st_mtime_ns, stat.st_size)
        if seen != self._seen:
            self._book = AddressBook.from_json(self.path.read_text())
            self._seen = seen
        return self._book


def file_dialer(path: Path) -> BookDialer:
    """The dialer of an operator whose simulated MatrixOne runs in another process that
    writes its address book to ``path``."""
    return BookDialer(BookFile(path))
