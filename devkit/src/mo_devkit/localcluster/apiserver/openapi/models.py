"""OpenAPI v3 component schemas for built-in types, generated from lightkube's
models so that the server needs no copy of the Kubernetes specification.

lightkube's models are msgspec Structs whose annotations are strings such as
``'Optional[List[meta_v1.OwnerReference]]'`` and whose docstrings carry each
field's description as ``* **field** ``type`` - text``. Both are read here and
turned into schemas named and shaped as kube-apiserver names and shapes them
(``io.k8s.api.core.v1.Pod``, refs as ``#/components/schemas/...`` with the
field's description beside the ``$ref``), because ``kubectl explain`` prints
type names from the last segment of those refs.

What lightkube does not carry is added from Kubernetes' own schemas: the
scalar wrapper types (Time, Quantity, IntOrString, ...), which lightkube turns
into plain Python aliases, and the value types of maps, which lightkube calls
``dict``.
"""

from __future__ import annotations

import importlib
import inspect
import re
import sys
from typing import Any

import msgspec

REF_PREFIX = "#/components/schemas/"

Schema = dict[str, Any]

# lightkube model module -> the Go package path kube-openapi names schemas by.
_PACKAGE_OF_MODULE = {
    "meta_v1": "io.k8s.apimachinery.pkg.apis.meta.v1",
    "apiextensions_v1": "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1",
    "apiregistration_v1": "io.k8s.kube-aggregator.pkg.apis.apiregistration.v1",
}

# Aliases lightkube flattens to Python types, keyed by (module, name): the
# schema name and body kube-apiserver publishes for them.
_ALIASES: dict[tuple[str, str], tuple[str, Schema]] = {
    ("meta_v1", "Time"): (
        "io.k8s.apimachinery.pkg.apis.meta.v1.Time",
        {
            "description": "Time is a wrapper around time.Time which supports correct marshaling to YAML "
            "and JSON, as an RFC 3339 date-time string.",
            "type": "string",
            "format": "date-time",
        },
    ),
    ("meta_v1", "MicroTime"): (
        "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime",
        {
            "description": "MicroTime is version of Time with microsecond level precision.",
            "type": "string",
            "format": "date-time",
        },
    ),
    ("meta_v1", "FieldsV1"): (
        "io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1",
        {
            "description": "FieldsV1 stores a set of fields in a data structure like a Trie, in JSON format.",
            "type": "object",
        },
    ),
    ("meta_v1", "Patch"): (
        "io.k8s.apimachinery.pkg.apis.meta.v1.Patch",
        {
            "description": "Patch is provided to give a concrete name and type to the Kubernetes PATCH "
            "request body.",
            "type": "object",
        },
    ),
    ("resource", "Quantity"): (
        "io.k8s.apimachinery.pkg.api.resource.Quantity",
        {
            "description": "Quantity is a fixed-point representation of a number, such as 100m, 1Gi or "
            "2.5, with an optional binary (Ki, Mi, Gi, ...) or decimal (m, k, M, G, ...) suffix.",
            "oneOf": [{"type": "string"}, {"type": "number"}],
        },
    ),
    ("util_intstr", "IntOrString"): (
        "io.k8s.apimachinery.pkg.util.intstr.IntOrString",
        {
            "description": "IntOrString is a type that can hold an int32 or a string.",
            "format": "int-or-string",
            "oneOf": [{"type": "integer"}, {"type": "string"}],
        },
    ),
    ("runtime", "RawExtension"): (
        "io.k8s.apimachinery.pkg.runtime.RawExtension",
        {
            "description": "RawExtension is used to hold extensions in external versions: an embedded "
            "object of any kind.",
            "type": "object",
        },
    ),
    ("apiextensions_v1", "JSON"): (
        "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSON",
        {
            "description": "JSON represents any valid JSON value: bool, int64, float64, string, "
            "[]interface{}, map[string]interface{} and nil."
        },
    ),
    ("apiextensions_v1", "JSONSchemaPropsOrArray"): (
        "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrArray",
        {
            "description": "JSONSchemaPropsOrArray represents a JSONSchemaProps or an array of JSONSchemaProps."
        },
    ),
    ("apiextensions_v1", "JSONSchemaPropsOrBool"): (
        "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrBool",
        {"description": "JSONSchemaPropsOrBool represents JSONSchemaProps or a boolean value."},
    ),
    ("apiextensions_v1", "JSONSchemaPropsOrStringArray"): (
        "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrStringArray",
        {"description": "JSONSchemaPropsOrStringArray represents a JSONSchemaProps or a string array."},
    ),
    ("apiextensions_v1", "CustomResourceSubresourceStatus"): (
        "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceSubresourceStatus",
        {
            "description": "CustomResourceSubresourceStatus defines how to serve the status subresource "
            "for CustomResources: the status is represented by the `.status` JSON path inside of a "
            "CustomResource.",
            "type": "object",
        },
    ),
}

# Maps whose values are not strings, keyed by (model class, field): the value
# type as a lightkube annotation. Every other ``dict`` is a map[string]string.
_QUANTITY = "resource.Quantity"
_MAP_VALUES = {
    ("ResourceRequirements", "limits"): _QUANTITY,
    ("ResourceRequirements", "requests"): _QUANTITY,
    ("VolumeResourceRequirements", "limits"): _QUANTITY,
    ("VolumeResourceRequirements", "requests"): _QUANTITY,
    ("ContainerStatus", "allocatedResources"): _QUANTITY,
    ("PodStatus", "allocatedResources"): _QUANTITY,
    ("PodSpec", "overhead"): _QUANTITY,
    ("NodeStatus", "allocatable"): _QUANTITY,
    ("NodeStatus", "capacity"): _QUANTITY,
    ("PersistentVolumeSpec", "capacity"): _QUANTITY,
    ("PersistentVolumeClaimStatus", "allocatedResources"): _QUANTITY,
    ("PersistentVolumeClaimStatus", "capacity"): _QUANTITY,
    ("ResourceQuotaSpec", "hard"): _QUANTITY,
    ("ResourceQuotaStatus", "hard"): _QUANTITY,
    ("ResourceQuotaStatus", "used"): _QUANTITY,
    ("LimitRangeItem", "default"): _QUANTITY,
    ("LimitRangeItem", "defaultRequest"): _QUANTITY,
    ("LimitRangeItem", "max"): _QUANTITY,
    ("LimitRangeItem", "maxLimitRequestRatio"): _QUANTITY,
    ("LimitRangeItem", "min"): _QUANTITY,
    ("PodDisruptionBudgetStatus", "disruptedPods"): "meta_v1.Time",
    ("JSONSchemaProps", "properties"): "JSONSchemaProps",
    ("JSONSchemaProps", "patternProperties"): "JSONSchemaProps",
    ("JSONSchemaProps", "definitions"): "JSONSchemaProps",
    ("JSONSchemaProps", "dependencies"): "JSONSchemaPropsOrStringArray",
    ("ConfigMap", "binaryData"): "bytes",
    ("Secret", "data"): "bytes",
}

_PRIMITIVES: dict[str, Schema] = {
    "str": {"type": "string"},
    "int": {"type": "integer"},
    "float": {"type": "number", "format": "double"},
    "bool": {"type": "boolean"},
    "bytes": {"type": "string", "format": "byte"},
}

# lightkube marks ``spec`` (and ControllerRevision's ``data``) of some kinds as
# required although Kubernetes does not; those are left optional here.
_NOT_REQUIRED_ON_KINDS = frozenset({"spec", "data"})

_FIELD_LINE = re.compile(r"^\* \*\*(?P<name>\w+)\*\* ``[^`]*`` - ?(?P<text>.*)$")
_GENERIC = re.compile(r"^(Optional|List)\[(.*)\]$")


def model_module(group: str, version: str) -> str:
    """lightkube's model module for an API group-version (``apps_v1``, ``core_v1``)."""
    return f"{group.split('.')[0] if group else 'core'}_{version}"


def model_class(group: str, version: str, kind: str) -> type[msgspec.Struct] | None:
    try:
        module = importlib.import_module(f"lightkube.models.{model_module(group, version)}")
    except ImportError:
        return None
    cls = getattr(module, kind, None)
    return cls if inspect.isclass(cls) and issubclass(cls, msgspec.Struct) else None


def schema_name(cls: type) -> str:
    """kube-openapi's name of a model, e.g. ``io.k8s.api.apps.v1.StatefulSet``."""
    module = cls.__module__.rsplit(".", 1)[-1]
    package = _PACKAGE_OF_MODULE.get(module)
    if package is None:
        group, _, version = module.rpartition("_")
        package = f"io.k8s.api.{group}.{version}"
    return f"{package}.{cls.__name__}"


def parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """The type's description and each field's, from a lightkube docstring.

    Wrapped lines are joined with spaces; a blank line inside a description
    keeps its paragraph break."""
    head, _, parameters = inspect.cleandoc(doc).partition("**parameters**")
    fields: dict[str, list[str]] = {}
    current: list[str] | None = None
    for raw in parameters.splitlines():
        line = raw.strip()
        m = _FIELD_LINE.match(line)
        if m:
            current = fields.setdefault(m["name"], [])
            current.append(m["text"])
        elif current is not None:
            current.append(line)
    description = _join([line.strip() for line in head.splitlines()])
    return description, {name: _join(parts) for name, parts in fields.items()}


def _join(lines: list[str]) -> str:
    paragraphs: list[str] = []
    words: list[str] = []
    for line in lines:
        if line:
            words.append(line)
        elif words:
            paragraphs.append(" ".join(words))
            words = []
    if words:
        paragraphs.append(" ".join(words))
    return "\n\n".join(paragraphs)


class ModelSchemas:
    """Collects the component schemas of lightkube models and of every type
    they reference, each added once under its kube-openapi name."""

    def __init__(self) -> None:
        self.schemas: dict[str, Schema] = {}

    def add(self, cls: type[msgspec.Struct]) -> str:
        """Adds the schema of ``cls`` (and its dependencies); returns its name."""
        name = schema_name(cls)
        if name in self.schemas:
            return name
        description, field_docs = parse_docstring(cls.__doc__ or "")
        schema: Schema = {"type": "object"}
        if description:
            schema["description"] = description
        self.schemas[name] = schema  # before recursing: types may refer to themselves
        properties: dict[str, Schema] = {}
        required: list[str] = []
        is_kind = "apiVersion" in cls.__struct_fields__
        annotations = _annotations(cls)
        for f in msgspec.structs.fields(cls):
            annotation = annotations.get(f.name, "Any")
            optional, inner = _unwrap_optional(annotation)
            prop = self._field_schema(cls, f.name, inner)
            if field_docs.get(f.name):
                prop["description"] = field_docs[f.name]
            properties[f.encode_name] = prop
            if not optional and not (is_kind and f.encode_name in _NOT_REQUIRED_ON_KINDS):
                required.append(f.encode_name)
        if properties:
            schema["properties"] = dict(sorted(properties.items()))
        if required:
            schema["required"] = required
        return name

    def _field_schema(self, cls: type, field: str, annotation: str) -> Schema:
        if annotation == "dict":
            value = _MAP_VALUES.get((cls.__name__, field), "str")
            return {"type": "object", "additionalProperties": self._type_schema(cls, value)}
        return self._type_schema(cls, annotation)

    def _type_schema(self, owner: type, annotation: str) -> Schema:
        generic = _GENERIC.match(annotation)
        if generic and generic[1] == "List":
            return {"type": "array", "items": self._type_schema(owner, generic[2])}
        if generic:  # Optional inside a List
            return self._type_schema(owner, generic[2])
        if annotation in _PRIMITIVES:
            return dict(_PRIMITIVES[annotation])
        if annotation in ("dict", "Any"):
            return {"type": "object"}
        name = self.named(owner, annotation)
        # Other aliases of a plain dict (unstructured parts of alpha APIs).
        return {"type": "object"} if name is None else {"$ref": REF_PREFIX + name}

    def named(self, owner: type, annotation: str) -> str | None:
        """The schema name of a model or alias written as ``Name`` or
        ``module.Name``; None for an alias of an unstructured dict."""
        module = sys.modules[owner.__module__]
        module_name = owner.__module__.rsplit(".", 1)[-1]
        if "." in annotation:
            module_name, _, attr = annotation.partition(".")
            module = getattr(module, module_name)
        else:
            attr = annotation
        alias = _ALIASES.get((module_name, attr))
        if alias is not None:
            name, body = alias
            self.schemas.setdefault(name, dict(body))
            return name
        target = getattr(module, attr)
        if inspect.isclass(target) and issubclass(target, msgspec.Struct):
            return self.add(target)
        if target is dict or getattr(target, "__origin__", None) is dict:
            return None
        raise TypeError(f"no schema for {module_name}.{attr}")


def _annotations(cls: type) -> dict[str, str]:
    """The string annotations of a model and its bases, as written."""
    out: dict[str, str] = {}
    for base in reversed(cls.__mro__):
        for name, value in getattr(base, "__annotations__", {}).items():
            out[name] = value if isinstance(value, str) else getattr(value, "__name__", "Any")
    return out


def _unwrap_optional(annotation: str) -> tuple[bool, str]:
    m = _GENERIC.match(annotation)
    if m and m[1] == "Optional":
        return True, m[2]
    return False, annotation
