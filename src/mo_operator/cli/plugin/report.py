"""``kubectl mo report``: a support bundle, one tarball a person can attach to an
issue: the cluster, its sets and every object they own or label, the Events
about them, the operator's logs and status, and ``kubectl mo status`` as text
and JSON.

Nothing secret leaves: every Secret value becomes ``<redacted>`` (its keys stay,
so a missing key still shows), and so do the ``last-applied-configuration`` of a
Secret, literal environment values whose names say secret, and ``key = value``
lines of the TOML configs whose keys do. What could not be read (no permission,
no operator pod found) is written in ``index.txt`` instead of failing the bundle.
"""

from __future__ import annotations

import asyncio
import datetime
import io
import json
import re
import tarfile
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import yaml
from lightkube import AsyncClient
from lightkube.config.kubeconfig import SingleConfig
from rich.console import Console

from mo_operator.controllers.framework import resources as r
from mo_operator.kube.client.client import ApiClient
from mo_operator.kube.client.resource import Resource
from mo_operator.kube.meta.objects import labels_of, name_of
from mo_operator.matrixone import labels

from .actions import get_cluster
from .render import render
from .view import EVENTS, children_of, cluster_view

REDACTED = "<redacted>"
SECRET_NAME = re.compile(r"(?i)(password|passwd|secret|token|credential|access.?key|key.?id|private.?key)")
SECRET_LINE = re.compile(
    r"(?im)^(\s*[\"']?[\w.-]*(?:password|passwd|secret|token|credential|access-key|key-id|private-key)"
    r"[\w.-]*[\"']?\s*=\s*)(.+)$"
)
OWNED_KINDS: tuple[Resource, ...] = (
    r.PODS,
    r.STATEFULSETS,
    r.DEPLOYMENTS,
    r.SERVICES,
    r.CONFIGMAPS,
    r.PVCS,
    r.JOBS,
)
JOB_KINDS: tuple[Resource, ...] = (r.BACKUPJOBS, r.RESTOREJOBS, r.BUCKETCLAIMS)
OPERATOR_SELECTOR = "app.kubernetes.io/name=mo-operator"
LOG_LINES = 5000


def _redact_text(text: str) -> str:
    return SECRET_LINE.sub(lambda m: f'{m.group(1)}"{REDACTED}"', text)


def redact(obj: Any, *, secret: bool = False) -> Any:
    """``obj`` with what could be secret replaced by ``<redacted>``; ``secret``: the
    object is a Secret, all of whose values are."""
    if isinstance(obj, Mapping):
        out: dict[str, Any] = {}
        for key, value in obj.items():
            if secret and key in ("data", "stringData") and isinstance(value, Mapping):
                out[key] = dict.fromkeys(value, REDACTED)
            elif key == "annotations" and isinstance(value, Mapping) and secret:
                out[key] = {k: (REDACTED if "last-applied" in k else v) for k, v in value.items()}
            elif key == "managedFields":
                continue
            elif (
                key == "value"
                and isinstance(value, str)
                and isinstance(obj.get("name"), str)
                and SECRET_NAME.search(obj["name"])
            ):
                out[key] = REDACTED
            else:
                out[key] = redact(value, secret=secret and key == "metadata")
        return out
    if isinstance(obj, list):
        return [redact(v) for v in obj]
    if isinstance(obj, str):
        return _redact_text(obj)
    return obj


def _secret_names(objs: Iterable[Any]) -> set[str]:
    """Names of the Secrets these objects refer to (refs, volumes, env)."""
    found: set[str] = set()

    def walk(value: Any) -> None:
        if isinstance(value, Mapping):
            for key, inner in value.items():
                if key in ("secretRef", "secretKeyRef", "credentialRef") and isinstance(inner, Mapping):
                    if inner.get("name"):
                        found.add(str(inner["name"]))
                elif key == "secret" and isinstance(inner, Mapping) and inner.get("secretName"):
                    found.add(str(inner["secretName"]))
                walk(inner)
        elif isinstance(value, list):
            for inner in value:
                walk(inner)

    for obj in objs:
        walk(obj)
    return found


class Bundle:
    """The files of the tarball, and what could not be collected."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.files: dict[str, bytes] = {}
        self.problems: list[str] = []

    def add(self, path: str, content: str | bytes) -> None:
        self.files[f"{self.root}/{path}"] = content.encode() if isinstance(content, str) else content

    def add_object(self, obj: Mapping[str, Any]) -> None:
        kind = str(obj.get("kind") or "Object")
        text = yaml.safe_dump(redact(obj, secret=kind == "Secret"), sort_keys=False)
        self.add(f"objects/{kind}/{name_of(obj)}.yaml", text)

    def write(self, path: Path) -> None:
        index = "\n".join(
            ["files:", *(f"  {name}" for name in sorted(self.files)), "not collected:"]
            + [f"  {p}" for p in self.problems or ["(nothing)"]]
        )
        self.add("index.txt", index + "\n")
        with tarfile.open(path, "w:gz") as tar:
            for name, content in sorted(self.files.items()):
                info = tarfile.TarInfo(name)
                info.size = len(content)
                info.mtime = int(datetime.datetime.now(datetime.UTC).timestamp())
                tar.addfile(info, io.BytesIO(content))


async def _attempt(bundle: Bundle, what: str, work: Any) -> Any:
    try:
        return await work
    except Exception as e:  # a report collects what it can
        bundle.problems.append(f"{what}: {type(e).__name__}: {e}")
        return None


async def _log(logs: AsyncClient, pod: Mapping[str, Any], container: str) -> str:
    """The last ``LOG_LINES`` lines the container wrote."""
    lines = [
        line
        async for line in logs.log(
            name_of(pod), namespace=pod["metadata"]["namespace"], container=container, tail_lines=LOG_LINES
        )
    ]
    return "".join(lines)


async def _operator_logs(
    bundle: Bundle, config: SingleConfig, client: ApiClient, namespace: str | None
) -> None:
    listed = await _attempt(
        bundle, "the operator's pods", client.list(r.PODS, namespace, label_selector=OPERATOR_SELECTOR)
    )
    pods = listed.items if listed is not None else []
    if not pods:
        where = f"namespace {namespace}" if namespace else "any namespace"
        bundle.problems.append(f"operator logs: no pod labelled {OPERATOR_SELECTOR} in {where}")
        return
    logs = AsyncClient(config=config)
    try:
        for pod in pods:
            bundle.add_object(pod)
            pod_ns = pod["metadata"]["namespace"]
            for container in pod["spec"].get("containers") or ():
                where = f"{pod_ns}/{name_of(pod)}/{container['name']}"
                text = await _attempt(bundle, f"logs of {where}", _log(logs, pod, container["name"]))
                name = f"operator/{pod_ns}-{name_of(pod)}-{container['name']}.log"
                bundle.add(name, _redact_text(text or ""))
    finally:
        await logs.close()


async def collect(
    client: ApiClient, config: SingleConfig, namespace: str, name: str, operator_namespace: str | None
) -> Bundle:
    cluster = await get_cluster(client, namespace, name)
    stamp = datetime.datetime.now(datetime.UTC).strftime("%Y%m%dT%H%M%SZ")
    bundle = Bundle(f"mo-report-{namespace}-{name}-{stamp}")
    view = await cluster_view(client, cluster)
    bundle.add("status.json", json.dumps(view.as_json(), indent=2) + "\n")
    text = Console(file=io.StringIO(), width=200, no_color=True)
    text.print(render(view))
    bundle.add("status.txt", text.file.getvalue())  # type: ignore[attr-defined]

    bundle.add_object(cluster)
    children = [obj for _, obj, _ in await children_of(client, namespace, name)]
    for child in children:
        bundle.add_object(child)
    set_names = {name_of(c) for c in children}
    uids = {cluster["metadata"]["uid"], *(c["metadata"]["uid"] for c in children)}

    def ours(obj: Mapping[str, Any]) -> bool:
        found = labels_of(obj)
        return (
            found.get(labels.CLUSTER) == name
            or found.get(labels.INSTANCE) in set_names
            or any(o.get("uid") in uids for o in obj["metadata"].get("ownerReferences") or ())
        )

    collected: list[Mapping[str, Any]] = [cluster, *children]
    for res in OWNED_KINDS + JOB_KINDS:
        listed = await _attempt(bundle, f"{res.group_resource} in {namespace}", client.list(res, namespace))
        for obj in listed.items if listed is not None else ():
            if ours(obj) or (
                res in JOB_KINDS and name in json.dumps(obj.get("spec") or obj.get("status") or {})
            ):
                bundle.add_object(obj)
                collected.append(obj)
                if res == r.PODS:
                    uids.add(obj["metadata"]["uid"])
    secrets = await _attempt(bundle, f"secrets in {namespace}", client.list(r.SECRETS, namespace))
    wanted = _secret_names(collected)
    for secret in secrets.items if secrets is not None else ():
        if name_of(secret) in wanted or labels_of(secret).get(labels.CLUSTER) == name:
            bundle.add_object(secret)
    events = await _attempt(bundle, f"events in {namespace}", client.list(EVENTS, namespace))
    names = {name_of(o) for o in collected}
    related = [
        e
        for e in (events.items if events is not None else ())
        if (e.get("involvedObject") or {}).get("name") in names
    ]
    bundle.add("events.yaml", yaml.safe_dump([redact(e) for e in related], sort_keys=False))
    await _operator_logs(bundle, config, client, operator_namespace)
    return bundle


async def report(
    client: ApiClient,
    config: SingleConfig,
    namespace: str,
    name: str,
    output: Path | None,
    operator_namespace: str | None,
) -> dict[str, Any]:
    bundle = await collect(client, config, namespace, name, operator_namespace)
    path = output or Path(f"{bundle.root}.tar.gz")
    await asyncio.to_thread(bundle.write, path)
    return {"file": str(path), "files": len(bundle.files), "notCollected": bundle.problems}
