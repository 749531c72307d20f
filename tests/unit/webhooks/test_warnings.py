"""Admission warnings over the real webhook server: a version that is not semantic
is admitted with a warning naming the field and ``semanticVersion`` (every kind
that carries a version, the same way), a semantic one or a ``semanticVersion``
without; every field the operator accepts but does not act on is named in a
warning that says it has no effect."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from api.conftest import EXAMPLES, example

from mo_operator.api.defaulting import default
from mo_operator.api.validation import admission_warnings
from mo_operator.api.validation.versions import UNKNOWN_VERSION_BEHAVIOUR
from mo_operator.webhooks import DEFAULTED_KINDS

from .conftest import Served

Obj = dict[str, Any]
NIGHTLY = "nightly-20261120"


async def _admitted(served: Served, obj: Obj, old: Obj | None = None) -> list[str]:
    """The warnings of an admitted object (defaulted first, as kube-apiserver does)."""
    kind = obj["kind"]
    if kind in DEFAULTED_KINDS:
        _, obj = await served.mutate(kind, "CREATE" if old is None else "UPDATE", obj, old)
    response = await served.validate(kind, "CREATE" if old is None else "UPDATE", obj, old)
    assert response["allowed"] is True, response
    warnings: list[str] = response.get("warnings") or []
    return warnings


def _version_warning(field: str, text: str, override: str, *, image: bool = False) -> str:
    what = "has no semantic version tag" if image else "is not a semantic version"
    return f"{field}: '{text}' {what}, so {UNKNOWN_VERSION_BEHAVIOUR}; set {override} to choose it"


async def test_a_cluster_on_a_nightly_version_is_admitted_with_one_warning(served: Served) -> None:
    cluster = example("matrixonecluster")
    cluster["spec"]["version"] = NIGHTLY
    assert await _admitted(served, cluster) == [
        _version_warning("spec.version", NIGHTLY, "spec.semanticVersion")
    ], "the components running the cluster's version share one warning"


async def test_a_semantic_version_is_admitted_without_a_warning(served: Served) -> None:
    for name in ("matrixonecluster", "logset", "dnset", "cnset", "proxyset"):
        assert await _admitted(served, example(name)) == [], name
    # Read as upstream's semver.ParseTolerant reads them: a pre-release is a version.
    for version in ("v2.0.1-hotfix", "1.2", "v3.0.0-rc1"):
        cluster = example("matrixonecluster")
        cluster["spec"]["version"] = version
        assert await _admitted(served, cluster) == [], version
    cluster = example("matrixonecluster")
    cluster["spec"]["semanticVersion"] = "v3.0.0-rc1+build.5"
    assert await _admitted(served, cluster) == [], "build metadata is fine in a version, not in a tag"


async def test_semantic_version_over_a_nightly_image_is_admitted_without_a_warning(served: Served) -> None:
    cluster = example("matrixonecluster")
    cluster["spec"].update(version=NIGHTLY, semanticVersion="2.1.0")
    cluster["spec"]["tn"]["image"] = f"example.com:5000/mo:{NIGHTLY}"
    assert await _admitted(served, cluster) == []
    cnset = example("cnset")
    cnset["spec"].update(image=f"matrixorigin/matrixone:{NIGHTLY}", semanticVersion="v1.2")
    assert await _admitted(served, cnset) == []


@pytest.mark.parametrize(
    ("name", "change", "expected"),
    [
        ("logset", lambda o: o["spec"].update(image="mo:latest"), _version_warning("spec.image", "mo:latest", "spec.semanticVersion", image=True)),
        ("dnset", lambda o: o["spec"].update(image="mo@sha256:" + "a" * 64), _version_warning("spec.image", "mo@sha256:" + "a" * 27 + "...", "spec.semanticVersion", image=True)),
        ("cnset", lambda o: o["spec"].update(image="mo:2.0-hotfix"), _version_warning("spec.image", "mo:2.0-hotfix", "spec.semanticVersion", image=True)),
        ("proxyset", lambda o: o["spec"].update(semanticVersion="next"), _version_warning("spec.semanticVersion", "next", "spec.semanticVersion")),
        ("tnset", lambda o: o["spec"].update(image="mo:nightly"), _version_warning("spec.image", "mo:nightly", "spec.semanticVersion", image=True)),
        ("cnpool", lambda o: o["spec"]["template"].update(image="mo:nightly"), _version_warning("spec.template.image", "mo:nightly", "spec.template.semanticVersion", image=True)),
        ("matrixonecluster", lambda o: o["spec"]["cnGroups"][0].update(image="mo:nightly"), _version_warning("spec.cnGroups[0].image", "mo:nightly", "spec.cnGroups[0].semanticVersion", image=True)),
        ("matrixonecluster", lambda o: o["spec"].update(semanticVersion="nightly"), _version_warning("spec.semanticVersion", "nightly", "spec.semanticVersion")),
    ],
)  # fmt: skip
async def test_every_kind_with_a_version_warns_the_same_way(
    served: Served, name: str, change: Callable[[Obj], None], expected: str
) -> None:
    obj = example(name)
    change(obj)
    assert expected in await _admitted(served, obj)


async def test_an_update_to_a_nightly_version_is_admitted_with_the_warning(served: Served) -> None:
    old = default("CNSet", example("cnset"))
    new = default("CNSet", example("cnset"))
    new["spec"]["image"] = f"matrixorigin/matrixone:{NIGHTLY}"
    warnings = await _admitted(served, new, old)
    assert [w for w in warnings if w.startswith("spec.image: ")] == [
        _version_warning(
            "spec.image", f"matrixorigin/matrixone:{NIGHTLY}", "spec.semanticVersion", image=True
        )
    ]


def _set(path: str, value: Any) -> Callable[[Obj], None]:
    def change(obj: Obj) -> None:
        *parents, last = path.split(".")
        at: Any = obj
        for key in parents:
            at = at[int(key)] if isinstance(at, list) else at.setdefault(key, {})
        at[last] = value

    return change


IGNORED = [
    ("matrixonecluster", "spec.metricReaderEnabled", True, "spec.metricReaderEnabled"),
    ("matrixonecluster", "spec.tn.clusterDomain", "cluster.local", "spec.tn.clusterDomain"),
    ("matrixonecluster", "spec.logService.dnsBasedIdentity", True, "spec.logService.dnsBasedIdentity"),
    ("matrixonecluster", "spec.logService.volume.memoryCacheSize", "1Gi", "spec.logService.volume.memoryCacheSize"),
    ("matrixonecluster", "spec.cnGroups.0.overlay", {"volumeClaims": [{"metadata": {"name": "x"}}]}, "spec.cnGroups[0].overlay.volumeClaims"),
    ("matrixonecluster", "spec.webui", {"replicas": 1, "config": "[log]"}, "spec.webui.config"),
    ("logset", "spec.clusterDomain", "cluster.local", "spec.clusterDomain"),
    ("logset", "spec.dnsBasedIdentity", True, "spec.dnsBasedIdentity"),
    ("dnset", "spec.cacheVolume", {"size": "1Gi", "memoryCacheSize": "1Gi"}, "spec.cacheVolume.memoryCacheSize"),
    ("cnset", "spec.overlay", {"volumeClaims": [{"metadata": {"name": "x"}}]}, "spec.overlay.volumeClaims"),
    ("proxyset", "spec.overlay", {"volumeClaims": [{"metadata": {"name": "x"}}]}, "spec.overlay.volumeClaims"),
    ("cnpool", "spec.template.replicas", 3, "spec.template.replicas"),
    ("cnpool", "spec.strategy.updateStrategy.reclaimTimeout", "1h", "spec.strategy.updateStrategy.reclaimTimeout"),
    ("cnclaim", "spec.sourcePod", {"nodeName": "node-1"}, "spec.sourcePod"),
    ("cnclaimset", "spec.template.spec.podName", "pool-cn-0", "spec.template.spec.podName"),
    ("webui", "spec.image", "matrixorigin/dashboard:latest", "spec.image"),
    ("webui", "spec.serviceArgs", ["-debug-http=:6060"], "spec.serviceArgs"),
    ("webui", "spec.overlay", {"env": [{"name": "A", "value": "1"}]}, "spec.overlay.env"),
    ("webui", "deps.cnset", {"metadata": {"name": "mo-tp"}}, "deps.cnset"),
]  # fmt: skip


@pytest.mark.parametrize(("name", "path", "value", "field"), IGNORED)
async def test_a_field_the_operator_ignores_is_named_in_a_warning(
    served: Served, name: str, path: str, value: Any, field: str
) -> None:
    obj = example(name)
    _set(path, value)(obj)
    warnings = await _admitted(served, obj)
    assert any(w.startswith(f"{field}: has no effect: ") for w in warnings), warnings


async def test_fields_the_operator_acts_on_bring_no_warning(served: Served) -> None:
    """The examples' fields are all honoured, but for the WebUI's image and deps
    (the console runs the dashboard images, waits for no CNSet) and a pool's
    reclaimTimeout; a python-udf sidecar's overlay and a console's updateStrategy
    are honoured too."""
    expected = {
        "webui": {"spec.image", "deps.cnset"},
        "cnpool": {"spec.strategy.updateStrategy.reclaimTimeout"},
    }
    for name in sorted(EXAMPLES):
        obj = example(name)
        if name == "cnset":
            obj["spec"]["pythonUdfSidecar"] = {"enabled": True, "overlay": {"command": ["serve"]}}
        fields = {w.split(": ", 1)[0] for w in admission_warnings(obj["kind"], obj)}
        assert fields == expected.get(name, set()), name


async def test_a_metric_reader_left_false_brings_no_warning(served: Served) -> None:
    cluster = example("matrixonecluster")
    cluster["spec"]["metricReaderEnabled"] = False
    assert await _admitted(served, cluster) == []


async def test_a_consoles_update_strategy_may_not_stop_every_roll(served: Served) -> None:
    webui = example("webui")
    webui["spec"]["updateStrategy"] = {"maxSurge": 0, "maxUnavailable": "0%"}
    response = await served.validate("WebUI", "CREATE", webui)
    assert response["allowed"] is False
    assert (
        "spec.updateStrategy.maxUnavailable: may not be 0 when maxSurge is 0" in response["status"]["message"]
    )


async def test_a_version_of_thousands_of_digits_is_answered_naming_the_field(served: Served) -> None:
    """Python refuses to convert a string of more than 4,300 digits to an int: a parser
    that tried made the webhook answer an InternalError naming no field."""
    cluster = example("matrixonecluster")
    cluster["spec"]["version"] = "9" * 5000
    _, cluster = await served.mutate("MatrixOneCluster", "CREATE", cluster)
    response = await served.validate("MatrixOneCluster", "CREATE", cluster)
    answer = response.get("warnings") or [response.get("status", {}).get("message", "")]
    assert response.get("status", {}).get("reason") != "InternalError", response
    assert any("spec.version" in text for text in answer), response


async def test_a_log_service_scaled_to_zero_is_admitted_with_a_warning_that_it_stops(served: Served) -> None:
    """Upstream admits it ("should allow scale to zero"): the user is told it stops MatrixOne."""
    cluster = example("matrixonecluster")
    stored = default("MatrixOneCluster", example("matrixonecluster"))
    cluster["spec"]["logService"]["replicas"] = 0
    (warning,) = await _admitted(served, cluster, stored)
    assert warning.startswith("spec.logService.replicas: 0 stops the log service") and "Stopped" in warning
    logset = example("logset")
    logset["spec"]["replicas"] = 0
    assert (await _admitted(served, logset))[0].startswith("spec.replicas: 0 stops the log service")


async def test_tns_beyond_the_tn_shards_are_admitted_with_a_warning_that_they_stand_by(
    served: Served,
) -> None:
    """MatrixOne places one replica of each TN shard (one from 2.0 on); the other TNs
    only take over when the active one's store expires (HAKeeper's tnservice checker)."""
    cluster = example("matrixonecluster")
    cluster["spec"]["tn"]["replicas"] = 3
    (warning,) = await _admitted(served, cluster)
    assert warning.startswith("spec.tn.replicas: MatrixOne runs one TN per TN shard (1,")
    assert "2 more TNs only stand by" in warning
    dnset = example("dnset")
    dnset["spec"]["replicas"] = 2
    assert "1 more TN only stands by" in (await _admitted(served, dnset))[0]
    cluster = example("matrixonecluster")
    assert await _admitted(served, cluster) == [], "one TN is what MatrixOne runs"


async def test_a_log_budget_that_lets_a_drain_break_quorum_is_admitted_with_a_warning(
    served: Served,
) -> None:
    """A drain could then take down two of three stores at once: the user asked for it,
    and is told what it costs."""
    cluster = example("matrixonecluster")
    cluster["spec"]["logService"]["podDisruptionBudget"] = {"maxUnavailable": 2}
    (warning,) = await _admitted(served, cluster)
    assert warning == (
        "spec.logService.podDisruptionBudget.maxUnavailable: lets a drain evict 2 log stores at once, "
        "more than the 1 a 3-replica log shard can lose and keep its quorum"
    )
    cluster["spec"]["logService"]["podDisruptionBudget"] = {"maxUnavailable": "33%"}
    assert await _admitted(served, cluster) == [], "33% of 3 rounds up to 1"
