"""Checks on ``default`` values when a CRD is written
(apiextensions ``schema/defaulting.ValidateDefaults``).

A default is applied without further validation when objects are read and
written, so it must itself be pruned (no unknown fields) and valid against
the schema it sits in. Defaults inside embedded ``metadata`` are left alone
here; top-level metadata defaults are forbidden outright elsewhere.
"""

from __future__ import annotations

import copy

from . import fielderrors as fe
from . import nodes
from .fielderrors import Cause
from .goformat import go_deep_equal
from .nodes import Schema
from .objectmeta import validate_embedded_resources
from .openapi import validate_openapi
from .pruning import prune_in_place

_META_FIELDS = frozenset({"apiVersion", "kind", "metadata"})


def default_causes(schema: Schema, path: str) -> list[Cause]:
    """Causes for every default under ``schema`` (the CRD root) that is not
    pruned or not valid."""
    return _validate(schema, path, inside_meta=False, is_root=True)


def _validate(s: Schema, path: str, *, inside_meta: bool, is_root: bool) -> list[Cause]:
    causes: list[Cause] = []
    resource_root = is_root or nodes.embedded(s)
    if nodes.embedded(s):
        inside_meta = False
    if nodes.has_default(s) and not inside_meta:
        default = s["default"]
        default_path = fe.child(path, "default")
        pruned = copy.deepcopy(default)
        prune_in_place(pruned, s, resource_root=resource_root)
        if not go_deep_equal(pruned, default):
            causes.append(fe.invalid(default_path, default, "must not have unknown fields"))
        causes += validate_embedded_resources(default, s, default_path) or validate_openapi(
            default, s, default_path
        )
    item_schema = nodes.items(s)
    if item_schema is not None:
        causes += _validate(item_schema, fe.child(path, "items"), inside_meta=inside_meta, is_root=False)
    for k, prop in nodes.properties(s).items():
        sub_inside_meta = inside_meta or (resource_root and k in _META_FIELDS)
        causes += _validate(
            prop, fe.key(fe.child(path, "properties"), k), inside_meta=sub_inside_meta, is_root=False
        )
    return causes
