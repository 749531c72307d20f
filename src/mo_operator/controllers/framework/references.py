"""Secrets and ConfigMaps a set's spec names, and whether they exist.

A pod whose spec names a Secret or a ConfigMap that is not there does not start:
the kubelet leaves its container waiting with ``CreateContainerConfigError``
(an environment variable or ``envFrom`` of it) or the whole pod
``ContainerCreating`` (a volume of it), and says so only in the pod's status or
its Events. The set would then wait without a word on pods that never come. So
each round a set looks up what its spec names (the S3 credentials and
certificates of its shared storage, and what its ``overlay`` adds: env,
``envFrom``, volumes, init and sidecar containers), and reports what is missing
in a ``ResolvedRefs`` condition (announced as a Warning Event) until it appears.
A reference marked ``optional`` is not required, as the kubelet does not require
it.

The operator's caches hold only the objects it makes, so the lookup asks the API
server, one GET per name, its answer remembered for ``ttl`` seconds: a set's
reconciles cost one read per name and ``ttl``, and one that finds something
missing looks again after ``ttl``. An answer other than found or not found (no
permission, a server error) counts as found: nothing is reported that is not
known to be missing.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mo_operator.kube.controller.actor import Context
from mo_operator.kube.manager.adapters import Client
from mo_operator.kube.meta.errors import ApiError, NotFound
from mo_operator.kube.meta.objects import mapping_at

from . import resources as r

if TYPE_CHECKING:
    from .draft import Drafting

__all__ = [
    "RESOLVED_REFS",
    "Ref",
    "ReferenceLookup",
    "report_missing",
    "report_references",
    "spec_references",
]

RESOLVED_REFS = "ResolvedRefs"
"""The condition: True when every Secret and ConfigMap the spec names exists."""
SECRET_NOT_FOUND = "SecretNotFound"
CONFIGMAP_NOT_FOUND = "ConfigMapNotFound"

Obj = dict[str, Any]


@dataclass(frozen=True)
class Ref:
    """One object a spec names: its kind (Secret or ConfigMap), name, and where."""

    kind: str
    name: str
    field: str


def _ref(kind: str, source: Any, name_key: str, field: str) -> Iterator[Ref]:
    if isinstance(source, Mapping) and not source.get("optional"):
        name = source.get(name_key)
        if isinstance(name, str) and name:
            yield Ref(kind, name, field)


def _container_refs(container: Mapping[str, Any], path: str) -> Iterator[Ref]:
    for i, env in enumerate(container.get("env") or ()):
        source = mapping_at(env, "valueFrom")
        at = f"{path}.env[{i}]"
        yield from _ref("Secret", source.get("secretKeyRef"), "name", f"{at}.valueFrom.secretKeyRef")
        yield from _ref("ConfigMap", source.get("configMapKeyRef"), "name", f"{at}.valueFrom.configMapKeyRef")
    for i, env_from in enumerate(container.get("envFrom") or ()):
        if isinstance(env_from, Mapping):
            yield from _ref("Secret", env_from.get("secretRef"), "name", f"{path}.envFrom[{i}].secretRef")
            yield from _ref(
                "ConfigMap", env_from.get("configMapRef"), "name", f"{path}.envFrom[{i}].configMapRef"
            )


def _volume_refs(volume: Any, path: str) -> Iterator[Ref]:
    if not isinstance(volume, Mapping):
        return
    yield from _ref("Secret", volume.get("secret"), "secretName", f"{path}.secret")
    yield from _ref("ConfigMap", volume.get("configMap"), "name", f"{path}.configMap")
    for j, source in enumerate(mapping_at(volume, "projected").get("sources") or ()):
        if isinstance(source, Mapping):
            at = f"{path}.projected.sources[{j}]"
            yield from _ref("Secret", source.get("secret"), "name", f"{at}.secret")
            yield from _ref("ConfigMap", source.get("configMap"), "name", f"{at}.configMap")


def spec_references(
    spec: Mapping[str, Any],
    path: str,
    shared_storage: Mapping[str, Any] | None = None,
    storage_field: str = "spec.sharedStorage",
) -> list[Ref]:
    """What a set's spec (at ``path``) and the shared storage its pods reach (named at
    ``storage_field``) require to exist, in the order a reader meets them."""
    refs: list[Ref] = []
    s3 = mapping_at(shared_storage, "s3")
    refs += _ref("Secret", s3.get("secretRef"), "name", f"{storage_field}.s3.secretRef")
    refs += _ref("Secret", s3.get("certificateRef"), "name", f"{storage_field}.s3.certificateRef")
    overlay = mapping_at(spec, "overlay")
    at = f"{path}.overlay"
    refs += _container_refs(overlay, at)
    for i, volume in enumerate(overlay.get("volumes") or ()):
        refs += _volume_refs(volume, f"{at}.volumes[{i}]")
    for group in ("initContainers", "sidecarContainers"):
        for i, container in enumerate(overlay.get(group) or ()):
            if isinstance(container, Mapping):
                refs += _container_refs(container, f"{at}.{group}[{i}]")
    return list(dict.fromkeys(refs))


class ReferenceLookup:
    """Whether named Secrets and ConfigMaps exist, asked of the API server and
    remembered for ``ttl`` seconds (at most ``size`` answers)."""

    def __init__(
        self,
        client: Client,
        *,
        ttl: float = 10.0,
        size: int = 4096,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.client = client
        self.ttl = ttl
        self.size = size
        self.clock = clock
        self._answers: OrderedDict[tuple[str, str, str], tuple[bool, float]] = OrderedDict()

    async def exists(self, kind: str, namespace: str, name: str) -> bool:
        key = (kind, namespace, name)
        now = self.clock()
        known = self._answers.get(key)
        if known is not None and known[1] > now:
            return known[0]
        resource = r.SECRETS if kind == "Secret" else r.CONFIGMAPS
        try:
            await self.client.get(resource, name, namespace)
            found = True
        except NotFound:
            found = False
        except ApiError:
            found = True  # not known to be missing: say nothing
        self._answers[key] = (found, now + self.ttl)
        self._answers.move_to_end(key)
        while len(self._answers) > self.size:
            self._answers.popitem(last=False)
        return found

    async def missing(self, namespace: str, refs: Iterable[Ref]) -> list[Ref]:
        return [ref for ref in refs if not await self.exists(ref.kind, namespace, ref.name)]


async def report_references(ctx: Context, lookup: ReferenceLookup | None, refs: Iterable[Ref]) -> None:
    """``report_missing`` of what ``lookup`` finds missing of ``refs`` (nothing without
    a lookup)."""
    if lookup is None:
        return
    report_missing(ctx, await lookup.missing(ctx.namespace, refs), lookup.ttl)


def report_missing(draft: Drafting, missing: Sequence[Ref], ttl: float) -> None:
    """``ResolvedRefs`` False naming what is ``missing`` (and a look again after the
    lookup's ``ttl``), or True once everything is there; nothing while nothing was ever
    missing (a set that never named a missing object carries no such condition)."""
    if missing:
        reason = SECRET_NOT_FOUND if missing[0].kind == "Secret" else CONFIGMAP_NOT_FOUND
        listed = "; ".join(f'{m.kind} "{m.name}" ({m.field})' for m in missing[:5])
        more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
        draft.set_condition(
            RESOLVED_REFS,
            False,
            reason,
            f"not found in namespace {draft.namespace}: {listed}{more}; pods that need it do not start",
        )
        draft.requeue(ttl, "whether the missing references exist now")
    elif draft.condition(RESOLVED_REFS) is not None:
        draft.set_condition(
            RESOLVED_REFS, True, RESOLVED_REFS, "every Secret and ConfigMap the spec names exists"
        )
