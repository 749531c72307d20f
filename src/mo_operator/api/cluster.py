"""MatrixOneCluster: a whole cluster, whose controller creates and syncs the sets."""

from __future__ import annotations

from typing import Annotated

from .base import APIModel, opt, req
from .cnset import CNSetSpec
from .common import ConditionalStatus, PullPolicy, SummaryStatus
from .dnset import DNSetSpec, DNSetStatus
from .fields import CRDHint, Int64, Quantity
from .k8s import LocalObjectReference, Resource
from .limits import MAX_NAME_LENGTH, MAX_REPOSITORY_LENGTH, MAX_TAG_LENGTH, MAX_VERSION_LENGTH
from .logset import LogSetSpec, LogSetStatus
from .proxyset import ProxySetSpec, ProxySetStatus
from .webui import WebUISpec, WebUIStatus

__all__ = [
    "CNGroup",
    "CNGroupStatus",
    "CNGroupsStatus",
    "ClusterMetrics",
    "MatrixOneCluster",
    "MatrixOneClusterSpec",
    "MatrixOneClusterStatus",
    "ReadableStatus",
]


class CNGroup(CNSetSpec):
    """A CN group: a CNSet of the cluster with its own image, resources, labels and config."""

    name: str = req("Name of the group, unique in the cluster; the CNSet is named <cluster>-<name>.")


class MatrixOneClusterSpec(APIModel):
    """Desired state of a MatrixOneCluster."""

    tp: CNSetSpec | None = opt("Deprecated, use cnGroups: the default CN group that serves queries.")
    ap: CNSetSpec | None = opt("Deprecated, use cnGroups: a CN group that runs MPP sub-plans.")
    cn_groups: Annotated[list[CNGroup], CRDHint(list_type="map", list_map_keys=("name",))] | None = opt(
        "The CN groups of the cluster, by name; each becomes a CNSet."
    )
    dn: DNSetSpec | None = opt("Deprecated, use tn: the transaction node set (DN).")
    tn: DNSetSpec | None = opt("The transaction node set (TN); either tn or dn is required.")
    log_service: LogSetSpec = req("The log service set.")
    webui: WebUISpec | None = opt("An optional web console.")
    proxy: ProxySetSpec | None = opt("An optional MySQL proxy in front of the CN groups.")
    version: str = req(
        "MatrixOne version of the cluster: the image tag of every component that names no image.",
        max_length=MAX_TAG_LENGTH,
    )
    image_repository: str | None = opt(
        "Image repository of the components (e.g. matrixorigin/matrixone or a registry mirror).",
        max_length=MAX_REPOSITORY_LENGTH,
    )
    topology_spread: list[str] | None = opt(
        "Default topology keys every component's pods are spread over; a component's own setting wins."
    )
    node_selector: dict[str, str] | None = opt(
        "Default node labels for every component's pods; a component's own setting wins."
    )
    image_pull_policy: PullPolicy | None = opt("Pull policy of every component's image.")
    restore_from: str | None = opt(
        "Name of a Backup to restore the new cluster from; immutable.", max_length=MAX_NAME_LENGTH
    )
    metric_reader_enabled: bool | None = opt(
        "Upstream creates a metric_reader SQL user with it; accepted for compatibility, it has no effect "
        "here (the webhook warns)."
    )
    semantic_version: str | None = opt(
        "The MatrixOne semantic version, when version is not one (e.g. a nightly build); without a "
        "semantic version, version-gated behaviour is that of MatrixOne before 2.0.",
        max_length=MAX_VERSION_LENGTH,
    )
    operator_version: str | None = opt(
        "The operator behaviour version that reconciles the cluster; set to the newest on create, and it "
        "may only grow.",
        max_length=MAX_VERSION_LENGTH,
    )
    memory_fs_size: Quantity | None = opt(
        "Size of an in-memory filesystem for the MatrixOne binary in every component's pods."
    )


class ClusterMetrics(APIModel):
    """The SQL user that reads the cluster's metrics."""

    secret_ref: LocalObjectReference | None = opt("Secret with the metric reader's credentials.")
    initialized: bool | None = opt("Whether the metric reader user exists.")


class ReadableStatus(APIModel):
    """A one-line summary per component, for people."""

    log: str | None = opt("Summary of the log service.")
    dn: str | None = opt("Summary of the TN set.")
    cn: str | None = opt("Summary of the CN groups.")


class CNGroupStatus(APIModel):
    """State of one CN group."""

    name: str | None = opt("Name of the group.")
    host: str | None = opt("Host name of the group's client Service.")
    ready: bool | None = opt("Whether the group is Ready.")
    synced: bool | None = opt("Whether the group is Synced.")


class CNGroupsStatus(APIModel):
    """State of the CN groups."""

    desired_groups: Int64 | None = opt("Groups the spec asks for.")
    ready_groups: Int64 | None = opt("Groups that are Ready.")
    synced_groups: Int64 | None = opt("Groups that are Synced.")
    groups: list[CNGroupStatus] | None = opt("Each group's state.")


class MatrixOneClusterStatus(ConditionalStatus, SummaryStatus):
    """Observed state of a MatrixOneCluster."""

    phase: str | None = opt(
        "Ready, NotReady, or Upgrading while a change rolls through a cluster that was Ready (it stays "
        "Upgrading until the roll completes, whatever the sets' readiness meanwhile); for people, "
        "programs should read the conditions."
    )
    credential_ref: LocalObjectReference | None = opt(
        "Secret with the initial database credential (keys username and password)."
    )
    cluster_metrics: ClusterMetrics | None = opt("The metric reader user.")
    cn_groups: CNGroupsStatus | None = opt("State of the CN groups.")
    dn: DNSetStatus | None = opt("State of the TN set.")
    proxy: ProxySetStatus | None = opt("State of the proxy.")
    webui: WebUIStatus | None = opt("State of the web console.")
    log_service: LogSetStatus | None = opt("State of the log service.")
    readable: ReadableStatus | None = opt("A summary per component.")
    host: str | None = opt("Host name clients connect to (the proxy's, else the first CN group's).")
    port: Int64 | None = opt("MySQL port clients connect to.")


class MatrixOneCluster(Resource):
    """A MatrixOneCluster is a whole MatrixOne cluster: a log service, a TN set, CN groups and an
    optional proxy and web console, each run as its own set."""

    spec: MatrixOneClusterSpec = req("Desired state of the cluster.")
    status: MatrixOneClusterStatus | None = opt("Observed state of the cluster.")
