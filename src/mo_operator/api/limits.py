"""Documented limits of what a spec may ask for (docs/webhooks.md, "Limits").

Each one bounds what a single object can make the operator (and MatrixOne) do,
so that no spec takes the operator down or is accepted only to fail later:
the schema carries the bounds OpenAPI can say (kube-apiserver applies them even
without our webhook), the validation rules the rest; both the webhook and the
reconcilers' admission check them all.
"""

from __future__ import annotations

from typing import Final

MAX_REPLICAS: Final = 1000
"""Pods of one set (and claims of a claim set, idle or total pods of a pool). A set's
status lists each of its stores, and a set's reconcile looks at every pod: a
thousand keeps both well inside an object's size limit (etcd's 1.5 MiB) and a
reconcile's time bounded. Scale out with more sets (CN groups) beyond it."""

MAX_SHARDS: Final = MAX_REPLICAS
"""Log and TN shards, and replicas of each log shard (at most the log stores anyway)."""

MAX_IMAGE_LENGTH: Final = 512
"""An image reference: a repository of at most 255 characters (the distribution
spec's), a tag of at most 128 and a digest."""
MAX_REPOSITORY_LENGTH: Final = 255
"""An image repository (``imageRepository``), the distribution spec's name limit."""
MAX_TAG_LENGTH: Final = 128
"""An image tag (a cluster's ``version`` is the tag of its components' images)."""
MAX_VERSION_LENGTH: Final = 128
"""``semanticVersion`` and ``operatorVersion``."""

MAX_CONFIG_LENGTH: Final = 256 * 1024
"""A set's TOML ``config``: it is rendered into a ConfigMap, which holds at most 1 MiB."""

MAX_S3_PATH_LENGTH: Final = 1024
"""``<bucket>/<prefix>``: an S3 object key has at most 1,024 bytes, and the prefix is part of each."""
MAX_ENDPOINT_LENGTH: Final = 2048
"""An S3 endpoint URL."""
MAX_REGION_LENGTH: Final = 64
"""An S3 region (AWS's longest are about 20 characters)."""
MAX_PATH_LENGTH: Final = 4096
"""A file system path (Linux's PATH_MAX)."""
MAX_NAME_LENGTH: Final = 253
"""A reference to a Kubernetes object by name (a DNS subdomain)."""

MAX_VOLUME_SIZE: Final = "1Pi"
"""A volume or cache size: no storage class provisions more (AWS, GCE and Azure disks
stop at 64 TiB)."""
