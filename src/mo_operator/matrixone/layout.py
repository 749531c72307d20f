"""Where things live inside a MatrixOne container: volumes, mount paths, file names, env.

The start scripts and the TOML refer to these paths, and the controllers mount volumes
at them; keeping both sides on the same constants is what makes a rendered config
runnable. Values follow upstream (common/template.go, common/configmap.go,
logset/sts.go, common/fileservice.go) so that existing clusters keep their layout.
"""

from __future__ import annotations

from typing import Final

from mo_operator.matrixone.component import Component

MAIN_CONTAINER: Final = "main"
PYTHON_UDF_CONTAINER: Final = "python-udf"
MO_SERVICE_BINARY: Final = "/mo-service"

# Data volume (a PVC for the log service, optional cache volume for TN and CN).
DATA_VOLUME: Final = "mo-data"
DATA_PATH: Final = "/var/lib/matrixone"
DATA_DIR: Final = f"{DATA_PATH}/data"
"""The TOML ``data-dir`` and the LOCAL fileservice directory."""
DISK_CACHE_DIR: Final = f"{DATA_PATH}/disk-cache"

# Config volume. The log service mounts it elsewhere than the other components (upstream).
CONFIG_VOLUME: Final = "config"
CONFIG_PATH: Final = "/etc/matrixone/config"
LOG_CONFIG_PATH: Final = "/etc/logservice"
CONFIG_FILE: Final = "config.toml"
LOG_CONFIG_FILE: Final = "logservice.toml"
ENTRYPOINT_FILE: Final = "start.sh"

# Log-only volumes: bootstrap and gossip seeds change without restarting log pods.
BOOTSTRAP_VOLUME: Final = "bootstrap"
BOOTSTRAP_PATH: Final = "/etc/bootstrap"
BOOTSTRAP_FILE: Final = "bootstrap.toml"
GOSSIP_VOLUME: Final = "gossip"
GOSSIP_PATH: Final = "/etc/gossip"
GOSSIP_FILE: Final = "gossip.toml"

# Object storage TLS certificates (S3 certificateRef).
S3_CERT_VOLUME: Final = "s3-ssl"
S3_CERT_PATH: Final = "/etc/s3-ssl"

# memoryFsSize: the binary is copied to a tmpfs and run from there.
MEMORY_FS_VOLUME: Final = "tmpfs"
MEMORY_BIN_PATH: Final = "/matrixone/bin"

# Environment variables the start script reads (set by the pod template).
ENV_POD_NAME: Final = "POD_NAME"
ENV_NAMESPACE: Final = "NAMESPACE"
ENV_POD_IP: Final = "POD_IP"
ENV_HEADLESS_SERVICE: Final = "HEADLESS_SERVICE_NAME"
ENV_MO_BIN_PATH: Final = "MO_BIN_PATH"
ENV_HOSTNAME_UUID: Final = "HOSTNAME_UUID"
"""When set, log and TN derive their UUID from their DNS name (``dnsBasedIdentity``)."""
ENV_GOMEMLIMIT: Final = "GOMEMLIMIT"
ENV_AWS_ACCESS_KEY_ID: Final = "AWS_ACCESS_KEY_ID"
ENV_AWS_SECRET_ACCESS_KEY: Final = "AWS_SECRET_ACCESS_KEY"
ENV_AWS_REGION: Final = "AWS_REGION"
DEFAULT_AWS_REGION: Final = "us-west-2"
ENV_DEFAULT_PASSWORD: Final = "DEFAULT_PASSWORD"


def config_dir(component: Component) -> str:
    """The directory the component's config volume is mounted at."""
    return LOG_CONFIG_PATH if component is Component.LOG else CONFIG_PATH


def config_file(component: Component) -> str:
    """The ConfigMap key (and file name) of the component's TOML."""
    return LOG_CONFIG_FILE if component is Component.LOG else CONFIG_FILE


def entrypoint_command(component: Component) -> list[str]:
    """The main container's command: run the rendered start script with /bin/sh.

    Service arguments (``spec.serviceArgs``) go in the container's args and reach
    ``mo-service`` through the script's ``"$@"``.
    """
    return ["/bin/sh", f"{config_dir(component)}/{ENTRYPOINT_FILE}"]
