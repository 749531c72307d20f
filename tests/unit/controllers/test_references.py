"""The Secrets and ConfigMaps a set's spec names are looked up, and what is missing is
reported in ``ResolvedRefs`` (a Warning reason), until it appears; answers are
remembered for a while, so a set's reconciles cost one read per name and ttl."""

from __future__ import annotations

from typing import Any, cast

from mo_operator.controllers.framework.references import (
    Ref,
    ReferenceLookup,
    report_references,
    spec_references,
)
from mo_operator.kube.meta.errors import ApiError

from .controller_fakes import condition, context


class Secrets:
    """GETs answered from a set of names; 403 for ``forbidden``."""

    def __init__(self, *names: str, forbidden: str = "") -> None:
        self.names = set(names)
        self.forbidden = forbidden
        self.asked: list[str] = []

    async def get(self, resource: Any, name: str, namespace: str | None = None) -> dict[str, Any]:
        self.asked.append(name)
        if name == self.forbidden:
            raise ApiError(403, "Forbidden", "no")
        if name not in self.names:
            raise ApiError(404, "NotFound", f'secrets "{name}" not found')
        return {"metadata": {"name": name}}


def test_the_spec_names_its_storage_credentials_and_its_overlays_sources() -> None:
    spec = {
        "overlay": {
            "env": [{"name": "A", "valueFrom": {"secretKeyRef": {"name": "tokens", "key": "a"}}}],
            "envFrom": [
                {"configMapRef": {"name": "settings"}},
                {"secretRef": {"name": "opt", "optional": True}},
            ],
            "volumes": [{"name": "v", "configMap": {"name": "files"}}],
            "sidecarContainers": [{"name": "s", "envFrom": [{"secretRef": {"name": "side"}}]}],
        }
    }
    storage = {"s3": {"path": "b/p", "secretRef": {"name": "minio"}, "certificateRef": {"name": "ca"}}}
    assert spec_references(spec, "spec", storage) == [
        Ref("Secret", "minio", "spec.sharedStorage.s3.secretRef"),
        Ref("Secret", "ca", "spec.sharedStorage.s3.certificateRef"),
        Ref("Secret", "tokens", "spec.overlay.env[0].valueFrom.secretKeyRef"),
        Ref("ConfigMap", "settings", "spec.overlay.envFrom[0].configMapRef"),
        Ref("ConfigMap", "files", "spec.overlay.volumes[0].configMap"),
        Ref("Secret", "side", "spec.overlay.sidecarContainers[0].envFrom[0].secretRef"),
    ]


def _logset() -> dict[str, Any]:
    return {"metadata": {"name": "mo", "namespace": "ns", "generation": 1}, "spec": {}}


async def test_a_missing_secret_is_reported_until_it_appears() -> None:
    now = [0.0]
    secrets = Secrets("ca")
    lookup = ReferenceLookup(cast(Any, secrets), ttl=10.0, clock=lambda: now[0])
    refs = [Ref("Secret", "minio", "spec.sharedStorage.s3.secretRef"), Ref("Secret", "ca", "x")]
    ctx = context(_logset())
    await report_references(ctx, lookup, refs)
    found = condition(ctx, "ResolvedRefs")
    assert found is not None and (found["status"], found["reason"]) == ("False", "SecretNotFound")
    assert found["message"] == (
        'not found in namespace ns: Secret "minio" (spec.sharedStorage.s3.secretRef); '
        "pods that need it do not start"
    )
    assert ctx.requeue_after == 10.0
    await report_references(context(_logset()), lookup, refs)
    assert secrets.asked == ["minio", "ca"], "answers are remembered for the ttl"
    secrets.names.add("minio")
    now[0] = 11.0
    again = context({**_logset(), "status": ctx.status})
    await report_references(again, lookup, refs)
    found = condition(again, "ResolvedRefs")
    assert found is not None and (found["status"], found["reason"]) == ("True", "ResolvedRefs")


async def test_nothing_is_said_of_what_is_not_known_to_be_missing() -> None:
    lookup = ReferenceLookup(cast(Any, Secrets(forbidden="minio")))
    ctx = context(_logset())
    await report_references(ctx, lookup, [Ref("Secret", "minio", "f")])
    assert condition(ctx, "ResolvedRefs") is None, "a set that never missed anything has no such condition"
