"""The test controller as an operator process, so a test can kill it for
real (SIGKILL: no release of the lease, no flush, nothing) and start it
again.

    python -m integration.runtime.operator_main KUBECONFIG IDENTITY   (cwd: tests/)

It writes one JSON line to stdout per informer handler call, so the test
audits the handlers of the process it cannot reach into, and on SIGUSR1 a
line with the contents of both caches. SIGTERM shuts it down gracefully.
"""

from __future__ import annotations

import asyncio
import json
import logging
import signal
import sys
from collections.abc import Mapping
from typing import Any

from mo_operator.kube.cache.informer import SharedInformer, is_tombstone
from mo_operator.kube.cache.informer_factory import InformerFactory
from mo_operator.kube.client.client import ApiClient
from mo_operator.kube.flowcontrol.backoff import Backoff
from mo_operator.kube.leaderelection.leader import LeaderElectionConfig, LeaderElector
from mo_operator.kube.manager.adapters import ClientLeaseStore, fenced
from mo_operator.kube.manager.manager import Manager

from .child_controller import ChildController
from .ledger import cache_state, key_of, rv_of

FIELD_MANAGER = "child-controller"
LEASE = LeaderElectionConfig("child-controller", "default", "", 2.0, 1.5, 0.3)


def emit(line: Mapping[str, Any]) -> None:
    sys.stdout.write(json.dumps(line) + "\n")
    sys.stdout.flush()


def report(informer: SharedInformer, label: str) -> None:
    def on_add(obj: Mapping[str, Any]) -> None:
        emit({"i": label, "e": "add", "k": key_of(obj), "rv": rv_of(obj)})

    def on_update(old: Mapping[str, Any], new: Mapping[str, Any]) -> None:
        emit({"i": label, "e": "update", "k": key_of(new), "rv": rv_of(new), "old": rv_of(old)})

    def on_delete(obj: Mapping[str, Any]) -> None:
        emit({"i": label, "e": "delete", "k": key_of(obj), "rv": rv_of(obj), "tombstone": is_tombstone(obj)})

    informer.add_event_handler(on_add, on_update, on_delete)


def fast_backoff() -> Backoff:
    return Backoff(0.05, 0.5, 2.0, jitter=0.5)


async def main(kubeconfig: str, identity: str) -> None:
    client = ApiClient.from_kubeconfig(
        kubeconfig, field_manager=FIELD_MANAGER, user_agent=identity, retry_backoff=fast_backoff
    )
    lease_client = ApiClient.from_kubeconfig(kubeconfig, field_manager=FIELD_MANAGER, user_agent=identity)
    config = LeaderElectionConfig(
        LEASE.name, LEASE.namespace, identity, LEASE.lease_duration, LEASE.renew_deadline, LEASE.retry_period
    )
    elector = LeaderElector(ClientLeaseStore(lease_client), config)
    informers = InformerFactory(client, backoff=fast_backoff, stall_timeout=2.0)
    cc = ChildController(informers, fenced(client, elector.may_write))
    report(cc.parents, "parents")
    report(cc.children, "children")
    manager = Manager(informers, [cc.controller], elector=elector, shutdown_timeout=5)
    manager.install_signal_handlers()
    asyncio.get_running_loop().add_signal_handler(
        signal.SIGUSR1,
        lambda: emit({"cache": {"parents": cache_state(cc.parents), "children": cache_state(cc.children)}}),
    )
    emit({"started": identity})
    try:
        await manager.run()
    finally:
        await client.close()
        await lease_client.close()


if __name__ == "__main__":
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    asyncio.run(main(sys.argv[1], sys.argv[2]))
