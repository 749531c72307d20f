"""MatrixOne's backup tool ``mo_br``: the command lines a backup or restore job runs,
and the metadata a backup leaves.

The command lines are upstream's (``pkg/controllers/br/command.go``): the same flags in
the same order, so a backup made by our operator and one made by upstream's are made
the same way. Credentials never appear in them: they reach ``mo_br`` through
environment variables the job's pod takes from Secrets (``$MO_USER``, ``$MO_PASSWORD``,
``$AWS_ACCESS_KEY_ID``...), expanded by the shell inside the container. Every value
from a spec is shell-quoted (an endpoint or path with a space or a ``;`` stays one
argument, never a second command); values without special characters read exactly as
upstream writes them.

Where upstream runs the command under an HTTP wrapper (``/cmdrest``) and polls it for
the output, ours ends by copying ``mo_br.meta`` to the container's termination-message
file, so the backup's metadata arrives in the pod's status
(``state.terminated.message``); on failure, ``terminationMessagePolicy:
FallbackToLogsOnError`` puts the tail of ``mo_br``'s output there instead.

``mo_br.meta`` holds one CSV line per backup, the backup's ID first (mo_ctl reads it
with ``awk -F ','``). Past the ID, the fields follow ``mo_br list``'s columns (size,
path, at time, duration, complete time); they are read when they parse and ignored
otherwise, since only the ID is certain.
"""

from __future__ import annotations

import datetime
import hashlib
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from mo_operator.kube.meta.times import format_time
from mo_operator.matrixone import layout
from mo_operator.matrixone.config.fileservice import DEFAULT_S3_ENDPOINT

DEFAULT_IMAGE: Final = "matrixorigin/mobr:1.0.0-rc1"
"""The backup tool's image (upstream chart's ``backupRestore.image``)."""
CONTAINER: Final = "br"
"""The name of the job's container (upstream's)."""
BINARY: Final = "/mo_br"
META_FILE: Final = "/mo_br.meta"
TERMINATION_MESSAGE_PATH: Final = "/dev/termination-log"
TERMINATION_MESSAGE_POLICY: Final = "FallbackToLogsOnError"
MAX_MESSAGE_BYTES: Final = 4096
"""What the kubelet keeps of a termination message (a longer metadata file is cut)."""

ENV_MO_USER: Final = "MO_USER"
ENV_MO_PASSWORD: Final = "MO_PASSWORD"
ENV_RESTORE_ACCESS_KEY_ID: Final = "RESTORE_ACCESS_KEY_ID"
ENV_RESTORE_SECRET_ACCESS_KEY: Final = "RESTORE_SECRET_ACCESS_KEY"
ENV_RAW_META: Final = "RAW_META"
CREDENTIAL_USERNAME_KEY: Final = "username"
CREDENTIAL_PASSWORD_KEY: Final = "password"

HAKEEPER_DATA_PATH: Final = "hk_data"
"""Where a restore leaves the HAKeeper's data, under the target path: a LogSet restoring
from a backup bootstraps from ``BACKUP://hk_data`` (upstream's ``defaultHKDataPath``)."""


class MetadataError(ValueError):
    """The backup tool's metadata cannot be read."""


@dataclass(frozen=True)
class S3Target:
    """An S3 location as ``mo_br`` takes it: endpoint, bucket, path under the bucket."""

    endpoint: str
    bucket: str
    path: str
    minio: bool = False
    secret: str | None = None
    """The Secret holding AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, if any."""

    @classmethod
    def of(cls, provider: Mapping[str, Any]) -> S3Target:
        """From a ``SharedStorageProvider`` with ``s3`` (``path`` is ``bucket/prefix``).

        An unset endpoint is AWS's, the same default the cluster's own fileservices get,
        so a backup or restore reaches the storage the cluster uses."""
        s3 = provider.get("s3")
        if not isinstance(s3, Mapping):
            raise ValueError("only s3 storage is supported")
        bucket, _, path = str(s3.get("path") or "").strip("/").partition("/")
        if not bucket:
            raise ValueError("s3.path must name a bucket")
        return cls(
            endpoint=str(s3.get("endpoint") or DEFAULT_S3_ENDPOINT),
            bucket=bucket,
            path=path.strip("/"),
            minio=s3.get("type") == "minio",
            secret=(s3.get("secretRef") or {}).get("name") or None,
        )

    @property
    def url(self) -> str:
        """``s3://bucket/path``, for messages."""
        return f"s3://{self.bucket}/{self.path}".rstrip("/")


def _q(value: object) -> str:
    return shlex.quote(str(value))


def _env(name: str) -> str:
    """A reference to an environment variable, expanded by the shell as one argument."""
    return f'"${name}"'


def backup_script(host: str, port: int, target: S3Target) -> str:
    """The shell command of a backup job: ``mo_br backup``, then its metadata to the
    termination-message file."""
    args = [
        f"{BINARY} backup",
        f"--host={_q(host)}",
        f"--port={int(port)}",
        f"--user={_env(ENV_MO_USER)}",
        f"--password={_env(ENV_MO_PASSWORD)}",
        "--backup_dir=s3",
        f"--endpoint={_q(target.endpoint)}",
        f"--bucket={_q(target.bucket)}",
    ]
    if target.path:
        args.append(f"--filepath={_q(target.path)}")
    if target.minio:
        args.append("--is_minio")
    if target.secret:
        args.append(f"--access_key_id={_env(layout.ENV_AWS_ACCESS_KEY_ID)}")
        args.append(f"--secret_access_key={_env(layout.ENV_AWS_SECRET_ACCESS_KEY)}")
    return " ".join(args) + f" && cat {META_FILE} > {TERMINATION_MESSAGE_PATH}"


_META_BACK: Final = (
    f"echo {_env(ENV_RAW_META)} > {META_FILE}"
    f" && sha256sum {META_FILE} | awk '{{printf \"%s\",$1}}' > {META_FILE}.sha256"
)
"""The backup's metadata back into ``mo_br.meta``, with the checksum ``mo_br`` checks."""


def restore_script(backup_id: str, source: S3Target, target: S3Target) -> str:
    """The shell command of a restore job: the backup's metadata (``$RAW_META``) back into
    ``mo_br.meta`` with its checksum, then ``mo_br restore <id>`` into ``target``."""
    args = [
        _META_BACK,
        f"&& {BINARY} restore {_q(backup_id)}",
        "--restore_dir s3",
    ]
    if source.secret:
        args.append(f"--backup_access_key_id={_env(layout.ENV_AWS_ACCESS_KEY_ID)}")
        args.append(f"--backup_secret_access_key={_env(layout.ENV_AWS_SECRET_ACCESS_KEY)}")
    args.append(f"--restore_endpoint={_q(target.endpoint)}")
    args.append(f"--restore_bucket={_q(target.bucket)}")
    if target.path:
        args.append(f"--restore_filepath={_q(target.path)}")
    if target.secret:
        args.append(f"--restore_access_key_id={_env(ENV_RESTORE_ACCESS_KEY_ID)}")
        args.append(f"--restore_secret_access_key={_env(ENV_RESTORE_SECRET_ACCESS_KEY)}")
    if target.minio:
        args.append("--restore_is_minio")
    return " ".join(args)


def delete_script(backup_id: str) -> str:
    """The shell command of a deletion job: the backup's metadata (``$RAW_META``) back
    into ``mo_br.meta`` with its checksum, as for a restore, then ``mo_br delete <id>``,
    which removes the backup's data from the storage that metadata names."""
    return f"{_META_BACK} && {BINARY} delete {_q(backup_id)}"


def delete_env(raw_meta: str, source: S3Target) -> list[dict[str, Any]]:
    """The deletion container's environment: the backup's metadata and its storage's keys."""
    env: list[dict[str, Any]] = [{"name": ENV_RAW_META, "value": raw_meta}]
    if source.secret:
        for key in (layout.ENV_AWS_ACCESS_KEY_ID, layout.ENV_AWS_SECRET_ACCESS_KEY):
            env.append(_secret_env(key, source.secret, key))
    return env


def _secret_env(name: str, secret: str, key: str) -> dict[str, Any]:
    return {"name": name, "valueFrom": {"secretKeyRef": {"name": secret, "key": key}}}


def backup_env(credential_secret: str, target: S3Target) -> list[dict[str, Any]]:
    """The backup container's environment: every credential by Secret reference."""
    env = [
        _secret_env(ENV_MO_USER, credential_secret, CREDENTIAL_USERNAME_KEY),
        _secret_env(ENV_MO_PASSWORD, credential_secret, CREDENTIAL_PASSWORD_KEY),
    ]
    if target.secret:
        for key in (layout.ENV_AWS_ACCESS_KEY_ID, layout.ENV_AWS_SECRET_ACCESS_KEY):
            env.append(_secret_env(key, target.secret, key))
    return env


def restore_env(raw_meta: str, source: S3Target, target: S3Target) -> list[dict[str, Any]]:
    """The restore container's environment: the backup's metadata, the source's keys
    as AWS_*, the target's as RESTORE_* (each from its own Secret, which upstream
    mixes up: it reads the target's keys from the source's Secret)."""
    env: list[dict[str, Any]] = [{"name": ENV_RAW_META, "value": raw_meta}]
    if source.secret:
        for key in (layout.ENV_AWS_ACCESS_KEY_ID, layout.ENV_AWS_SECRET_ACCESS_KEY):
            env.append(_secret_env(key, source.secret, key))
    if target.secret:
        env.append(_secret_env(ENV_RESTORE_ACCESS_KEY_ID, target.secret, layout.ENV_AWS_ACCESS_KEY_ID))
        env.append(
            _secret_env(ENV_RESTORE_SECRET_ACCESS_KEY, target.secret, layout.ENV_AWS_SECRET_ACCESS_KEY)
        )
    return env


# ----------------------------------------------------------------- metadata
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
_SIZE = re.compile(r"([0-9]+(?:\.[0-9]+)?)\s*([A-Za-z]*)")
_SIZE_UNITS = {
    "": 1,
    "b": 1,
    "kb": 1000,
    "mb": 1000**2,
    "gb": 1000**3,
    "tb": 1000**4,
    "kib": 1024,
    "mib": 1024**2,
    "gib": 1024**3,
    "tib": 1024**4,
}
_TIME_FORMATS = ("%Y-%m-%d %H:%M:%S %z", "%Y-%m-%d %H:%M:%S.%f %z")


@dataclass(frozen=True)
class BackupMetadata:
    """What ``mo_br`` tells of a backup it made."""

    id: str
    raw: str
    """The metadata as written, handed back to ``mo_br`` on restore."""
    size: int | None = None
    """Bytes."""
    path: str | None = None
    at_time: str | None = None
    """RFC 3339, UTC."""
    complete_time: str | None = None


def _size(text: str) -> int | None:
    m = _SIZE.fullmatch(text.strip())
    if m is None:
        return None
    unit = _SIZE_UNITS.get(m.group(2).lower())
    return None if unit is None else int(float(m.group(1)) * unit)


def _time(text: str) -> str | None:
    """``mo_br``'s time (RFC 3339, or Go's ``2006-01-02 15:04:05 -0700``) as ``metav1.Time``.

    Not ``kube.meta.times.parse_time``: that reads only RFC 3339, and would take a time
    without a zone as local time, where a zoneless ``mo_br`` time is unreadable."""
    text = text.strip()
    if not text:
        return None
    try:
        when = datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        when = None
        for fmt in _TIME_FORMATS:
            try:
                when = datetime.datetime.strptime(text, fmt)
                break
            except ValueError:
                continue
    if when is None or when.tzinfo is None:
        return None
    return format_time(when)


def parse_metadata(text: str) -> BackupMetadata:
    """The backup in ``mo_br.meta`` (its last line: the file may list earlier backups)."""
    raw = text.strip()
    lines = [line for line in raw.splitlines() if line.strip()]
    if not lines:
        raise MetadataError("the backup tool left no metadata")
    fields = [f.strip() for f in lines[-1].split(",")]
    backup_id = fields[0]
    if not _ID.fullmatch(backup_id):
        raise MetadataError(f"the backup metadata does not start with a backup ID: {lines[-1][:80]!r}")

    def field(i: int) -> str:
        return fields[i] if len(fields) > i else ""

    return BackupMetadata(
        id=backup_id,
        raw=raw,
        size=_size(field(1)),
        path=field(2) or None,
        at_time=_time(field(3)),
        complete_time=_time(field(5)),
    )


def format_metadata(
    backup_id: str, size: int, path: str, at_time: str, duration: str, complete_time: str
) -> str:
    """One ``mo_br.meta`` line, as :func:`parse_metadata` reads it."""
    return ",".join((backup_id, str(size), path, at_time, duration, complete_time))


_DNS_SAFE = re.compile(r"[a-z0-9]+")


def backup_name(job_name: str, backup_id: str) -> str:
    """``<job>-<first 5 characters of the ID>``: the Backup a BackupJob records (upstream's
    name). An ID whose start is not DNS-safe is hashed instead."""
    head = backup_id[:5].lower()
    if not _DNS_SAFE.fullmatch(head):
        head = hashlib.sha256(backup_id.encode()).hexdigest()[:5]
    return f"{job_name}-{head}"
