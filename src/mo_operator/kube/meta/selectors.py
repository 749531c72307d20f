"""Kubernetes label selectors: the string form (``app=web,tier in (a,b),!legacy``)
and the ``LabelSelector`` object form (``matchLabels`` / ``matchExpressions``),
parsed into one ``Selector`` that matches label maps and renders back to the
canonical string the API server accepts.

Semantics follow apimachinery's ``labels`` package (selector.go): ``!=`` and
``notin`` also match objects that lack the key; requirements are ANDed; the
empty selector matches everything. As in ``metav1.LabelSelectorAsSelector``,
an absent (``None``) LabelSelector object matches nothing while an empty one
matches everything.

A plain label map (``{"app": "web"}``) is not a LabelSelector object: read as
one it would have no requirements and select every object, so the functions
taking a LabelSelector refuse any mapping with other keys than
``matchLabels``/``matchExpressions`` (``TypeError``), and
:func:`selector_from_labels` is the way to select by a label map.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

IN, NOT_IN, EXISTS, DOES_NOT_EXIST = "In", "NotIn", "Exists", "DoesNotExist"
_OPERATORS = (IN, NOT_IN, EXISTS, DOES_NOT_EXIST)

_NAME = r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?"
_DNS_SUBDOMAIN = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
_KEY_RE = re.compile(rf"(?:(?P<prefix>{_DNS_SUBDOMAIN})/)?(?P<name>{_NAME})")
_VALUE_RE = re.compile(rf"({_NAME})?")
_TOKEN_RE = re.compile(r"\s*(==|!=|=|\(|\)|,|!|[^\s!=(),]+)")


def validate_key(key: str) -> None:
    m = _KEY_RE.fullmatch(key)
    if m is None or len(m.group("name")) > 63 or len(m.group("prefix") or "") > 253:
        raise ValueError(f"invalid label key {key!r}")


def validate_value(value: str) -> None:
    if len(value) > 63 or _VALUE_RE.fullmatch(value) is None:
        raise ValueError(f"invalid label value {value!r}")


@dataclass(frozen=True)
class Requirement:
    """One ANDed term: ``key`` with an operator and, for In/NotIn, its values."""

    key: str
    operator: str
    values: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        validate_key(self.key)
        if self.operator not in _OPERATORS:
            raise ValueError(f"invalid label selector operator {self.operator!r}")
        if self.operator in (IN, NOT_IN) and not self.values:
            raise ValueError(f"operator {self.operator} for key {self.key!r} needs at least one value")
        if self.operator in (EXISTS, DOES_NOT_EXIST) and self.values:
            raise ValueError(f"operator {self.operator} for key {self.key!r} takes no values")
        for v in self.values:
            validate_value(v)

    def matches(self, labels: Mapping[str, str]) -> bool:
        if self.operator == IN:
            return self.key in labels and labels[self.key] in self.values
        if self.operator == NOT_IN:
            return self.key not in labels or labels[self.key] not in self.values
        if self.operator == EXISTS:
            return self.key in labels
        return self.key not in labels

    def __str__(self) -> str:
        if self.operator == EXISTS:
            return self.key
        if self.operator == DOES_NOT_EXIST:
            return "!" + self.key
        values = sorted(self.values)
        if len(values) == 1:
            return f"{self.key}{'=' if self.operator == IN else '!='}{values[0]}"
        return f"{self.key} {'in' if self.operator == IN else 'notin'} ({','.join(values)})"


@dataclass(frozen=True)
class Selector:
    """ANDed requirements; ``nothing`` makes a selector that matches no object."""

    requirements: tuple[Requirement, ...] = ()
    nothing: bool = False

    @classmethod
    def everything(cls) -> Selector:
        return cls()

    @classmethod
    def none(cls) -> Selector:
        return cls(nothing=True)

    @property
    def is_everything(self) -> bool:
        return not self.nothing and not self.requirements

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        if self.nothing:
            return False
        labels = labels or {}
        return all(r.matches(labels) for r in self.requirements)

    def matches_object(self, obj: Mapping[str, Any]) -> bool:
        return self.matches((obj.get("metadata") or {}).get("labels"))

    def __str__(self) -> str:
        """The canonical string form (sorted by key), as sent in ``labelSelector``."""
        if self.nothing:
            raise ValueError("a selector that matches nothing has no string form")
        return ",".join(str(r) for r in sorted(self.requirements, key=lambda r: (r.key, r.operator)))


def parse_selector(text: str) -> Selector:
    """Parse the string form, as ``kubectl -l`` and the ``labelSelector`` query take it."""
    tokens = _tokenize(text)
    if not tokens:
        return Selector()
    requirements: list[Requirement] = []
    pos = 0
    while True:
        req, pos = _parse_requirement(tokens, pos, text)
        requirements.append(req)
        if pos == len(tokens):
            return Selector(tuple(requirements))
        if tokens[pos] != ",":
            raise ValueError(f"invalid label selector {text!r}: expected ',' at {tokens[pos]!r}")
        pos += 1


def _tokenize(text: str) -> list[str]:
    tokens: list[str] = []
    pos = 0
    text = text.strip()
    while pos < len(text):
        m = _TOKEN_RE.match(text, pos)
        if m is None:
            raise ValueError(f"invalid label selector {text!r}")
        tokens.append(m.group(1))
        pos = m.end()
    return tokens


def _parse_requirement(tokens: list[str], pos: int, text: str) -> tuple[Requirement, int]:
    def at(i: int) -> str:
        return tokens[i] if i < len(tokens) else ""

    if at(pos) == "!":
        return Requirement(_key(at(pos + 1), text), DOES_NOT_EXIST), pos + 2
    key = _key(at(pos), text)
    op = at(pos + 1)
    if op in ("", ","):
        return Requirement(key, EXISTS), pos + 1
    if op in ("=", "==", "!="):
        value = at(pos + 2)
        if value in (",", ""):  # "key=" selects the empty value
            value, end = "", pos + 2
        else:
            end = pos + 3
        return Requirement(key, IN if op != "!=" else NOT_IN, frozenset([value])), end
    if op in ("in", "notin"):
        if at(pos + 2) != "(":
            raise ValueError(f"invalid label selector {text!r}: expected '(' after {op}")
        values: list[str] = []
        i = pos + 3
        expect_value = True
        while at(i) != ")":
            token = at(i)
            if token in ("", "(", "!", "=", "==", "!="):
                raise ValueError(f"invalid label selector {text!r}: bad value list after {op}")
            if token == ",":
                if expect_value:
                    values.append("")  # "in (a,,b)" lists the empty value
                expect_value = True
            elif expect_value:
                values.append(token)
                expect_value = False
            else:
                raise ValueError(f"invalid label selector {text!r}: expected ',' between values")
            i += 1
        if expect_value and values:
            values.append("")
        return Requirement(key, IN if op == "in" else NOT_IN, frozenset(values)), i + 1
    raise ValueError(f"invalid label selector {text!r}: unknown operator {op!r}")


def _key(token: str, text: str) -> str:
    if token in ("", ",", "(", ")", "!", "=", "==", "!="):
        raise ValueError(f"invalid label selector {text!r}: expected a label key")
    return token


_SELECTOR_FIELDS = frozenset({"matchLabels", "matchExpressions"})


def _check_label_selector(label_selector: Mapping[str, Any]) -> None:
    """Refuse a mapping that is not a ``LabelSelector`` object: a plain label
    map (``{"app": "web"}``) read as one would select every object."""
    if not isinstance(label_selector, Mapping):
        raise TypeError(f"a LabelSelector must be a mapping, not {type(label_selector).__name__}")
    unknown = sorted(str(k) for k in label_selector if k not in _SELECTOR_FIELDS)
    if unknown:
        raise TypeError(
            f"not a LabelSelector object (unknown keys {unknown}; it has only matchLabels and "
            "matchExpressions): for a plain label map use selector_from_labels(labels) "
            'or {"matchLabels": labels}'
        )
    match_labels = label_selector.get("matchLabels")
    if match_labels is not None and (
        not isinstance(match_labels, Mapping)
        or not all(isinstance(k, str) and isinstance(v, str) for k, v in match_labels.items())
    ):
        raise TypeError("LabelSelector matchLabels must map label keys to string values")
    expressions = label_selector.get("matchExpressions")
    if expressions is not None and (
        isinstance(expressions, (str, Mapping))
        or not isinstance(expressions, Iterable)
        or not all(isinstance(e, Mapping) for e in expressions)
    ):
        raise TypeError("LabelSelector matchExpressions must be a list of requirement objects")


def selector_from_dict(label_selector: Mapping[str, Any] | None) -> Selector:
    """Convert a ``LabelSelector`` object (``matchLabels``, ``matchExpressions``).

    ``TypeError`` for any other mapping (a plain label map is not a
    LabelSelector: see :func:`selector_from_labels`)."""
    if label_selector is None:
        return Selector.none()
    _check_label_selector(label_selector)
    requirements: list[Requirement] = [
        Requirement(k, IN, frozenset([v])) for k, v in (label_selector.get("matchLabels") or {}).items()
    ]
    for expr in label_selector.get("matchExpressions") or []:
        values: Iterable[str] = expr.get("values") or []
        requirements.append(Requirement(expr.get("key", ""), expr.get("operator", ""), frozenset(values)))
    return Selector(tuple(requirements))


def selector_from_labels(labels: Mapping[str, str]) -> Selector:
    """The selector of objects carrying every label of ``labels``
    (``labels.SelectorFromSet``); an empty map selects everything."""
    return Selector(tuple(Requirement(k, IN, frozenset([v])) for k, v in labels.items()))


SelectorLike = Selector | str | Mapping[str, Any]
"""A :class:`Selector`, the string form, or a ``LabelSelector`` object; never a
plain label map (use :func:`selector_from_labels` for one)."""


def as_selector(selector: SelectorLike | None) -> Selector:
    """Accept any form; ``None`` here means "no filter" (everything).

    A mapping must be a ``LabelSelector`` object (only ``matchLabels`` and
    ``matchExpressions`` keys): any other raises ``TypeError`` rather than
    being read as a selector without requirements, which would match every
    object."""
    if selector is None:
        return Selector()
    if isinstance(selector, Selector):
        return selector
    if isinstance(selector, str):
        return parse_selector(selector)
    if not isinstance(selector, Mapping):
        raise TypeError(f"not a label selector: {type(selector).__name__}")
    return selector_from_dict(selector)
