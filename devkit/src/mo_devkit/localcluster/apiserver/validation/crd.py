"""Validation of a CustomResourceDefinition as apiextensions-apiserver does
it before storing one: kept apart from the generic registry, which only
calls it for that one kind."""

from __future__ import annotations

from typing import Any

from ..errors import field_cause
from ..schema.structural import structural_causes

Obj = dict[str, Any]


def validate_crd(crd: Obj) -> list[dict[str, str]]:
    """The causes kube-apiserver's CustomResourceDefinition validation finds:
    the name, exactly one storage version, and structural schemas."""
    causes = []
    spec = crd.get("spec") or {}
    names = spec.get("names") or {}
    group = spec.get("group", "")
    expected = f"{names.get('plural', '')}.{group}"
    if crd["metadata"].get("name") != expected:
        causes.append(
            field_cause(
                "metadata.name",
                f'Invalid value: "{crd["metadata"].get("name")}": must be spec.names.plural+"."+spec.group',
            )
        )
    versions = spec.get("versions") or []
    if not versions:
        causes.append(
            field_cause(
                "spec.versions", "Invalid value: must have exactly one version marked as storage version"
            )
        )
    storage = sum(1 for v in versions if v.get("storage"))
    if storage != 1:
        causes.append(
            field_cause(
                "spec.versions", "Invalid value: must have exactly one version marked as storage version"
            )
        )
    if storage == 0 and not (crd.get("status") or {}).get("storedVersions"):
        # PrepareForCreate stores the storage version: with none there is none stored either
        causes.append(
            field_cause(
                "status.storedVersions",
                "Invalid value: []string(nil): must have at least one stored version",
            )
        )
    # kube-apiserver validates the internal form, where a schema that
    # every version shares is hoisted to spec.validation.
    schemas = [(v.get("schema") or {}).get("openAPIV3Schema") for v in versions]
    shared = len(schemas) > 0 and all(sc == schemas[0] for sc in schemas)
    for i, v in enumerate(versions):
        schema = (v.get("schema") or {}).get("openAPIV3Schema")
        where = "spec.validation.openAPIV3Schema" if shared else f"spec.versions[{i}].schema.openAPIV3Schema"
        if schema is None:
            causes.append(
                field_cause(
                    f"spec.versions[{i}].schema.openAPIV3Schema",
                    "Required value: schemas are required",
                    "FieldValueRequired",
                )
            )
            continue
        status = "status" in (v.get("subresources") or {})
        causes += [
            {"reason": c.reason, "message": c.message, "field": c.field}
            for c in structural_causes(schema, where, status_subresource=status)
            if not (shared and i > 0)  # a shared schema is validated once
        ]
    return causes
