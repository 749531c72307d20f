"""TypeMeta and ObjectMeta of embedded resources (``x-kubernetes-embedded-resource``),
as apiextensions' ``schema/objectmeta`` validates and coerces them.

An embedded resource (a pod template, a RawExtension holding an object) must
look like a Kubernetes object: a parseable ``apiVersion``, a ``kind`` that is
a DNS-1035 label up to case, and valid metadata. Its metadata is not pruned by
the schema but by the ObjectMeta type itself, so unknown metadata keys vanish.
The root object's own metadata is the server's business, not this module's.
"""

from __future__ import annotations

import re
from typing import Any

from . import fielderrors as fe
from . import nodes
from .fielderrors import Cause
from .nodes import Schema

_QNAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_QNAME_RE = re.compile(f"^{_QNAME_FMT}\\Z")
_QNAME_MSG = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
_LABEL_VALUE_FMT = f"({_QNAME_FMT})?"
_LABEL_VALUE_RE = re.compile(f"^{_LABEL_VALUE_FMT}\\Z")
_LABEL_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character"
)
_DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_LABEL_RE = re.compile(f"^{_DNS1123_LABEL_FMT}\\Z")
_DNS1123_SUBDOMAIN_FMT = f"{_DNS1123_LABEL_FMT}(\\.{_DNS1123_LABEL_FMT})*"
_DNS1123_SUBDOMAIN_RE = re.compile(f"^{_DNS1123_SUBDOMAIN_FMT}\\Z")
_DNS1035_LABEL_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?"
_DNS1035_LABEL_RE = re.compile(f"^{_DNS1035_LABEL_FMT}\\Z")

#: JSON names of ``metav1.ObjectMeta`` fields; anything else is unknown.
OBJECT_META_FIELDS = frozenset(
    {
        "name",
        "generateName",
        "namespace",
        "selfLink",
        "uid",
        "resourceVersion",
        "generation",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "labels",
        "annotations",
        "ownerReferences",
        "finalizers",
        "managedFields",
    }
)
_STRING_FIELDS = ("name", "generateName", "namespace", "selfLink", "uid", "resourceVersion")
_TOTAL_ANNOTATION_SIZE = 256 * 1024


def _regex_error(msg: str, fmt: str, *examples: str) -> str:
    shown = "".join(f"'{e}', " if i == 0 else f"or '{e}', " for i, e in enumerate(examples))
    return f"{msg} (e.g. {shown}regex used for validation is '{fmt}')"


def _max_len(n: int) -> str:
    return f"must be no more than {n} characters"


def _dns1123_subdomain(value: str) -> list[str]:
    errs = [_max_len(253)] if len(value) > 253 else []
    if not _DNS1123_SUBDOMAIN_RE.match(value):
        errs.append(
            _regex_error(
                "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
                "and must start and end with an alphanumeric character",
                _DNS1123_SUBDOMAIN_FMT,
                "example.com",
            )
        )
    return errs


def _dns1123_label(value: str) -> list[str]:
    errs = [_max_len(63)] if len(value) > 63 else []
    if not _DNS1123_LABEL_RE.match(value):
        if _DNS1123_SUBDOMAIN_RE.match(value):
            errs.append("must not contain dots")
        else:
            errs.append(
                _regex_error(
                    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
                    "and must start and end with an alphanumeric character",
                    _DNS1123_LABEL_FMT,
                    "my-name",
                    "123-abc",
                )
            )
    return errs


def _dns1035_label(value: str) -> list[str]:
    errs = [_max_len(63)] if len(value) > 63 else []
    if not _DNS1035_LABEL_RE.match(value):
        errs.append(
            _regex_error(
                "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
                "alphabetic character, and end with an alphanumeric character",
                _DNS1035_LABEL_FMT,
                "my-name",
                "abc-123",
            )
        )
    return errs


def qualified_name_errors(value: str) -> list[str]:
    """``validation.IsQualifiedName``."""
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) > 2:
        return [
            "a qualified name "
            + _regex_error(_QNAME_MSG, _QNAME_FMT, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    name = parts[-1]
    if len(parts) == 2:
        prefix = parts[0]
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs += ["prefix part " + m for m in _dns1123_subdomain(prefix)]
    if not name:
        errs.append("name part must be non-empty")
    elif len(name) > 63:
        errs.append("name part " + _max_len(63))
    if not _QNAME_RE.match(name):
        errs.append("name part " + _regex_error(_QNAME_MSG, _QNAME_FMT, "MyName", "my.name", "123-abc"))
    return errs


def label_value_errors(value: str) -> list[str]:
    """``validation.IsValidLabelValue``."""
    errs = [_max_len(63)] if len(value) > 63 else []
    if not _LABEL_VALUE_RE.match(value):
        errs.append(_regex_error(_LABEL_VALUE_MSG, _LABEL_VALUE_FMT, "MyValue", "my_value", "12345"))
    return errs


def _path_segment_errors(name: str, prefix: bool) -> list[str]:
    if not prefix and name in (".", ".."):
        return [f"may not be '{name}'"]
    return [f"may not contain '{c}'" for c in ("/", "%") if c in name]


def _go_json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _meta_decode_error(meta: Any) -> str | None:
    """The ``json.Unmarshal`` error turning ``meta`` into an ObjectMeta, if any."""
    if not isinstance(meta, dict):
        return f"json: cannot unmarshal {_go_json_type(meta)} into Go value of type v1.ObjectMeta"
    expected: dict[str, tuple[str, type]] = {
        **dict.fromkeys(_STRING_FIELDS, ("string", str)),
        "generation": ("int64", int),
        "deletionGracePeriodSeconds": ("int64", int),
        "labels": ("map[string]string", dict),
        "annotations": ("map[string]string", dict),
        "finalizers": ("[]string", list),
        "ownerReferences": ("[]v1.OwnerReference", list),
    }
    for name, value in meta.items():
        if name not in expected or value is None:
            continue
        go_type, py_type = expected[name]
        if not isinstance(value, py_type) or isinstance(value, bool):
            return f"json: cannot unmarshal {_go_json_type(value)} into Go struct field ObjectMeta.{name} of type {go_type}"
        members: list[Any] = []
        if isinstance(value, dict):
            members = list(value.values())
        elif name == "finalizers" and isinstance(value, list):
            members = value
        bad = [v for v in members if v is not None and not isinstance(v, str)]
        if bad:
            return f"json: cannot unmarshal {_go_json_type(bad[0])} into Go struct field ObjectMeta.{name} of type string"
    return None


def _validate_object_meta(meta: dict[str, Any], path: str) -> list[Cause]:
    """``ValidateObjectMetaAccessor`` with path-segment names, as for embedded objects."""
    causes: list[Cause] = []
    name = meta.get("name") or "fakename"
    generate_name = meta.get("generateName") or ""
    namespace = meta.get("namespace") or ""
    if generate_name:
        causes += [
            fe.invalid(fe.child(path, "generateName"), generate_name, m)
            for m in _path_segment_errors(generate_name, True)
        ]
    causes += [fe.invalid(fe.child(path, "name"), name, m) for m in _path_segment_errors(name, False)]
    if namespace:
        causes += [fe.invalid(fe.child(path, "namespace"), namespace, m) for m in _dns1123_label(namespace)]
    generation = meta.get("generation")
    if isinstance(generation, int) and generation < 0:
        causes.append(
            fe.invalid(fe.child(path, "generation"), generation, "must be greater than or equal to 0")
        )
    labels_path = fe.child(path, "labels")
    for k, v in (meta.get("labels") or {}).items():
        causes += [fe.invalid(labels_path, k, m) for m in qualified_name_errors(k)]
        causes += [fe.invalid(labels_path, v or "", m) for m in label_value_errors(v or "")]
    annotations = meta.get("annotations") or {}
    annotations_path = fe.child(path, "annotations")
    for k in annotations:
        causes += [fe.invalid(annotations_path, k, m) for m in qualified_name_errors(k.lower())]
    if (
        sum(len(k.encode()) + len((v or "").encode()) for k, v in annotations.items())
        > _TOTAL_ANNOTATION_SIZE
    ):
        causes.append(fe.too_long(annotations_path, _TOTAL_ANNOTATION_SIZE))
    finalizers_path = fe.child(path, "finalizers")
    for f in meta.get("finalizers") or []:
        if isinstance(f, str):
            causes += [fe.invalid(finalizers_path, f, m) for m in qualified_name_errors(f)]
    return causes


def _validate_embedded(obj: dict[str, Any], path: str) -> list[Cause]:
    """``validateEmbeddedResource``."""
    causes: list[Cause] = []
    if "apiVersion" not in obj:
        causes.append(fe.required(fe.child(path, "apiVersion"), "must not be empty"))
    if "kind" not in obj:
        causes.append(fe.required(fe.child(path, "kind"), "must not be empty"))
    for k, v in obj.items():
        if k == "apiVersion":
            p = fe.child(path, "apiVersion")
            if not isinstance(v, str):
                causes.append(fe.invalid(p, v, "must be a string"))
            elif not v:
                causes.append(fe.invalid(p, v, "must not be empty"))
            elif v != "/" and v.count("/") > 1:
                causes.append(fe.invalid(p, v, f"unexpected GroupVersion string: {v}"))
        elif k == "kind":
            p = fe.child(path, "kind")
            if not isinstance(v, str):
                causes.append(fe.invalid(p, v, "must be a string"))
            elif not v:
                causes.append(fe.invalid(p, v, "must not be empty"))
            elif errs := _dns1035_label(v.lower()):
                causes.append(
                    fe.invalid(p, v, "may have mixed case, but should otherwise match: " + ",".join(errs))
                )
        elif k == "metadata":
            p = fe.child(path, "metadata")
            error = _meta_decode_error(v)
            if error is not None:
                causes.append(fe.invalid(p, v, error))
            elif isinstance(v, dict):
                causes += _validate_object_meta(v, p)
    return causes


def validate_embedded_resources(value: Any, s: Schema | None, path: str = "") -> list[Cause]:
    """Check every embedded resource under ``value`` (``objectmeta.Validate``,
    not at the resource root)."""
    if s is None:
        return []
    causes: list[Cause] = []
    if isinstance(value, dict):
        if nodes.embedded(s):
            causes += _validate_embedded(value, path)
        props = nodes.properties(s)
        specified, extra = nodes.additional_properties(s)
        for k, v in value.items():
            if k in props:
                causes += validate_embedded_resources(v, props[k], fe.child(path, k))
            elif specified:
                causes += validate_embedded_resources(v, extra, fe.key(path, k))
    elif isinstance(value, list):
        item_schema = nodes.items(s)
        for i, v in enumerate(value):
            causes += validate_embedded_resources(v, item_schema, fe.index(path, i))
    return causes


def _is_empty(value: Any) -> bool:
    """What ``omitempty`` leaves out when ObjectMeta is written back."""
    if isinstance(value, bool):
        return False
    return value is None or value == "" or value == 0 or value == {} or value == []


def coerce_embedded_metadata(meta: dict[str, Any], path: str) -> list[str]:
    """Drop what an ObjectMeta round trip drops (unknown keys, empty values);
    return the unknown keys' paths for strict field validation."""
    unknown = [f"{fe.child(path, 'metadata')}.{k}" for k in meta if k not in OBJECT_META_FIELDS]
    if _meta_decode_error(meta) is not None:
        return unknown
    for k in list(meta):
        if k not in OBJECT_META_FIELDS or _is_empty(meta[k]):
            del meta[k]
    return unknown
