"""The informer hands freed memory back after a list, and the operator's
start path does not load native libraries it does not use."""

from __future__ import annotations

import platform
import subprocess
import sys

import pytest

from mo_operator.kube.memory.allocator import release_freed_memory


@pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="malloc_trim is glibc's")
def test_freed_memory_is_released_on_glibc() -> None:
    assert release_freed_memory() is True


def test_run_path_imports_no_cryptography() -> None:
    """``cryptography`` is several MiB of native code that only generated
    webhook certificates need."""
    code = (
        "import sys, mo_operator.cli.run, mo_operator.controllers.operator;"
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'cryptography'))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
