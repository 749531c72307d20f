"""Shared storage and its caches: exactly one provider, complete and consistent."""

from __future__ import annotations

from typing import Any

from .errors import FieldError, child
from .resources import amount, non_negative

__all__ = ["cache_errors", "shared_storage_errors"]


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
    cert = s3.get("certificateRef")
    if cert is not None:
        if cert["name"] == "":
            errs.append(FieldError(child(child(path, "certificateRef"), "name"), "Required value"))
        if not cert["files"]:
            errs.append(
                FieldError(child(child(path, "certificateRef"), "files"), "at least one file must be set")
            )
    return errs


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
    errs = non_negative(cache.get("memoryCacheSize"), child(cache_path, "memoryCacheSize"))
    disk = cache.get("diskCacheSize")
    if disk is None:
        return errs
    disk_path = child(cache_path, "diskCacheSize")
    errs += non_negative(disk, disk_path)
    volume = spec.get("cacheVolume")
    if volume is None:
        errs.append(FieldError(disk_path, "diskCacheSize requires cacheVolume to be set"))
    elif amount(disk) > amount(volume["size"]):
        errs.append(FieldError(disk_path, "diskCacheSize must not be larger than cacheVolume.size"))
    return errs
