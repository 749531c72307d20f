"""What a validating webhook is sent: the write's options (``CreateOptions`` with the
writer's ``fieldManager``, a patch as an UPDATE with ``UpdateOptions``) and, for a
write through ``/scale``, ``autoscaling/v1`` Scales under the scaled resource with
``subResource: scale``
(https://kubernetes.io/docs/reference/access-authn-authz/extensible-admission-controllers/#request).
The operator's webhook tells its own writes by that ``fieldManager`` and warns about
``kubectl scale`` of a set a cluster owns from that Scale."""

from __future__ import annotations

from typing import Any

from ..apiserver.test_admission import WebhookServer
from .crds import install, widget
from .harness import MERGE, Target, Transcript
from .harness import test_differential as test_differential

Obj = dict[str, Any]

CONFIGS = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations"
SHOWN = (
    "kind",
    "resource",
    "subResource",
    "requestKind",
    "requestSubResource",
    "operation",
    "name",
    "options",
)


def _shown(review: Obj) -> Obj:
    shown = {k: review.get(k) for k in SHOWN}
    shown["object"] = {k: (review.get("object") or {}).get(k) for k in ("kind", "spec")}
    shown["oldObject"] = {k: (review.get("oldObject") or {}).get(k) for k in ("kind", "spec")}
    return shown


async def case_a_webhook_is_sent_the_options_and_a_scale_as_a_scale(t: Target) -> Transcript:
    tr = Transcript()
    _, path = await install(t)
    group = path.split("/")[2]
    hook = WebhookServer()
    await hook.start()
    try:
        config = hook.config("ValidatingWebhookConfiguration", "/validate")
        config["metadata"]["name"] = f"diff-review-{t.tag}"
        config["webhooks"][0]["rules"][0].update(
            apiGroups=[group], apiVersions=["v1"], resources=["widgets", "widgets/scale"]
        )
        config["webhooks"][0]["namespaceSelector"] = {"matchLabels": {"kubernetes.io/metadata.name": t.ns}}
        created = await t.post(CONFIGS, config)
        assert created.code == 201, created
        t.cleanup.append(f"{CONFIGS}/diff-review-{t.tag}")

        async def reviewed() -> bool:  # kube-apiserver reads new configurations a moment later
            await t.post(path, widget(t, "probe", {"size": 1}), params={"dryRun": "All"})
            return bool(hook.calls)

        await t.wait_for(reviewed, "the webhook is called")
        hook.calls.clear()
        tr.add(
            "create",
            (
                await t.post(path, widget(t, "w", {"size": 1, "replicas": 2}), params={"fieldManager": "me"})
            ).code,
        )
        tr.add("create review", _shown(hook.calls[-1]))
        tr.add("scale", (await t.patch(path + "/w/scale", {"spec": {"replicas": 5}}, MERGE)).code)
        tr.add("scale review", _shown(hook.calls[-1]))
        tr.add("reviews", len(hook.calls))
    finally:
        await t.delete(f"{CONFIGS}/diff-review-{t.tag}")
        await hook.stop()
    return tr
