"""One version: pyproject.toml's. The installed distribution, ``mo-operator
--version``, ``mo_operator_build_info`` and the operator's image tag and labels
read it at run time; the files that cannot read it (the chart, the plain
manifests, the Dockerfile, the dev kit's pyproject, the changelog) are checked
against it here, so a release changes pyproject.toml and whatever this test names."""

from __future__ import annotations

import re
import tomllib
from importlib import metadata
from typing import Any

import yaml
from click.testing import CliRunner

import mo_operator
from install_manifests import CHART_DIR, REPO, operator_objects
from mo_operator.cli.main import main

VERSION: str = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]


def test_the_installed_operator_is_pyprojects_version() -> None:
    assert re.fullmatch(r"\d+\.\d+\.\d+", VERSION)
    assert metadata.version("mo-operator") == VERSION
    assert mo_operator.__version__ == VERSION


def test_mo_operator_version_prints_it() -> None:
    result = CliRunner().invoke(main, ["--version"])
    assert result.exit_code == 0
    assert result.output == f"mo-operator {VERSION}\n"


def test_the_charts_app_version_is_it() -> None:
    chart = yaml.safe_load((CHART_DIR / "Chart.yaml").read_text())
    assert chart["appVersion"] == VERSION


def _labelled(objs: list[dict[str, Any]]) -> list[tuple[str, str]]:
    found = []
    for obj in objs:
        for meta in (obj["metadata"], obj.get("spec", {}).get("template", {}).get("metadata", {})):
            if "app.kubernetes.io/version" in (meta.get("labels") or {}):
                found.append((obj["kind"], meta["labels"]["app.kubernetes.io/version"]))
    return found


def test_the_plain_manifests_label_and_run_it() -> None:
    objs = operator_objects()
    labelled = _labelled(objs)
    assert labelled and {version for _, version in labelled} == {VERSION}, labelled
    (deployment,) = [o for o in objs if o["kind"] == "Deployment"]
    images = [c["image"] for c in deployment["spec"]["template"]["spec"]["containers"]]
    assert images == [f"mo-operator:{VERSION}"]


def test_the_dockerfile_labels_the_image_with_it() -> None:
    text = (REPO / "Dockerfile").read_text()
    assert f"ARG VERSION={VERSION}\n" in text
    assert 'org.opencontainers.image.version="${VERSION}"' in text


def test_the_dev_kit_is_released_with_the_operator() -> None:
    project = tomllib.loads((REPO / "devkit" / "pyproject.toml").read_text())["project"]
    assert project["version"] == VERSION
    assert f"mo-operator=={VERSION}" in project["dependencies"]


def test_the_changelog_has_a_section_for_it() -> None:
    text = (REPO / "CHANGELOG.md").read_text()
    assert re.search(rf"^## \[{re.escape(VERSION)}\] - \d{{4}}-\d{{2}}-\d{{2}}$", text, re.M), VERSION
