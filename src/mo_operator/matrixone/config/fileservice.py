"""The ``fileservice`` list: where each MatrixOne component keeps local, shared and ETL data.

Built from the LogSet's ``sharedStorage`` (exactly one of ``s3`` / ``fileSystem``) and
a set's ``sharedStorageCache``, the way upstream's ``common/fileservice.go`` builds it,
so a migrated cluster keeps reading its data from the same bucket and prefix.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mo_operator.matrixone import layout
from mo_operator.matrixone.config.tomlconfig import ConfigError, Table

LOCAL = "LOCAL"
SHARED = "S3"
ETL = "ETL"
BACKUP = "BACKUP"
"""The fileservice a restoring log service reads its HAKeeper backup from."""

DEFAULT_S3_ENDPOINT = "s3.us-west-2.amazonaws.com"


def _size(quantity: Any) -> str:
    # MatrixOne reads sizes with a unit; upstream appends "B" to the quantity
    # ("1Gi" -> "1GiB") to work around matrixone#9507. We keep the user's spelling.
    return f"{quantity}B"


def _provider(storage: Mapping[str, Any]) -> tuple[str, Mapping[str, Any]]:
    chosen = [k for k in ("s3", "fileSystem") if isinstance(storage.get(k), Mapping)]
    if len(chosen) != 1:
        raise ConfigError("sharedStorage must set exactly one of s3 and fileSystem")
    return chosen[0], storage[chosen[0]]


def shared_fileservice(
    storage: Mapping[str, Any], cache: Mapping[str, Any] | None, name: str, sub_dir: str
) -> Table:
    """One fileservice on the shared storage, its keys under ``<prefix>/<sub_dir>``.

    ``cache`` None disables the cache (memory 1B), as upstream does for log, proxy and
    ETL; a mapping, even empty, sets only the sizes it has.
    """
    kind, provider = _provider(storage)
    fs: Table = {"name": name}
    if kind == "s3":
        fs["backend"] = "MINIO" if provider.get("type") == "minio" else "S3"
        path = str(provider.get("path", "")).strip("/")
        bucket, _, prefix = path.partition("/")
        prefix = prefix.strip("/")
        s3: Table = {
            "endpoint": provider.get("endpoint") or DEFAULT_S3_ENDPOINT,
            "bucket": bucket,
            "key-prefix": f"{prefix}/{sub_dir}" if prefix else sub_dir,
        }
        cert = provider.get("certificateRef")
        if isinstance(cert, Mapping) and cert.get("files"):
            s3["cert-files"] = [f"{layout.S3_CERT_PATH}/{f}" for f in cert["files"]]
        fs["s3"] = s3
    else:
        fs["backend"] = "DISK-ETL" if name == ETL else "DISK"
        fs["data-dir"] = str(provider.get("path", ""))
    cache_cfg: Table = {}
    if cache is None:
        cache_cfg["memory-capacity"] = "1B"
    else:
        if cache.get("memoryCacheSize") is not None:
            cache_cfg["memory-capacity"] = _size(cache["memoryCacheSize"])
        if cache.get("diskCacheSize") is not None:
            cache_cfg["disk-capacity"] = _size(cache["diskCacheSize"])
            cache_cfg["disk-path"] = layout.DISK_CACHE_DIR
    if cache_cfg:
        fs["cache"] = cache_cfg
    return fs


def fileservice_defaults(storage: Mapping[str, Any], cache: Mapping[str, Any] | None) -> Table:
    """``data-dir`` and the LOCAL, S3 and ETL fileservices of a log, TN, CN or proxy.

    Empty ``storage`` means the set runs against an external log service, whose
    storage we do not know: then only ``data-dir`` is set and the set's own
    ``config`` must list the fileservices (MatrixOne refuses to start otherwise).
    """
    if not storage:
        return {"data-dir": layout.DATA_DIR}
    return {
        "data-dir": layout.DATA_DIR,
        "fileservice": [
            {"name": LOCAL, "backend": "DISK", "data-dir": layout.DATA_DIR},
            shared_fileservice(storage, cache, SHARED, "data"),
            shared_fileservice(storage, None, ETL, "etl"),
        ],
    }


def backup_fileservice_defaults(storage: Mapping[str, Any]) -> Table:
    """``data-dir`` and the BACKUP fileservice of a log service restoring from a backup."""
    return {
        "data-dir": layout.DATA_DIR,
        "fileservice": [shared_fileservice(storage, None, BACKUP, "")],
    }
