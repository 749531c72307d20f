"""Throughput of the embedded API server for a burst of creations, and its
memory per stored object.

The control plane runs in its own process (as `mo-operator control-plane`),
so client and server do not share an event loop; lightkube creates the
objects with bounded concurrency while one watcher checks that every event
arrives. Prints one JSON line per figure, then a table.

    python bench/apiserver_burst.py [--objects 10000] [--concurrency 64]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from lightkube import AsyncClient, KubeConfig
from lightkube.models.meta_v1 import ObjectMeta
from lightkube.resources.core_v1 import ConfigMap


def rss_bytes(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS")


async def wait_for_kubeconfig(path: Path, proc: subprocess.Popen[bytes]) -> None:
    for _ in range(300):
        if path.exists() and path.stat().st_size > 0:
            return
        if proc.poll() is not None:
            raise RuntimeError("control plane exited")
        await asyncio.sleep(0.1)
    raise RuntimeError("control plane did not start")


async def run(objects: int, concurrency: int) -> list[dict[str, object]]:
    with tempfile.TemporaryDirectory() as d:
        kc = Path(d) / "kubeconfig"
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "mo_operator.cli.main",
                "--log-level",
                "WARNING",
                "control-plane",
                "--kubeconfig",
                str(kc),
                "--no-simulator",
            ],
            env={**os.environ},
        )
        try:
            await wait_for_kubeconfig(kc, proc)
            client = AsyncClient(KubeConfig.from_file(str(kc)), field_manager="bench")
            await asyncio.sleep(0.5)
            rss_before = rss_bytes(proc.pid)
            received = 0
            done = asyncio.Event()

            async def watch() -> None:
                nonlocal received
                async for _typ, _obj in client.watch(ConfigMap, namespace="default", resource_version="1"):
                    received += 1
                    if received >= objects:
                        done.set()
                        return

            watcher = asyncio.create_task(watch())
            await asyncio.sleep(0.2)
            sem = asyncio.Semaphore(concurrency)
            payload = {f"key{i}": "x" * 40 for i in range(5)}

            async def create(i: int) -> None:
                async with sem:
                    await client.create(
                        ConfigMap(
                            metadata=ObjectMeta(name=f"cm-{i:06d}", labels={"bench": "1"}), data=payload
                        )
                    )

            t0 = time.perf_counter()
            await asyncio.gather(*(create(i) for i in range(objects)))
            created = time.perf_counter() - t0
            await asyncio.wait_for(done.wait(), 120)
            delivered = time.perf_counter() - t0
            watcher.cancel()
            rss_after = rss_bytes(proc.pid)
            await client.close()
        finally:
            proc.terminate()
            proc.wait(10)
    return [
        {
            "figure": "apiserver_create_throughput",
            "value": round(objects / created, 1),
            "unit": "objects/s",
            "objects": objects,
            "concurrency": concurrency,
        },
        {
            "figure": "apiserver_watch_delivery_throughput",
            "value": round(objects / delivered, 1),
            "unit": "events/s",
        },
        {
            "figure": "apiserver_memory_per_object",
            "value": round((rss_after - rss_before) / objects),
            "unit": "bytes",
            "note": "RSS growth of the server process, history and watch cache included",
        },
    ]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--objects", type=int, default=10_000)
    parser.add_argument("--concurrency", type=int, default=64)
    args = parser.parse_args()
    figures = asyncio.run(run(args.objects, args.concurrency))
    for f in figures:
        print(json.dumps(f))
    print()
    print(f"{'figure':40} {'value':>12}  unit")
    for f in figures:
        print(f"{f['figure']:40} {f['value']:>12}  {f['unit']}")


if __name__ == "__main__":
    main()
