"""What the operator's wheel ships: the operator alone, with every package it
imports declared and nothing declared that it does not import.

The wheel is built once per session by ``python -m build`` from a copy of just
what the Dockerfile's build stage copies (pyproject.toml, README.md, LICENSE,
src/), so a stale ``build/`` directory in the work tree cannot leak into it,
and the image installs exactly the wheel checked here.
"""

from __future__ import annotations

import ast
import importlib.util
import re
import shutil
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from email.parser import Parser
from functools import cache
from importlib import metadata
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
DEVKIT_PACKAGES = ("mo_devkit", "localcluster", "simulated", "testing")
"""The dev kit's package and the names its parts had inside the operator's."""


@pytest.fixture(scope="session")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> zipfile.ZipFile:
    tree = tmp_path_factory.mktemp("source")
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(REPO / name, tree / name)
    shutil.copytree(REPO / "src", tree / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    out = tmp_path_factory.mktemp("dist")
    built = subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--outdir", str(out), str(tree)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    (path,) = out.glob("mo_operator-*.whl")
    return zipfile.ZipFile(path)


def _metadata(wheel: zipfile.ZipFile) -> dict[str, list[str]]:
    (name,) = [n for n in wheel.namelist() if n.endswith(".dist-info/METADATA")]
    message = Parser().parsestr(wheel.read(name).decode())
    return {key: message.get_all(key) or [] for key in ("Name", "Version", "Requires-Dist", "License-File")}


def _normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _declared(wheel: zipfile.ZipFile) -> set[str]:
    """The distributions the wheel requires unconditionally (not for an extra)."""
    return {
        _normalize(re.match(r"[A-Za-z0-9._-]+", requirement).group(0))  # type: ignore[union-attr]
        for requirement in _metadata(wheel)["Requires-Dist"]
        if "extra ==" not in requirement
    }


def _imports(source: str) -> Iterator[str]:
    """The absolute module names ``source`` imports (relative imports are the package's own)."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.module


@cache
def _owners(module: str) -> frozenset[str]:
    """The distributions that provide ``module``: those importlib.metadata maps its
    top-level name to, narrowed to the one whose files hold the module where
    several share the name (lightkube and lightkube-models both install lightkube/)."""
    top = module.split(".")[0]
    candidates = metadata.packages_distributions().get(top, [])
    if len(candidates) > 1:
        spec = importlib.util.find_spec(module)
        origin = Path(spec.origin).resolve() if spec is not None and spec.origin else None
        holders = [
            name
            for name in candidates
            if origin is not None
            and any(
                Path(metadata.distribution(name).locate_file(f)).resolve() == origin
                for f in metadata.distribution(name).files or ()
            )
        ]
        candidates = holders or candidates
    return frozenset(_normalize(name) for name in candidates)


def _third_party_imports(wheel: zipfile.ZipFile) -> dict[str, set[str]]:
    """Each module outside the standard library and the operator that a module of
    the wheel imports, with the files that import it."""
    found: dict[str, set[str]] = {}
    for name in wheel.namelist():
        if not name.endswith(".py"):
            continue
        for module in _imports(wheel.read(name).decode()):
            top = module.split(".")[0]
            if top not in sys.stdlib_module_names and top != "mo_operator":
                found.setdefault(module, set()).add(name)
    return found


def test_the_wheel_holds_the_operator_and_nothing_of_the_dev_kit(wheel: zipfile.ZipFile) -> None:
    names = wheel.namelist()
    assert _metadata(wheel)["Name"] == ["mo-operator"]
    assert {n.split("/")[0] for n in names} == {
        "mo_operator",
        f"mo_operator-{_metadata(wheel)['Version'][0]}.dist-info",
    }
    devkit = [n for n in names if set(n.split("/")[:-1]) & set(DEVKIT_PACKAGES)]
    assert devkit == [], f"dev-kit modules in the operator's wheel: {devkit[:10]}"
    for module in (
        "mo_operator/cli/main.py",
        "mo_operator/controllers/operator.py",
        "mo_operator/kube/manager/manager.py",
    ):
        assert module in names


def test_the_wheel_holds_no_kubectl_and_does_not_require_it(wheel: zipfile.ZipFile) -> None:
    assert [n for n in wheel.namelist() if Path(n).name.startswith("kubectl")] == []
    assert not any(_normalize(d).startswith("kubectl") for d in _declared(wheel))


def test_the_wheel_carries_the_license_it_declares(wheel: zipfile.ZipFile) -> None:
    meta = _metadata(wheel)
    assert "LICENSE" in meta["License-File"]
    (license_file,) = [n for n in wheel.namelist() if n.endswith(".dist-info/licenses/LICENSE")]
    assert "Apache License" in wheel.read(license_file).decode()[:200]


def test_every_package_the_operator_imports_is_a_declared_dependency(wheel: zipfile.ZipFile) -> None:
    declared = _declared(wheel)
    undeclared = {
        module: sorted(files)[:3]
        for module, files in _third_party_imports(wheel).items()
        if not _owners(module) & declared
    }
    assert undeclared == {}, f"imported but not declared in pyproject.toml's dependencies: {undeclared}"


def test_every_declared_dependency_is_imported_by_the_operator(wheel: zipfile.ZipFile) -> None:
    used = set().union(*(_owners(module) for module in _third_party_imports(wheel)))
    assert _declared(wheel) - used == set(), "declared in pyproject.toml but never imported"
