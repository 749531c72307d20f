"""What kubectl prints for an object we admit with warnings: each on stderr as
``Warning: <field>: ...``, the object stored all the same, on create and on
update; an object with nothing to warn about prints nothing."""

from __future__ import annotations

from pathlib import Path

import yaml

from conftest import Kubectl

from .conftest import Webhooks, example_files, load


def _warnings(stderr: str) -> list[str]:
    return [line.removeprefix("Warning: ") for line in stderr.splitlines() if line.startswith("Warning: ")]


async def test_kubectl_prints_the_warnings_and_the_object_is_stored(
    webhooks: Webhooks, kubectl: Kubectl, tmp_path: Path
) -> None:
    cluster = load(example_files()["matrixonecluster"])
    cluster["spec"]["version"] = "nightly-20261120"
    path = tmp_path / "mo.yaml"
    path.write_text(yaml.safe_dump(cluster))
    result = await kubectl.run("apply", "-f", str(path))
    assert [w.split(": ", 1)[0] for w in _warnings(result.stderr)] == ["spec.version"], result.stderr
    assert "set spec.semanticVersion to choose it" in result.stderr
    stored = await kubectl.run("get", "mo", "mo", "-n", "default", "-o", "jsonpath={.spec.version}")
    assert stored.stdout == "nightly-20261120"

    cluster["spec"]["metricReaderEnabled"] = True
    path.write_text(yaml.safe_dump(cluster))
    result = await kubectl.run("apply", "-f", str(path))
    assert [w.split(": ", 1)[0] for w in _warnings(result.stderr)] == [
        "spec.version",
        "spec.metricReaderEnabled",
    ], result.stderr

    cluster["spec"].update(semanticVersion="2.1.0", metricReaderEnabled=False)
    path.write_text(yaml.safe_dump(cluster))
    result = await kubectl.run("apply", "-f", str(path))
    assert _warnings(result.stderr) == [], result.stderr
