"""The simulation a benchmark attaches to a real API server, in a process of
its own (see ``cluster_process``): the kubelet-mode simulator and the
simulated MatrixOne, with the timings of ``mo-operator control-plane --fast``
so that figures on either server are taken alike.

    python -m mo_devkit.testing.attach REAL_KUBECONFIG OUT_KUBECONFIG

writes ``OUT_KUBECONFIG`` (a copy of the real one) once both run, keeps the
simulated MatrixOne's address book beside it (``address_book_beside``), and
runs until SIGTERM.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import sys

from mo_devkit.simulated.cluster import FAST_SIMULATOR, SimulatedCluster, address_book_beside


async def attach(real_kubeconfig: str, out: str) -> None:
    """Run the simulation against ``real_kubeconfig``; write ``out`` (see the module doc)."""
    cluster = SimulatedCluster(
        attach_to=real_kubeconfig, simulator_options=FAST_SIMULATOR, address_book=address_book_beside(out)
    )
    await cluster.start()
    try:
        tmp = out + ".tmp"
        shutil.copy(real_kubeconfig, tmp)
        os.replace(tmp, out)  # whole: the parent reads it as soon as it exists
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        await stop.wait()
    finally:
        await cluster.stop()


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: python -m mo_devkit.testing.attach REAL_KUBECONFIG OUT_KUBECONFIG")
    asyncio.run(attach(sys.argv[1], sys.argv[2]))
