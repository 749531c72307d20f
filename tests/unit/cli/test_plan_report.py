"""The report ``mo-operator plan`` prints: what a person reads, and the same in JSON."""

from __future__ import annotations

import json

from click.testing import CliRunner
from rich.console import Console

from mo_operator.cli.main import main
from mo_operator.cli.plan import report_lines
from mo_operator.cli.plugin.main import main as plugin
from mo_operator.controllers.planning import ClusterPlan, ConditionChange, ObjectPlan, Step


def _text(plan: ClusterPlan) -> str:
    console = Console(width=300, no_color=True, highlight=False, record=True)
    for line in report_lines(plan):
        console.print(line, soft_wrap=True)
    return console.export_text()


def _acting() -> ClusterPlan:
    cluster = ObjectPlan(
        "MatrixOneCluster",
        "mo",
        2,
        steps=[
            Step("apply CNSet mo-tp", 1, ("spec.replicas: 2 -> 3",)),
            Step("apply ProxySet mo", 1),
            Step("create Pod mo-tp-cn-2", 2, ("new object",)),
        ],
        observed_generation=(1, 2),
        conditions=[
            ConditionChange(
                "Synced",
                {"status": "True", "reason": "Synced", "message": ""},
                {"status": "False", "reason": "Progressing", "message": "apply CNSet mo-tp"},
            )
        ],
        events=[("Normal", "Rolling", "CNSet mo-tp rolls")],
        requeue_after=2.0,
    )
    logset = ObjectPlan("LogSet", "mo", 1, direct=["set the finalizers of LogSet mo to ['x']"])
    return ClusterPlan(
        "ns",
        "mo",
        "not asked (--no-matrixone): the plan assumes MatrixOne does not answer",
        [cluster, logset, ObjectPlan("CNSet", "mo-tp", 1)],
    )


def test_a_settled_cluster_reads_nothing_to_do_for_each_object() -> None:
    plan = ClusterPlan(
        "ns", "mo", "asked", [ObjectPlan("MatrixOneCluster", "mo", 1), ObjectPlan("LogSet", "mo", 1)]
    )

    text = _text(plan)

    assert text.splitlines()[:2] == [
        "MatrixOneCluster ns/mo: nothing to do, every object is as its spec asks",
        "MatrixOne: asked",
    ]
    assert "MatrixOneCluster mo (generation 1): nothing to do" in text
    assert "LogSet mo (generation 1): nothing to do" in text


def test_an_acting_cluster_reads_its_steps_in_batches_status_events_and_direct_writes() -> None:
    text = _text(_acting())

    assert "MatrixOneCluster ns/mo: the operator would act" in text
    assert "MatrixOne: not asked (--no-matrixone)" in text
    for line in (
        "  plan, 3 step(s) in 2 batch(es):",
        "    1. apply CNSet mo-tp",
        "         spec.replicas: 2 -> 3",
        "    1. apply ProxySet mo",
        "    2. create Pod mo-tp-cn-2",
        "  status.observedGeneration: 1 -> 2",
        '  condition Synced: True Synced -> False Progressing "apply CNSet mo-tp"',
        "  event Normal Rolling: CNSet mo-tp rolls",
        "  then looks again in 2s",
        "  would set the finalizers of LogSet mo to ['x']",
        "CNSet mo-tp (generation 1): nothing to do",
    ):
        assert line in text.splitlines(), (line, text)


def test_the_json_report_carries_the_same_content() -> None:
    data = json.loads(json.dumps(_acting().as_json()))

    assert data["settled"] is False and data["matrixone"].startswith("not asked")
    cluster, logset, cnset = data["objects"]
    assert [(s["batch"], s["what"]) for s in cluster["steps"]] == [
        (1, "apply CNSet mo-tp"),
        (1, "apply ProxySet mo"),
        (2, "create Pod mo-tp-cn-2"),
    ]
    assert cluster["steps"][0]["changes"] == ["spec.replicas: 2 -> 3"]
    assert cluster["status"]["observedGeneration"] == {"before": 1, "after": 2}
    assert cluster["status"]["conditions"][0]["after"]["reason"] == "Progressing"
    assert cluster["events"] == [{"type": "Normal", "reason": "Rolling", "message": "CNSet mo-tp rolls"}]
    assert logset["directWrites"] == ["set the finalizers of LogSet mo to ['x']"]
    assert cnset["settled"] is True


def test_mo_operator_and_kubectl_mo_both_offer_plan_with_the_same_options() -> None:
    for command, name in ((main, "mo-operator"), (plugin, "kubectl mo")):
        result = CliRunner().invoke(command, ["plan", "--help"], prog_name=name)
        assert result.exit_code == 0, result.output
        for option in ("--matrixone / --no-matrixone", "--output", "--kubeconfig", "--namespace", "NAME"):
            assert option in result.output, (name, option, result.output)
