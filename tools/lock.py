"""constraints.txt: the exact versions the README's commands and CI install.

    python tools/lock.py            add what pyproject.toml asks for, keep every other pin
    python tools/lock.py --upgrade  move every pin to the newest release pyproject allows
    python tools/lock.py --check    fail if constraints.txt is not what pyproject.toml gives

The pins are compiled by uv from both distributions of this repository, the
operator (pyproject.toml, with every extra) and its dev kit
(devkit/pyproject.toml, whose dependency on the operator is this tree), for any
platform and Python 3.11 on; the operator itself is not pinned. An existing pin is kept while it still satisfies
pyproject, so the check fails only when pyproject changed and the file did not.
Before committing an upgrade, run `.ci/run --latest` to see what it breaks.
"""

from __future__ import annotations

import difflib
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from uv import find_uv_bin

ROOT = Path(__file__).resolve().parent.parent
LOCK = ROOT / "constraints.txt"
PROJECTS = ["pyproject.toml", "devkit/pyproject.toml"]
EXTRAS = ["dev"]


def compile_into(out: Path, *, upgrade: bool) -> None:
    command = [find_uv_bin(), "pip", "compile", *PROJECTS, "--universal", "--python-version", "3.11"]
    command += [arg for extra in EXTRAS for arg in ("--extra", extra)]
    command += ["--no-emit-package", "mo-operator"]
    command += ["--custom-compile-command", "python tools/lock.py", "--quiet", "-o", str(out)]
    if upgrade:
        command.append("--upgrade")
    subprocess.run(command, cwd=ROOT, check=True)


def main(argv: list[str]) -> int:
    if argv == ["--check"]:
        with tempfile.TemporaryDirectory() as tmp:
            fresh = Path(tmp) / LOCK.name
            shutil.copy(LOCK, fresh)
            compile_into(fresh, upgrade=False)
            before, after = LOCK.read_text().splitlines(), fresh.read_text().splitlines()
        if before != after:
            sys.stdout.writelines(line + "\n" for line in difflib.unified_diff(before, after, lineterm=""))
            print("constraints.txt does not match pyproject.toml: run python tools/lock.py", file=sys.stderr)
            return 1
        return 0
    if argv not in ([], ["--upgrade"]):
        print(__doc__, file=sys.stderr)
        return 2
    compile_into(LOCK, upgrade=bool(argv))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
