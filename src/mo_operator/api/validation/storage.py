"""Shared storage and its caches: exactly one provider, complete and consistent."""

from __future__ import annotations

import re
from typing import Any

from .errors import FieldError, child, index
from .names import dns1123_subdomain
from .resources import amount, size_errors

__all__ = ["cache_errors", "secret_name_errors", "shared_storage_errors"]

_CONFIG_KEY = re.compile(r"[-._a-zA-Z0-9]+")


def _s3_errors(s3: dict[str, Any], path: str) -> list[FieldError]:
    errs = []
    bucket_path = s3["path"]
    if bucket_path == "":
        errs.append(FieldError(child(path, "path"), "path must be set for S3 storage"))
    elif bucket_path.startswith("/"):
        errs.append(
            FieldError(child(path, "path"), 'path must start with the bucket name: "<bucket>/<prefix>"')
        )
    if s3.get("type") == "minio" and not s3.get("endpoint"):
        errs.append(FieldError(child(path, "endpoint"), "endpoint must be set for minio storage"))
    errs += secret_name_errors(
        (s3.get("secretRef") or {}).get("name"), child(child(path, "secretRef"), "name")
    )
    cert = s3.get("certificateRef")
    if cert is not None:
        cert_path = child(path, "certificateRef")
        if cert["name"] == "":
            errs.append(FieldError(child(cert_path, "name"), "Required value"))
        errs += secret_name_errors(cert["name"], child(cert_path, "name"))
        if not cert["files"]:
            errs.append(FieldError(child(cert_path, "files"), "at least one file must be set"))
        for i, file in enumerate(cert["files"]):
            if not _CONFIG_KEY.fullmatch(file) or len(file) > 253:
                errs.append(
                    FieldError(
                        index(child(cert_path, "files"), i),
                        f'Invalid value: "{file[:80]}": a valid config key must consist of alphanumeric '
                        "characters, '-', '_' or '.', at most 253 (the Secret's key is mounted as a file)",
                    )
                )
    return errs


def secret_name_errors(name: str | None, path: str) -> list[FieldError]:
    """A Secret named by the spec: a pod that references it by an invalid name is
    refused by the API server (the object is never made)."""
    if not name:
        return []
    return [FieldError(path, f'Invalid value: "{name[:80]}": {m}') for m in dns1123_subdomain(name)]


def shared_storage_errors(provider: dict[str, Any] | None, path: str) -> list[FieldError]:
    """Exactly one of s3 and fileSystem, with its path (upstream's messages)."""
    provider = provider or {}
    errs: list[FieldError] = []
    s3, fs = provider.get("s3"), provider.get("fileSystem")
    if s3 is not None:
        errs += _s3_errors(s3, child(path, "s3"))
    if fs is not None and fs["path"] == "":
        errs.append(
            FieldError(child(child(path, "fileSystem"), "path"), "path must be set for file-system storage")
        )
    count = (s3 is not None) + (fs is not None)
    if count == 0:
        errs.append(FieldError(path, "no shared storage provider configured"))
    elif count > 1:
        errs.append(FieldError(path, "more than 1 storage provider configured"))
    return errs


def cache_errors(spec: dict[str, Any], path: str) -> list[FieldError]:
    """A disk cache needs a cache volume to live on, and must fit in it."""
    cache = spec.get("sharedStorageCache") or {}
    cache_path = child(path, "sharedStorageCache")
    errs = size_errors(cache.get("memoryCacheSize"), child(cache_path, "memoryCacheSize"))
    disk = cache.get("diskCacheSize")
    if disk is None:
        return errs
    disk_path = child(cache_path, "diskCacheSize")
    errs += size_errors(disk, disk_path)
    volume = spec.get("cacheVolume")
    if volume is None:
        errs.append(FieldError(disk_path, "diskCacheSize requires cacheVolume to be set"))
    elif amount(disk) > amount(volume["size"]):
        errs.append(FieldError(disk_path, "diskCacheSize must not be larger than cacheVolume.size"))
    return errs
