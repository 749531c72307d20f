"""Object storage as seen from outside: which S3 paths hold MatrixOne's data.

Real MatrixOne processes write their data under the bucket and key prefix of their
shared (``S3``) fileservice; a BucketClaim's cleanup Job (the aws-cli image running
``aws s3 rm s3://<bucket>/<prefix> --recursive``) empties a path. The simulation
keeps the object keys each S3 service holds, so a test can ask whether a path still
holds data after a cluster was deleted:

- a process writes once its cluster runs: a log store of a bootstrapped HAKeeper, a
  TN or CN registered with one. It keeps writing while it serves, so a cleanup that
  runs while some process of the cluster still serves leaves data behind, as it
  would on a real cluster;
- a pod running an aws-cli image that completes (phase ``Succeeded``) applies every
  ``aws ... s3 rm s3://<bucket>/<prefix> --recursive`` of its command and
  arguments, with aws-cli's prefix semantics: ``s3://b/mo`` also removes ``mo2/...``,
  ``s3://b/mo/`` does not.

Services are told apart by endpoint: no endpoint or any ``*.amazonaws.com`` is AWS,
anything else is its ``host:port`` (the scheme does not matter). A path's type
(aws, minio) only chooses its default endpoint.
"""

from __future__ import annotations

import functools
import shlex
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from mo_devkit.simulated.configfiles import mounted_file
from mo_devkit.simulated.instances import Instance
from mo_devkit.simulated.state import MOModel
from mo_devkit.simulated.view import Obj, Snapshot
from mo_operator.matrixone import layout
from mo_operator.matrixone.component import Component

AWS = "aws"
"""The service key of every AWS endpoint."""
CLEANUP_IMAGE_MARK = "aws-cli"
"""A container whose image name contains this runs aws-cli."""
_SHARED_NAMES = ("S3", "SHARED")
_S3_BACKENDS = ("S3", "MINIO")


def service_of(endpoint: str | None) -> str:
    """The service an endpoint names: ``aws`` for AWS (or none), else ``host:port``."""
    if not endpoint:
        return AWS
    host = endpoint.split("://", 1)[-1].split("/", 1)[0].lower()
    return AWS if not host or host.endswith("amazonaws.com") else host


@dataclass(frozen=True)
class Location:
    """Where a process writes: a service, a bucket and a key prefix."""

    service: str
    bucket: str
    prefix: str


@functools.lru_cache(maxsize=8192)  # as configfiles._parse: above the number of distinct files
def _location_in(text: str) -> Location | None:
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return None
    for fs in doc.get("fileservice") or ():
        if not isinstance(fs, Mapping) or fs.get("name") not in _SHARED_NAMES:
            continue
        s3 = fs.get("s3")
        if fs.get("backend") not in _S3_BACKENDS or not isinstance(s3, Mapping) or not s3.get("bucket"):
            continue
        endpoint = s3.get("endpoint")
        return Location(
            service_of(endpoint if isinstance(endpoint, str) else None),
            str(s3["bucket"]),
            str(s3.get("key-prefix") or "").strip("/"),
        )
    return None


def location_of(instance: Instance, view: Snapshot) -> Location | None:
    """The S3 location the instance's config makes it write to, if any."""
    pod = view.pod(instance.namespace, instance.pod)
    if pod is None:
        return None
    text = mounted_file(
        pod, instance.namespace, view, layout.CONFIG_VOLUME, layout.config_file(instance.component)
    )
    return _location_in(text) if text is not None else None


def cleanup_commands(pod: Mapping[str, Any]) -> list[tuple[str, str]]:
    """``(service, s3 url)`` of each ``aws s3 rm ... --recursive`` an aws-cli pod runs."""
    found: list[tuple[str, str]] = []
    for container in (pod.get("spec") or {}).get("containers") or ():
        if CLEANUP_IMAGE_MARK not in str(container.get("image") or ""):
            continue
        words = [str(w) for w in (container.get("command") or ())] + [
            str(w) for w in (container.get("args") or ())
        ]
        for line in "\n".join(words).splitlines():
            try:
                tokens = shlex.split(line)
            except ValueError:
                continue
            found += _rm_of(tokens)
    return found


def _rm_of(tokens: list[str]) -> list[tuple[str, str]]:
    if "aws" not in tokens or "--recursive" not in tokens:
        return []
    rest = tokens[tokens.index("aws") + 1 :]
    endpoint = rest[rest.index("--endpoint-url") + 1] if "--endpoint-url" in rest[:-1] else None
    for i in range(len(rest) - 2):
        if rest[i] == "s3" and rest[i + 1] == "rm" and rest[i + 2].startswith("s3://"):
            return [(service_of(endpoint), rest[i + 2])]
    return []


def _succeeded(pod: Mapping[str, Any]) -> bool:
    return (pod.get("status") or {}).get("phase") == "Succeeded"


def _writes(instance: Instance, model: MOModel) -> bool:
    if not instance.serving:
        return False
    if instance.component is Component.LOG:
        hakeeper = model.hakeepers.get(instance.logset) if instance.logset is not None else None
        return hakeeper is not None and hakeeper.bootstrapped
    if instance.component in (Component.TN, Component.CN):
        return model.registration(instance) is not None
    return False


@dataclass
class ObjectStore:
    """The object keys (``<bucket>/<key>``) each simulated S3 service holds."""

    keys: dict[str, set[str]] = field(default_factory=dict)
    cleaned_by: set[str] = field(default_factory=set)
    """UIDs of the cleanup pods already applied."""

    def put(self, service: str, key: str) -> None:
        self.keys.setdefault(service, set()).add(key)

    def holds_data(self, path: str, endpoint: str | None = None) -> bool:
        """Whether anything is stored under ``<bucket>/<prefix>`` (the S3 ``path`` of a spec)."""
        return bool(self.objects(path, endpoint))

    def objects(self, path: str, endpoint: str | None = None) -> list[str]:
        under = path.strip("/") + "/"
        return sorted(k for k in self.keys.get(service_of(endpoint), ()) if k.startswith(under))

    def remove(self, service: str, url: str) -> int:
        """``aws s3 rm <url> --recursive``: every key of the bucket starting with the prefix."""
        bucket, _, prefix = url.removeprefix("s3://").partition("/")
        start = f"{bucket}/{prefix}"
        held = self.keys.get(service, set())
        gone = {k for k in held if k.startswith(start)}
        held -= gone
        return len(gone)

    def observe(
        self, instances: Iterable[Instance], view: Snapshot, model: MOModel, pods: Iterable[Obj]
    ) -> None:
        """Writes of the serving processes, then the cleanups of the pods that completed."""
        for instance in instances:
            if not _writes(instance, model):
                continue
            where = location_of(instance, view)
            if where is not None:
                prefix = f"{where.prefix}/" if where.prefix else ""
                self.put(where.service, f"{where.bucket}/{prefix}{instance.component.suffix}-{instance.uuid}")
        for pod in pods:
            uid = str((pod.get("metadata") or {}).get("uid") or "")
            if not uid or uid in self.cleaned_by or not _succeeded(pod):
                continue
            commands = cleanup_commands(pod)
            if commands:
                self.cleaned_by.add(uid)
                for service, url in commands:
                    self.remove(service, url)
