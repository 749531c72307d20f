"""The operator's settings: one tree, one default per setting.

``OperatorConfig`` is the root; each concern has a group of its own
(kopf's ``OperatorSettings`` is the model): the controllers' timing and
scope (``Settings``, what every actor reads through ``Env``), leader
election, the API client's rate limit, the probe server; and what only the
``mo-operator run`` process needs: where it serves (``Serving``), its webhooks
(``Webhooks``) and how its start waits for the CRDs (``Startup``). ``run``
builds its flags from these defaults and its result back into this tree, so
a default is written here and nowhere else. It sits above the MatrixOne
knowledge it takes defaults from and below the controllers and the commands
that read it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mo_operator.kube.client.client import DEFAULT_BURST, DEFAULT_QPS
from mo_operator.kube.leaderelection.leader import LeaderElectionConfig
from mo_operator.matrixone import buckets
from mo_operator.matrixone.backup import DEFAULT_IMAGE as DEFAULT_BACKUP_IMAGE

LEASE_NAME = "mo-operator-leader"


@dataclass(frozen=True)
class Settings:
    """Timing and scope of the controllers (all in seconds)."""

    namespaces: tuple[str, ...] = ()
    """Watch only these namespaces (empty: all namespaces)."""
    rollout_stall_seconds: float = 120.0
    """A new pod of a roll that is not ready after this long halts the roll (condition says why)."""
    poll_seconds: float = 10.0
    """How often a ready set looks at MatrixOne's own state (HAKeeper), which sends no events."""
    busy_poll_seconds: float = 1.0
    """How often a set looks again while it waits on MatrixOne (bootstrap, registration, draining)."""
    drain_timeout_seconds: float = 300.0
    """Longest a CN drain lasts when the CNSet sets no storeDrainTimeout."""
    rpc_patience_seconds: float = 60.0
    """How long MatrixOne may go without answering the operator's calls before a condition
    (and a Warning Event) says so, naming the address and the last error; until then the
    sets only wait, as the Go operator does."""
    backup_image: str = DEFAULT_BACKUP_IMAGE
    """Image of backup and restore jobs (MatrixOne's mo_br; upstream's ``brConfig.image``)."""
    cleanup_image: str = buckets.CLEANUP_IMAGE
    """Image of the Job that deletes a released claim's data (needs ``aws`` on its path);
    clusters with no access to Docker Hub point it at a mirror."""
    failover: bool = True
    """Replace lost log stores automatically (upstream's ``--failover``); off, a lost store
    is only reported (condition and Event) and nothing is deleted."""
    adopt_kruise: bool = False
    """Take every set the Go operator runs with OpenKruise over, as ``mo-operator adopt``
    would; off, only a set (or cluster) annotated ``matrixorigin.io/adopt: kruise`` is."""


@dataclass(frozen=True)
class LeaderElection:
    """Who may write. Off by default for an operator built in-process (the
    demo, tests); ``mo-operator run`` turns it on unless told otherwise."""

    enabled: bool = False
    namespace: str = "default"
    """Namespace of the Lease."""
    identity: str = ""
    """This replica's name in the Lease (empty: ``default_identity()``)."""
    lease_duration: float = LeaderElectionConfig.lease_duration
    """Seconds a leader's lease lasts."""
    renew_deadline: float = LeaderElectionConfig.renew_deadline
    """Seconds a leader may fail to renew before it stops writing."""
    retry_period: float = LeaderElectionConfig.retry_period
    """Seconds between lease renewals and acquisition attempts."""

    def config(self, identity: str) -> LeaderElectionConfig:
        return LeaderElectionConfig(
            LEASE_NAME, self.namespace, identity, self.lease_duration, self.renew_deadline, self.retry_period
        )


@dataclass(frozen=True)
class ApiSettings:
    """The API client's own rate limit (client-go's QPS and burst)."""

    qps: float = DEFAULT_QPS
    """Requests per second."""
    burst: int = DEFAULT_BURST


@dataclass(frozen=True)
class ProbeSettings:
    host: str = "0.0.0.0"
    port: int | None = None
    """Port of /healthz, /readyz and /metrics; None serves none."""


@dataclass(frozen=True)
class Serving:
    """Where the process serves its probes and metrics (``host:port`` or ``:port``;
    ``0``: nowhere), as controller-runtime's flags."""

    metrics_bind_address: str = ":8080"
    health_probe_bind_address: str = ":8081"


@dataclass(frozen=True)
class Webhooks:
    """The admission webhook server."""

    enabled: bool = True
    port: int = 9443
    host: str = "0.0.0.0"
    service: str = "mo-operator-webhook"
    """The webhook Service (in the operator's namespace): the name its certificate is for."""


@dataclass(frozen=True)
class Startup:
    """How a start waits for the kinds it watches to be served (CRDs installed later)."""

    api_poll_seconds: float = 5.0
    """How often it looks whether they are served."""
    api_remind_seconds: float = 60.0
    """How often it says again which are missing."""


@dataclass(frozen=True)
class OperatorConfig:
    """How the operator process runs (see ``mo-operator run --help``)."""

    settings: Settings = field(default_factory=Settings)
    leader: LeaderElection = field(default_factory=LeaderElection)
    api: ApiSettings = field(default_factory=ApiSettings)
    probes: ProbeSettings = field(default_factory=ProbeSettings)
    workers: int = 4
    """Concurrent reconciles per controller."""
    watch_stall_seconds: float = 180.0
    """A watch that brings no event and no bookmark for this long is restarted
    (kube-apiserver sends a bookmark about every minute)."""
    serving: Serving = field(default_factory=Serving)
    webhooks: Webhooks = field(default_factory=Webhooks)
    startup: Startup = field(default_factory=Startup)
