"""kubectl as a user runs it, against a kubeconfig (and a namespace)."""

from __future__ import annotations

import asyncio
import functools
import os
import subprocess
from pathlib import Path

UNREACHABLE = (
    "connection refused",
    "was refused",
    "connection reset",
    "the server is currently unable",
    "EOF",
)
"""What kubectl prints when the API server is away (restarting, overloaded)."""


class Kubectl:
    """Runs kubectl against ``kubeconfig``, in ``namespace`` when given, with a
    discovery cache of its own beside the kubeconfig."""

    def __init__(self, kubeconfig: Path, namespace: str | None = None) -> None:
        self.kubeconfig = kubeconfig
        self.namespace = namespace

    @functools.cached_property
    def binary(self) -> str:
        """Looked up when first run: the CLI module that knows where kubectl is costs a
        benchmark's measured operator process a tenth of a second to import, for nothing."""
        from mo_devkit.cli.demo import kubectl_binary

        return kubectl_binary()

    async def run(
        self, *args: str, input: str | None = None, check: bool = True, timeout: float = 60
    ) -> subprocess.CompletedProcess[str]:
        """One kubectl command; ``check``: an AssertionError with its output if it fails."""
        scope = ("-n", self.namespace) if self.namespace else ()
        proc = await asyncio.create_subprocess_exec(
            self.binary,
            "--kubeconfig",
            str(self.kubeconfig),
            *scope,
            *args,
            stdin=asyncio.subprocess.PIPE if input is not None else None,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env={**os.environ, "KUBECACHEDIR": str(self.kubeconfig.parent / "kubecache")},
        )
        try:
            async with asyncio.timeout(timeout):
                out, err = await proc.communicate(input.encode() if input is not None else None)
        except TimeoutError:
            proc.kill()
            await proc.wait()
            raise TimeoutError(f"kubectl {' '.join(args)} did not finish within {timeout:g}s") from None
        result = subprocess.CompletedProcess(list(args), proc.returncode or 0, out.decode(), err.decode())
        if check and result.returncode != 0:
            raise AssertionError(
                f"kubectl {' '.join(args)} failed ({result.returncode}):\n{result.stderr}{result.stdout}"
            )
        return result

    async def run_riding_out_restarts(
        self, *args: str, input: str | None = None, check: bool = True, attempts: int = 20
    ) -> subprocess.CompletedProcess[str]:
        """``run``, again while the API server is unreachable, as a user would retry."""
        for attempt in range(attempts):
            result = await self.run(*args, input=input, check=False)
            unreachable = any(t in result.stderr for t in UNREACHABLE)
            if result.returncode == 0 or not unreachable or attempt == attempts - 1:
                break
            await asyncio.sleep(0.5)
        if check and result.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed:\n{result.stderr}{result.stdout}")
        return result
