"""The parts every MatrixOne set shares (upstream ``common_types.go``): the pod set,
its overlay, volumes, shared object storage, the LogSet reference, failover and
conditional status, the rolling update strategy."""

from __future__ import annotations

from typing import Annotated, Final, Literal

from .base import APIModel, OpenModel, opt, req
from .fields import CRDHint, DateTime, FreeObject, Int32, Int64, IntOrString, Quantity, TomlText
from .k8s import Condition, ConditionList, LocalObjectReference, ResourceRequirements
from .limits import (
    MAX_CONFIG_LENGTH,
    MAX_ENDPOINT_LENGTH,
    MAX_IMAGE_LENGTH,
    MAX_NAME_LENGTH,
    MAX_PATH_LENGTH,
    MAX_REGION_LENGTH,
    MAX_REPLICAS,
    MAX_S3_PATH_LENGTH,
    MAX_VERSION_LENGTH,
)

__all__ = [
    "CertificateRef",
    "ConditionalStatus",
    "DisruptionBudget",
    "ExternalLogSet",
    "FailoverStatus",
    "FileSystemProvider",
    "JobOverlay",
    "LogSetRef",
    "MainContainerOverlay",
    "ObjectByMeta",
    "Overlay",
    "PodSet",
    "PullPolicy",
    "RefMeta",
    "RetentionPolicy",
    "RollingUpdateStrategy",
    "S3Provider",
    "ServiceType",
    "ServiceTypeField",
    "SharedStorageCache",
    "SharedStorageProvider",
    "Store",
    "Volume",
]

PullPolicy = Literal["Always", "Never", "IfNotPresent"]
ServiceType = Literal["ClusterIP", "NodePort", "LoadBalancer"]
RetentionPolicy = Literal["Delete", "Retain"]

ServiceTypeField = Annotated[ServiceType | None, CRDHint(default="ClusterIP")]
"""A Service type field, ClusterIP when unset (a schema default, as upstream's CRDs have)."""


class MainContainerOverlay(APIModel):
    """Overrides of the main container that the operator builds."""

    command: list[str] | None = opt("Replaces the main container's command.")
    args: list[str] | None = opt("Replaces the main container's arguments.")
    env_from: list[FreeObject] | None = opt(
        "Replaces the main container's envFrom (corev1.EnvFromSource list)."
    )
    env: list[FreeObject] | None = opt(
        "Environment variables (corev1.EnvVar) added to the main container; one with the name of an "
        "operator-set variable replaces it."
    )
    image_pull_policy: PullPolicy | None = opt(
        "Pull policy of the MatrixOne image: Always, Never or IfNotPresent."
    )
    volume_mounts: list[FreeObject] | None = opt(
        "Volume mounts (corev1.VolumeMount) of the main container, upserted by name."
    )
    liveness_probe: FreeObject | None = opt("Liveness probe (corev1.Probe) of the main container.")
    readiness_probe: FreeObject | None = opt("Readiness probe (corev1.Probe) of the main container.")
    startup_probe: FreeObject | None = opt("Startup probe (corev1.Probe) of the main container.")
    lifecycle: FreeObject | None = opt("Lifecycle hooks (corev1.Lifecycle) of the main container.")
    main_container_security_context: FreeObject | None = opt(
        "Security context (corev1.SecurityContext) of the main container."
    )


class Overlay(MainContainerOverlay):
    """Advanced customisation of the pods of a set, applied over what the operator generates."""

    volumes: list[FreeObject] | None = opt("Pod volumes (corev1.Volume), upserted by name.")
    volume_claims: list[FreeObject] | None = opt(
        "Extra PersistentVolumeClaim templates appended to the set's volume claim templates."
    )
    init_containers: list[FreeObject] | None = opt("Init containers (corev1.Container); replaces the list.")
    sidecar_containers: list[FreeObject] | None = opt(
        "Sidecar containers (corev1.Container); replaces every container other than main."
    )
    service_account_name: str | None = opt("Service account the pods run as.")
    security_context: FreeObject | None = opt("Pod security context (corev1.PodSecurityContext).")
    image_pull_secrets: list[FreeObject] | None = opt(
        "Secrets (corev1.LocalObjectReference) used to pull the images."
    )
    affinity: FreeObject | None = opt("Scheduling affinity (corev1.Affinity) of the pods.")
    tolerations: list[FreeObject] | None = opt("Tolerations (corev1.Toleration) of the pods.")
    priority_class_name: str | None = opt("Priority class of the pods.")
    termination_grace_period_seconds: Int64 | None = opt(
        "Seconds a pod may take to stop gracefully after it is asked to."
    )
    host_aliases: list[FreeObject] | None = opt("Extra /etc/hosts entries (corev1.HostAlias).")
    topology_spread_constraints: list[FreeObject] | None = opt(
        "Topology spread constraints (corev1.TopologySpreadConstraint); replaces those built from "
        "topologySpread."
    )
    runtime_class_name: str | None = opt("RuntimeClass the pods run with.")
    dns_config: FreeObject | None = opt("DNS settings (corev1.PodDNSConfig) of the pods.")
    pod_labels: dict[str, str] | None = opt("Labels added to the pods (they may override the operator's).")
    pod_annotations: dict[str, str] | None = opt("Annotations added to the pods.")
    share_process_namespace: bool | None = opt("Whether the containers of a pod share one process namespace.")


POD_OVERLAY_FIELDS: Final = (
    "serviceAccountName",
    "securityContext",
    "imagePullSecrets",
    "affinity",
    "tolerations",
    "priorityClassName",
    "terminationGracePeriodSeconds",
    "hostAliases",
    "topologySpreadConstraints",
    "runtimeClassName",
    "dnsConfig",
    "shareProcessNamespace",
    "initContainers",
)
"""The overlay's fields every pod the operator builds (the WebUI's too) copies into its
spec as they are, by their JSON names."""


class JobOverlay(Overlay):
    """Customisation of the pod of a backup or restore job."""

    image_pull_policy: Annotated[PullPolicy | None, CRDHint(default="IfNotPresent")] = opt(
        "Pull policy of the job image: Always, Never or IfNotPresent."
    )


class PodSet(APIModel):
    """A set of identical MatrixOne pods: image, resources, replicas and their customisation."""

    image: str | None = opt(
        "Container image of the main container, e.g. matrixorigin/matrixone:1.2.3. Its tag is the "
        "MatrixOne version unless semanticVersion says otherwise.",
        max_length=MAX_IMAGE_LENGTH,
    )
    resources: ResourceRequirements | None = opt("Compute resources of the main container.")
    overlay: Overlay | None = opt(
        "Advanced customisation of the pods, applied over what the operator generates."
    )
    replicas: Int32 = req(f"Desired number of pods; at most {MAX_REPLICAS}.", ge=0, le=MAX_REPLICAS)
    topology_spread: list[str] | None = opt(
        "Topology keys (node labels such as kubernetes.io/hostname) the pods are spread evenly over, with "
        "maxSkew 1; overlay.topologySpreadConstraints overrides it."
    )
    node_selector: dict[str, str] | None = opt("Node labels a node must have to run the pods.")
    config: TomlText | None = opt(
        "MatrixOne configuration of the pods, as TOML text, merged under what the operator sets; at most "
        f"{MAX_CONFIG_LENGTH // 1024} KiB."
    )
    dns_based_identity: bool | None = opt(
        "Deprecated, kept for compatibility: derive each TN and CN store's identity from its pod's "
        "DNS name (log stores keep theirs by ordinal, as the HAKeeper was bootstrapped with them)."
    )
    cluster_domain: str | None = opt(
        "The Kubernetes cluster domain (default cluster.local), when it differs.", max_length=MAX_NAME_LENGTH
    )
    service_args: list[str] | None = opt(
        "Extra command-line arguments of mo-service (never -cfg, which the operator sets)."
    )
    memory_limit_percent: Int64 | None = opt(
        "Sets GOMEMLIMIT to this percent of the memory limit; in (0, 100]."
    )
    export_to_prometheus: bool | None = opt("Lets Prometheus discover and scrape the pods' metrics.")
    prom_discovery_scheme: str | None = opt(
        "How Prometheus discovers the pods when exportToPrometheus is on: Pod (annotations on the pods) or "
        "Service (annotations on the metric service, the default)."
    )
    semantic_version: str | None = opt(
        "The MatrixOne semantic version the image runs, when its tag is not one (e.g. a nightly build); "
        "without a semantic version, version-gated behaviour is that of MatrixOne before 2.0.",
        max_length=MAX_VERSION_LENGTH,
    )
    operator_version: str | None = opt(
        "The operator behaviour version that reconciles this set (1.2.0 if unset, legacy config maps); "
        "it may only grow.",
        max_length=MAX_VERSION_LENGTH,
    )
    memory_fs_size: Quantity | None = opt(
        "Size of an in-memory filesystem that holds the MatrixOne binary, to skip the page cache; none if unset."
    )


class Volume(APIModel):
    """A persistent volume of each pod of a set."""

    size: Quantity = req("Requested size of the volume, e.g. 10Gi; at most 1Pi. It may grow, never shrink.")
    storage_class_name: str | None = opt(
        "StorageClass of the volume; the cluster's default class if unset. It cannot change.",
        max_length=MAX_NAME_LENGTH,
    )
    memory_cache_size: Quantity | None = opt("Deprecated: use sharedStorageCache.memoryCacheSize.")


class CertificateRef(APIModel):
    """CA certificates, in a Secret, that the object storage's TLS is verified with."""

    name: str = req("Name of the Secret in the same namespace.", max_length=MAX_NAME_LENGTH)
    files: list[str] = req("Keys of the Secret that hold certificates.")


class S3Provider(APIModel):
    """An S3 bucket (AWS or MinIO) as shared storage."""

    path: str = req(
        'Bucket and key prefix of the data, "<bucket>/<prefix>", e.g. "my-bucket/my-folder"; at most '
        f"{MAX_S3_PATH_LENGTH} characters.",
        max_length=MAX_S3_PATH_LENGTH,
    )
    type: Literal["aws", "minio"] | None = opt("Kind of S3 service: aws (the default) or minio.")
    region: str | None = opt(
        "Region of the bucket; taken from the environment if unset.", max_length=MAX_REGION_LENGTH
    )
    endpoint: str | None = opt(
        "Endpoint URL of an S3-compatible service; AWS's when unset.", max_length=MAX_ENDPOINT_LENGTH
    )
    secret_ref: LocalObjectReference | None = opt(
        "Secret with the keys AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY; credentials come from the "
        "environment if unset."
    )
    certificate_ref: CertificateRef | None = opt("Custom CA certificates of the object storage.")
    s3_retention_policy: RetentionPolicy | None = opt(
        "What happens to the data under path when its LogSet (or cluster) is deleted: Retain it (the "
        "default; upstream's default is Delete), leaving its BucketClaim Released, or Delete it with a "
        "cleanup Job. Follows the LogSet's pvcRetentionPolicy when only that is set. On a BucketClaim: "
        "whether deleting the claim deletes the data. Unused by backups and restores."
    )


class FileSystemProvider(APIModel):
    """A shared filesystem path (e.g. NFS) mounted at the same path in every pod."""

    path: str = req("Path where the shared filesystem is mounted.", max_length=MAX_PATH_LENGTH)


class SharedStorageProvider(APIModel):
    """Where the cluster's data lives; exactly one provider must be set."""

    s3: S3Provider | None = opt("An S3 bucket (AWS or MinIO); mutually exclusive with fileSystem.")
    file_system: FileSystemProvider | None = opt("A shared filesystem path; mutually exclusive with s3.")


class SharedStorageCache(APIModel):
    """Local caches of the objects read from shared storage."""

    memory_cache_size: Quantity | None = opt(
        "Memory used to cache objects; defaults to half the memory request. It cannot be disabled; 1 "
        "nearly disables it."
    )
    disk_cache_size: Quantity | None = opt(
        "Disk used to cache objects; defaults to 90% of cacheVolume. Needs a cacheVolume."
    )


class RefMeta(OpenModel):
    """The name and namespace of a referenced object."""

    name: str | None = opt("Name of the referenced object.")
    namespace: str | None = opt("Namespace of the referenced object; the referrer's own if unset.")


class ObjectByMeta(OpenModel):
    """A reference written as an object with metadata; only metadata.name and metadata.namespace count."""

    metadata: RefMeta | None = opt("Identifies the referenced object.")


class ExternalLogSet(APIModel):
    """A log service (HAKeeper) outside this Kubernetes cluster or namespace."""

    ha_keeper_endpoint: str = req('Address of the HAKeeper, "host:port".')


class LogSetRef(APIModel):
    """The log service a set connects to: a LogSet or an external one."""

    log_set: ObjectByMeta | None = opt(
        "The LogSet, as {metadata: {name, namespace}}; mutually exclusive with externalLogSet."
    )
    external_log_set: ExternalLogSet | None = opt(
        "A log service outside Kubernetes; mutually exclusive with logSet."
    )


class Store(APIModel):
    """One store (pod) of a set as failover sees it."""

    pod_name: str | None = opt("Name of the store's pod.")
    phase: str | None = opt("Up or Down.")
    last_transition: DateTime | None = opt("When the store last changed phase.")


class ConditionalStatus(APIModel):
    """Standard status: the generation last acted on, and conditions (Ready, Synced, ...)."""

    observed_generation: Int64 | None = opt("The metadata.generation the controller last reconciled.", ge=0)
    conditions: ConditionList | None = opt("Current conditions, at most one per type (Ready, Synced, ...).")

    def condition(self, type: str) -> Condition | None:
        """The condition ``type``, if the status has one."""
        return next((c for c in self.conditions or () if c.type == type), None)

    def is_true(self, type: str) -> bool:
        """Whether the condition ``type`` is there and ``True``."""
        found = self.condition(type)
        return found is not None and found.status == "True"


class SummaryStatus(APIModel):
    """What ``kubectl get`` shows of an object, one field per column: its ready members
    as ``2/3``, the MatrixOne version it runs, and what is not fine."""

    readiness: str | None = opt('Members ready over members desired, as kubectl shows it: "2/3".')
    version: str | None = opt(
        "The MatrixOne version (image tag) the pods run; while a roll is under way, every version "
        "running, most pods first, comma-separated."
    )
    message: str | None = opt(
        "The first condition that is not fine, as reason and message; empty when all are."
    )


class RolloutStatus(SummaryStatus):
    """A set's summary, and how many of its pods run its current spec."""

    updated_replicas: Int32 | None = opt("Pods that run the set's current spec.")


class FailoverStatus(APIModel):
    """The stores of a set, split by health."""

    available_stores: list[Store] | None = opt("Stores that are up.")
    failed_stores: list[Store] | None = opt("Stores that are down, with when they went down.")


class DisruptionBudget(APIModel):
    """The PodDisruptionBudget the operator keeps for a set's pods: how many a node drain
    (or any other user of the Eviction API) may take down at once."""

    enabled: bool | None = opt(
        "Keep a PodDisruptionBudget for the set's pods: true (the default) or false, which removes it."
    )
    max_unavailable: IntOrString | None = opt(
        'Pods that may be evicted while the others are not ready: a count or a percentage ("25%"). '
        "When neither this nor minAvailable is set: for a log service, as many as its Raft groups can "
        "lose and keep a majority (1 of 3, 2 of 5, 0 of 1); for TN, CN and proxy sets, 1. Mutually "
        "exclusive with minAvailable."
    )
    min_available: IntOrString | None = opt(
        'Pods that must stay ready through evictions: a count or a percentage ("50%"); mutually '
        "exclusive with maxUnavailable."
    )


class RollingUpdateStrategy(APIModel):
    """How many pods a rolling update may add or take down at a time."""

    max_surge: IntOrString | None = opt(
        'Pods that may be created above the desired number during an update: a count or a percentage ("25%").'
    )
    max_unavailable: IntOrString | None = opt(
        'Pods that may be unavailable during an update: a count or a percentage ("25%").'
    )
