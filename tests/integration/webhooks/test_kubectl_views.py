"""What kubectl shows of our kinds: ``kubectl explain`` prints the field
descriptions of every kind, and ``kubectl get mo,cn,tn,log,proxy`` (the short
names) prints their printer columns filled from the stored objects."""

from __future__ import annotations

from typing import Any

from conftest import Kubectl
from mo_operator.api.crdgen import all_crds
from mo_operator.api.kinds import KINDS

from .conftest import Webhooks, example_files

Obj = dict[str, Any]


def _schema(kind: str) -> Obj:
    (crd,) = [c for c in all_crds() if c["spec"]["names"]["kind"] == kind]
    schema: Obj = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    return schema


def _words(text: str) -> str:
    """kubectl wraps descriptions: compare with whitespace collapsed."""
    return " ".join(text.split())


async def test_explain_cn_groups_prints_their_descriptions(webhooks: Webhooks, kubectl: Kubectl) -> None:
    out = (await kubectl.run("explain", "matrixonecluster.spec.cnGroups")).stdout
    groups = _schema("MatrixOneCluster")["properties"]["spec"]["properties"]["cnGroups"]
    head = _words(out.split("FIELD:")[0])
    assert head == "GROUP: core.matrixorigin.io KIND: MatrixOneCluster VERSION: v1alpha1"
    assert "FIELD: cnGroups <[]Object>" in out
    assert _words(groups["description"]) in _words(out)
    assert _words(groups["items"]["properties"]["replicas"]["description"]) in _words(out)
    for field in ("name", "replicas", "cacheVolume", "serviceType", "cnLabels"):
        assert f"\n  {field}\t" in out, field
    assert "name\t<string> -required-" in out


async def test_explain_prints_every_kinds_description(webhooks: Webhooks, kubectl: Kubectl) -> None:
    for kind, info in KINDS.items():
        out = (await kubectl.run("explain", info.plural)).stdout
        assert f"KIND: {kind}" in _words(out)
        assert _words(_schema(kind)["description"]) in _words(out), kind
        # The field list under it describes each top-level field.
        top = "meta" if kind == "Backup" else "spec"
        assert _words(_schema(kind)["properties"][top]["description"]) in _words(out), kind


def _table(text: str) -> list[dict[str, str]]:
    """Rows of one ``kubectl get`` table, cut at the header's column starts (blank
    cells are blank, not shifted)."""
    header, *lines = text.splitlines()
    names = header.split()
    starts = [header.index(n) for n in names]
    bounds = [*starts[1:], None]
    return [{n: line[s:e].strip() for n, s, e in zip(names, starts, bounds, strict=True)} for line in lines]


async def test_get_by_short_names_shows_the_printer_columns(webhooks: Webhooks, kubectl: Kubectl) -> None:
    files = example_files()
    for name in ("matrixonecluster", "cnset", "tnset", "logset", "proxyset"):
        await kubectl.run("apply", "-f", str(files[name]))
    out = (await kubectl.run("get", "mo,cn,tn,log,proxy", "-o", "wide")).stdout
    tables = {t.splitlines()[1].split()[0].split("/")[0]: _table(t) for t in out.strip().split("\n\n")}
    assert set(tables) == {
        f"{k}.core.matrixorigin.io" for k in ("matrixonecluster", "cnset", "tnset", "logset", "proxyset")
    }
    # No operator runs here: the status columns are blank, the desired ones say what was asked.
    (mo,) = tables["matrixonecluster.core.matrixorigin.io"]
    assert list(mo) == ["NAME", "READY", "VERSION", "PHASE", "UP-TO-DATE", "AGE", "DESIRED", "MESSAGE"]
    assert (mo["NAME"], mo["READY"], mo["VERSION"], mo["DESIRED"]) == (
        "matrixonecluster.core.matrixorigin.io/mo",
        "",
        "",
        "1.2.3",
    )
    for kind in ("cnset", "tnset", "logset", "proxyset"):
        (row,) = tables[f"{kind}.core.matrixorigin.io"]
        assert list(row) == ["NAME", "READY", "UP-TO-DATE", "VERSION", "AGE", "IMAGE", "MESSAGE"], kind
        assert row["IMAGE"].startswith("matrixorigin/matrixone:"), kind
    assert tables["cnset.core.matrixorigin.io"][0]["IMAGE"] == "matrixorigin/matrixone:1.1.0"
    # The category lists every kind of ours at once.
    out = (await kubectl.run("get", "matrixone")).stdout
    assert "matrixonecluster.core.matrixorigin.io/mo" in out and "logset.core.matrixorigin.io/mo" in out
