"""docs/metrics.md lists every series family the operator registers, with its
labels: a metric added without a line there fails here."""

from __future__ import annotations

import re
from pathlib import Path

from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

import mo_operator.cli.run  # noqa: F401  (registers everything the operator process does)
from mo_operator.kube.metrics.metrics import REGISTRY

DOC = Path(__file__).parents[3] / "docs" / "metrics.md"
ROW = re.compile(r"^\| `(?P<name>[a-z_:]+)` \| (?P<type>\w+) \|(?P<labels>[^|]*)\|", re.M)
_EXPOSED_SUFFIX = {"counter": "_total", "info": "_info"}


def documented() -> dict[str, set[str]]:
    return {m["name"]: set(re.findall(r"`(\w+)`", m["labels"])) for m in ROW.finditer(DOC.read_text())}


def registered() -> dict[str, set[str] | None]:
    """Each family as its samples are named, with its label names where the
    registry can tell them without samples (None where it cannot)."""
    out: dict[str, set[str] | None] = {}
    for collector in list(REGISTRY._collector_to_names):
        label_names = getattr(collector, "_labelnames", None)
        families = collector.describe() if hasattr(collector, "describe") else collector.collect()
        for family in families:
            name = family.name + _EXPOSED_SUFFIX.get(family.type, "")
            known = label_names is not None and family.type != "info"  # an info's labels are its value
            out[name] = set(label_names) if known else None
    text = generate_latest(REGISTRY).decode()
    for family in text_string_to_metric_families(text):
        name = family.name + _EXPOSED_SUFFIX.get(family.type, "")
        if out.get(name) is None and family.samples:
            out[name] = {k for s in family.samples for k in s.labels if k != "le"}
    return out


def test_every_registered_family_is_documented_with_its_labels() -> None:
    docs = documented()
    for name, labels in registered().items():
        assert name in docs, f"{name} is not in docs/metrics.md"
        if labels is not None:
            assert docs[name] == labels, f"{name}: docs/metrics.md says {docs[name]}, the registry {labels}"


def test_every_documented_family_is_registered() -> None:
    assert set(documented()) - set(registered()) == set()
