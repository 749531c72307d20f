"""The WebUI's ``decide``: what a console does next from what it read, as data, with
no client and no event loop."""

from __future__ import annotations

import base64
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pytest

from mo_operator.api.webui import WebUI
from mo_operator.controllers.framework.admission import admit
from mo_operator.controllers.framework.decision import Decision
from mo_operator.controllers.framework.writes import Apply, Delete
from mo_operator.controllers.steps.podset_input import Cached
from mo_operator.controllers.webui import ConsoleView, decide
from mo_operator.kube.meta.objects import name_of

from .controller_fakes import NOW
from .podset_fakes import landed

Obj = dict[str, Any]


def console(**spec: Any) -> Obj:
    return {
        "apiVersion": "core.matrixorigin.io/v1alpha1",
        "kind": "WebUI",
        "metadata": {"name": "mo", "namespace": "ns", "uid": "uid-webui", "generation": 1},
        "spec": {"replicas": 1, "image": "matrixorigin/dashboard:1.0", **spec},
    }


def credential(password: str | None = "secret") -> Obj:
    data = {"username": "dump", **({"password": password} if password else {})}
    return {
        "kind": "Secret",
        "metadata": {"name": "mo-credential", "namespace": "ns"},
        "data": {k: base64.b64encode(v.encode()).decode() for k, v in data.items()},
    }


def view(
    obj: Obj | None = None,
    *,
    secret: Obj | None = None,
    objects: Sequence[Obj] = (),
    pods: Sequence[Obj] = (),
    known: Mapping[str, Any] | None = None,
) -> ConsoleView:
    obj = obj or console()
    cached = Cached({(o["kind"], name_of(o)): o for o in objects})
    configs = tuple(o for o in objects if o["kind"] == "Secret")
    spec = admit(WebUI, obj).spec
    return ConsoleView(obj, spec, known or {}, secret, NOW, 120.0, cached, configs, tuple(pods))


def applied(decision: Decision) -> list[Obj]:
    return [dict(i.obj) for i in decision.intents if isinstance(i, Apply)]


def settled() -> tuple[list[Obj], list[Obj]]:
    objects, pods = landed(applied(decide(view(secret=credential()))), 1)
    config = next(o for o in objects if o["kind"] == "Secret")
    for p in pods:  # the console's pods mount the config Secret
        p["spec"] = {**p["spec"], "volumes": [{"name": "config", "secret": {"secretName": name_of(config)}}]}
    return objects, pods


def old_config(*, rolled: bool = True) -> ConsoleView:
    objects, pods = settled()
    old = [
        o
        for o in landed(
            applied(decide(view(console(replicas=1, serviceType="NodePort"), secret=credential("older")))), 1
        )[0]
        if o["kind"] == "Secret"
    ]
    if not rolled:
        objects = [
            {**o, "status": {**o["status"], "observedGeneration": 0}} if o["kind"] == "Deployment" else o
            for o in objects
        ]
    return view(secret=credential(), objects=[*objects, *old], pods=pods)


def writes(decision: Decision) -> list[str]:
    return [
        f"apply {i.obj['kind']}" if isinstance(i, Apply) else f"delete {i.resource.kind}"
        for i in decision.intents
        if isinstance(i, Apply | Delete)
    ]


CASES: dict[str, tuple[Callable[[], ConsoleView], list[str], str | None]] = {
    "a console without its cluster's credential waits and writes nothing": (
        lambda: view(),
        [],
        "WaitingForCredential",
    ),
    "a credential without a password is no credential": (
        lambda: view(secret=credential(None)),
        [],
        "WaitingForCredential",
    ),
    "a console with a credential writes its config Secret, Service and Deployment": (
        lambda: view(secret=credential()),
        ["apply Secret", "apply Service", "apply Deployment"],
        "ConsolesNotReady",
    ),
    "a settled console writes nothing": (
        lambda: view(secret=credential(), objects=settled()[0], pods=settled()[1]),
        [],
        "AllConsolesReady",
    ),
    "a config Secret of an earlier version goes once the roll is complete": (
        old_config,
        ["delete Secret"],
        "AllConsolesReady",
    ),
    "a config Secret of an earlier version stays while the roll is not complete": (
        lambda: old_config(rolled=False),
        [],
        None,
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_console_decides(case: str) -> None:
    build, expected, ready = CASES[case]
    decision = decide(build())
    assert writes(decision) == expected
    reasons = {c.type: c.reason for c in decision.conditions}
    if ready is not None:
        assert reasons["Ready"] == ready


def test_the_console_rolls_when_the_credential_changes() -> None:
    objects, pods = settled()
    decision = decide(view(secret=credential("rotated"), objects=objects, pods=pods))
    assert writes(decision) == ["apply Secret", "apply Deployment"]
    assert {c.type: c.reason for c in decision.conditions}["UpToDate"] == "RollingUpdate"
