"""Kubernetes name and label rules, with apimachinery's messages
(``k8s.io/apimachinery/pkg/util/validation/validation.go``)."""

from __future__ import annotations

import re
from collections.abc import Mapping

from .errors import FieldError

__all__ = [
    "byte_len",
    "dns1035_label",
    "dns1123_label",
    "dns1123_subdomain",
    "fqdn",
    "label_errors",
    "label_value",
    "qualified_name",
    "regex_error",
]

_DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character"
)
_DNS1123_SUBDOMAIN_FMT = _DNS1123_LABEL_FMT + r"(\." + _DNS1123_LABEL_FMT + ")*"
_DNS1123_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character"
)
_DNS1035_LABEL_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?"
_DNS1035_LABEL_MSG = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
    "alphabetic character, and end with an alphanumeric character"
)
_QUALIFIED_NAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_QUALIFIED_NAME_MSG = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
_LABEL_VALUE_FMT = "(" + _QUALIFIED_NAME_FMT + ")?"
_LABEL_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character"
)

_DNS1123_LABEL = re.compile(_DNS1123_LABEL_FMT)
_DNS1123_SUBDOMAIN = re.compile(_DNS1123_SUBDOMAIN_FMT)
_DNS1035_LABEL = re.compile(_DNS1035_LABEL_FMT)
_QUALIFIED_NAME = re.compile(_QUALIFIED_NAME_FMT)
_LABEL_VALUE = re.compile(_LABEL_VALUE_FMT)


def regex_error(msg: str, fmt: str, *examples: str) -> str:
    """apimachinery's ``RegexError`` text, examples and all."""
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    text = msg + " (e.g. "
    for i, example in enumerate(examples):
        if i > 0:
            text += " or "
        text += f"'{example}', "
    return text + f"regex used for validation is '{fmt}')"


def _max_len(n: int) -> str:
    return f"must be no more than {n} characters"


def byte_len(value: str) -> int:
    """Length as Go counts it: bytes of the UTF-8 encoding."""
    return len(value.encode("utf-8", "surrogatepass"))


def dns1123_label(value: str) -> list[str]:
    errs = []
    if byte_len(value) > 63:
        errs.append(_max_len(63))
    if not _DNS1123_LABEL.fullmatch(value):
        if _DNS1123_SUBDOMAIN.fullmatch(value):
            errs.append("must not contain dots")
        else:
            errs.append(regex_error(_DNS1123_LABEL_MSG, _DNS1123_LABEL_FMT, "my-name", "123-abc"))
    return errs


def dns1123_subdomain(value: str) -> list[str]:
    errs = []
    if byte_len(value) > 253:
        errs.append(_max_len(253))
    if not _DNS1123_SUBDOMAIN.fullmatch(value):
        errs.append(regex_error(_DNS1123_SUBDOMAIN_MSG, _DNS1123_SUBDOMAIN_FMT, "example.com"))
    return errs


def dns1035_label(value: str) -> list[str]:
    errs = []
    if byte_len(value) > 63:
        errs.append(_max_len(63))
    if not _DNS1035_LABEL.fullmatch(value):
        errs.append(regex_error(_DNS1035_LABEL_MSG, _DNS1035_LABEL_FMT, "my-name", "abc-123"))
    return errs


def qualified_name(value: str) -> list[str]:
    """``IsQualifiedName``: a label or annotation key, ``[prefix/]name``."""
    errs = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs += ["prefix part " + m for m in dns1123_subdomain(prefix)]
    else:
        return [
            "a qualified name "
            + regex_error(_QUALIFIED_NAME_MSG, _QUALIFIED_NAME_FMT, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    if not name:
        errs.append("name part must be non-empty")
    elif byte_len(name) > 63:
        errs.append("name part " + _max_len(63))
    if not _QUALIFIED_NAME.fullmatch(name):
        errs.append(
            "name part "
            + regex_error(_QUALIFIED_NAME_MSG, _QUALIFIED_NAME_FMT, "MyName", "my.name", "123-abc")
        )
    return errs


def label_value(value: str) -> list[str]:
    errs = []
    if byte_len(value) > 63:
        errs.append(_max_len(63))
    if not _LABEL_VALUE.fullmatch(value):
        errs.append(regex_error(_LABEL_VALUE_MSG, _LABEL_VALUE_FMT, "MyValue", "my_value", "12345"))
    return errs


def label_errors(labels: Mapping[str, str], path: str) -> list[FieldError]:
    """``ValidateLabels``: every key a qualified name, every value a label value; errors
    are reported at the map's path, as Kubernetes does."""
    errs = []
    for k, v in labels.items():
        errs += [FieldError(path, f'Invalid value: "{k}": {m}') for m in qualified_name(k)]
        errs += [FieldError(path, f'Invalid value: "{v}": {m}') for m in label_value(v)]
    return errs


def fqdn(value: str) -> list[str]:
    """``IsFullyQualifiedDomainName``: at least two DNS labels, a trailing dot allowed."""
    name = value[:-1] if value.endswith(".") else value
    if not name:
        return ["Required value"]
    if errs := dns1123_subdomain(name):
        return [",".join(errs)]
    if len(name.split(".")) < 2:
        return ["should be a domain with at least two segments separated by dots"]
    for label in name.split("."):
        if errs := dns1123_label(label):
            return [",".join(errs)]
    return []
