"""The WebUI's pods take the same overlay pod fields as every other pod the operator
builds, and admission warns only about the overlay fields it does not take."""

from __future__ import annotations

from typing import Any

from mo_operator.api.base import parse
from mo_operator.api.common import POD_OVERLAY_FIELDS
from mo_operator.api.validation import admission_warnings
from mo_operator.api.webui import WebUISpec
from mo_operator.controllers.webui import console_template

OVERLAY: dict[str, Any] = {
    "priorityClassName": "console",
    "tolerations": [{"key": "dedicated", "operator": "Exists"}],
    "terminationGracePeriodSeconds": 5,
    "env": [{"name": "A", "value": "1"}],
}


def test_a_console_pod_takes_the_overlays_pod_fields() -> None:
    spec = parse(WebUISpec, {"replicas": 1, "overlay": OVERLAY})
    pod = console_template(spec, {"app": "x"}, {}, "cfg")["spec"]
    assert pod["priorityClassName"] == "console"
    assert pod["tolerations"] == OVERLAY["tolerations"]
    assert pod["terminationGracePeriodSeconds"] == 5
    assert all("env" not in c for c in pod["containers"]), "the dashboard's containers are its own"


def test_admission_warns_about_the_console_overlays_container_fields_only() -> None:
    webui = {"kind": "WebUI", "metadata": {"name": "w"}, "spec": {"replicas": 1, "overlay": OVERLAY}}
    fields = {w.split(": ", 1)[0] for w in admission_warnings("WebUI", webui)}
    assert fields == {"spec.overlay.env"}
    assert "priorityClassName" in POD_OVERLAY_FIELDS
