"""Files only their owner may read: the state of ``--data-dir``.

The embedded control plane keeps its CA key, its admin token and every object
(Secrets, S3 keys among them) under its data directory. Whatever the umask,
each file there is 0600 and each directory 0700, as kube-apiserver's own key
files and etcd's data directory are; a data directory left by an earlier
version with wider permissions is narrowed when it is opened.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import IO

__all__ = ["open_private", "private_dir", "write_private"]

FILE_MODE = 0o600
DIR_MODE = 0o700


def private_dir(path: Path) -> Path:
    """``path`` as a directory only its owner may enter, everything already in it
    narrowed to owner-only."""
    path.mkdir(mode=DIR_MODE, parents=True, exist_ok=True)
    path.chmod(DIR_MODE)
    for root, dirs, files in os.walk(path):
        for name in dirs:
            (Path(root) / name).chmod(DIR_MODE)
        for name in files:
            (Path(root) / name).chmod(FILE_MODE)
    return path


def open_private(path: Path, mode: str) -> IO[bytes]:
    """``path`` opened in binary ``mode`` (``"wb"`` or ``"ab"``), created 0600 and kept so."""
    flags = os.O_WRONLY | os.O_CREAT | (os.O_APPEND if mode == "ab" else os.O_TRUNC)
    fd = os.open(path, flags, FILE_MODE)
    os.fchmod(fd, FILE_MODE)
    return os.fdopen(fd, mode)


def write_private(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path``, which only its owner may read."""
    with open_private(path, "wb") as f:
        f.write(data)
