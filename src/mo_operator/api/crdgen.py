"""CustomResourceDefinitions (apiextensions.k8s.io/v1) generated from the models.

The output is deterministic (keys sorted, kinds in registry order) so the files
under ``deploy/crds/`` can be committed and compared with what the models generate.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from .kinds import CATEGORY, GROUP, KINDS, VERSION, KindInfo, PrinterColumn
from .schema import resource_schema

__all__ = ["all_crds", "crd", "crd_file_name", "crds_yaml", "stale_crd_files", "write_crds"]

CRD = dict[str, Any]


def _column(c: PrinterColumn) -> dict[str, Any]:
    column: dict[str, Any] = {
        "name": c.name,
        "type": c.type,
        "jsonPath": c.json_path,
        "description": c.description,
    }
    if c.priority:
        column["priority"] = c.priority
    if c.format:
        column["format"] = c.format
    return column


def _subresources(info: KindInfo) -> dict[str, Any]:
    subresources: dict[str, Any] = {"status": {}}
    if info.scale is not None:
        scale = {
            "specReplicasPath": info.scale.spec_replicas_path,
            "statusReplicasPath": info.scale.status_replicas_path,
        }
        if info.scale.label_selector_path:
            scale["labelSelectorPath"] = info.scale.label_selector_path
        subresources["scale"] = scale
    return subresources


def crd(info: KindInfo) -> CRD:
    """The CRD of one kind."""
    names: dict[str, Any] = {
        "kind": info.kind,
        "listKind": info.list_kind,
        "plural": info.plural,
        "singular": info.singular,
        "categories": [CATEGORY],
    }
    if info.short_names:
        names["shortNames"] = list(info.short_names)
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {
            "name": f"{info.plural}.{GROUP}",
            "labels": {"app.kubernetes.io/part-of": "matrixone", "app.kubernetes.io/name": "mo-operator"},
        },
        "spec": {
            "group": GROUP,
            "names": names,
            "scope": "Namespaced" if info.namespaced else "Cluster",
            "versions": [
                {
                    "name": VERSION,
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": resource_schema(info.model)},
                    "subresources": _subresources(info),
                    "additionalPrinterColumns": [_column(c) for c in info.printer_columns],
                }
            ],
        },
    }


def all_crds() -> list[CRD]:
    """The CRD of every kind, in registry order."""
    return [crd(info) for info in KINDS.values()]


def _to_yaml(obj: CRD) -> str:
    return yaml.safe_dump(obj, sort_keys=True, default_flow_style=False, allow_unicode=True, width=100)


def crds_yaml() -> str:
    """Every CRD as one multi-document YAML stream (what ``mo-operator crds`` prints)."""
    return "".join(f"---\n{_to_yaml(c)}" for c in all_crds())


def crd_file_name(info: KindInfo) -> str:
    """File name of a kind's CRD: ``<group>_<plural>.yaml``, as controller-gen names them."""
    return f"{GROUP}_{info.plural}.yaml"


def write_crds(directory: Path | str) -> list[Path]:
    """Write one YAML file per kind into ``directory`` and remove stale CRD files of ours there."""
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for info in KINDS.values():
        path = out / crd_file_name(info)
        path.write_text(_to_yaml(crd(info)))
        written.append(path)
    for stale in set(out.glob(f"{GROUP}_*.yaml")) - set(written):
        stale.unlink()
    return written


def stale_crd_files(directory: Path | str) -> list[str]:
    """Names of the CRD files in ``directory`` that are missing, differ from the
    models, or belong to no kind of ours any more (what CI fails on)."""
    out = Path(directory)
    expected = {crd_file_name(info): _to_yaml(crd(info)) for info in KINDS.values()}
    present = {p.name for p in out.glob(f"{GROUP}_*.yaml")}
    stale = [
        name for name, text in expected.items() if name not in present or (out / name).read_text() != text
    ]
    return sorted(stale + sorted(present - set(expected)))
