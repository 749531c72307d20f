"""Kubernetes resource quantities (``100m``, ``1.5Gi``, ``2e3``), parsed and
printed exactly as ``k8s.io/apimachinery/pkg/api/resource`` does.

Quantities are fixed-point: we keep them as :class:`decimal.Decimal` so that
``0.1 + 0.2`` style rounding can never make a request look bigger or smaller
than the API server would see it. The printed (canonical) form is the one
kube-apiserver stores, so diffs against the server stay quiet.
"""

from __future__ import annotations

import decimal
import functools
import re
from dataclasses import dataclass
from decimal import Decimal
from enum import StrEnum

__all__ = [
    "QUANTITY_PATTERN",
    "Quantity",
    "QuantityFormat",
    "canonical_quantity",
    "compare_quantities",
    "format_quantity",
    "is_quantity",
    "parse_quantity",
    "quantity_milli_value",
    "quantity_value",
]

_SPLIT_RE = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"
_ERR_FORMAT = f"quantities must match the regular expression '{_SPLIT_RE}'"
_ERR_NUMERIC = "unable to parse numeric part of quantity"
_ERR_SUFFIX = "unable to parse quantity's suffix"

#: The pattern kube-openapi publishes for ``resource.Quantity`` fields; CRD
#: schemas put it on ``x-kubernetes-int-or-string`` quantity fields.
QUANTITY_PATTERN = r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$"

# Decimal arithmetic with enough room for any quantity (2^63 with 9 decimals
# is 28 digits; exponents may be large but digits stay few).
_CTX = decimal.Context(prec=200, Emax=10**12, Emin=-(10**12), rounding=decimal.ROUND_HALF_EVEN)
_NANO = Decimal("1e-9")
_MAX_INT64 = Decimal(2**63 - 1)
_MAX_INT64_FACTORS = 18


class QuantityFormat(StrEnum):
    """How a quantity prints: the suffix family it was written with."""

    DECIMAL_EXPONENT = "DecimalExponent"  # 12e6
    BINARY_SI = "BinarySI"  # 12Mi
    DECIMAL_SI = "DecimalSI"  # 12M


_DECIMAL_SUFFIXES = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BINARY_SUFFIXES = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL_BY_EXP = {v: k for k, v in _DECIMAL_SUFFIXES.items()}
_BINARY_BY_EXP = {v: k for k, v in _BINARY_SUFFIXES.items()}


@dataclass(frozen=True)
class _Parts:
    positive: bool
    value: str
    num: str
    denom: str
    suffix: str


def _scan(text: str) -> _Parts:
    """The scanner of ``parseQuantityString``: sign, digits, fraction, suffix."""
    positive = True
    pos = 0
    end = len(text)
    if text[0] in "+-":
        positive = text[0] == "+"
        pos = 1
    while pos < end and text[pos] == "0":
        pos += 1
    if pos >= end:
        return _Parts(positive, "0", "0", "", "")
    start = pos
    while pos < end and text[pos].isdigit() and text[pos].isascii():
        pos += 1
    if pos >= end:
        return _Parts(positive, text, text[start:], "", "")
    num = text[start:pos] or "0"
    denom = ""
    if text[pos] == ".":
        pos += 1
        dstart = pos
        while pos < end and text[pos].isdigit() and text[pos].isascii():
            pos += 1
        denom = text[dstart:pos]
        if pos >= end:
            return _Parts(positive, text, num, denom, "")
    value = text[:pos]
    suffix_start = pos
    while pos < end and text[pos] in "eEinumkKMGTP":
        pos += 1
    if pos < end and text[pos] in "+-":
        pos += 1
    while pos < end and text[pos].isdigit() and text[pos].isascii():
        pos += 1
    if pos < end:
        raise ValueError(_ERR_FORMAT)
    return _Parts(positive, value, num, denom, text[suffix_start:])


def _wrap_int32(n: int) -> int:
    return (n + 2**31) % 2**32 - 2**31


def _interpret(suffix: str) -> tuple[int, int, QuantityFormat]:
    """(base, exponent, format) of a suffix, as ``quantitySuffixer.interpret``."""
    if suffix in _DECIMAL_SUFFIXES:
        return 10, _DECIMAL_SUFFIXES[suffix], QuantityFormat.DECIMAL_SI
    if suffix in _BINARY_SUFFIXES:
        return 2, _BINARY_SUFFIXES[suffix], QuantityFormat.BINARY_SI
    if len(suffix) > 1 and suffix[0] in "eE":
        digits = suffix[1:]
        if re.fullmatch(r"[+-]?[0-9]+", digits) is None:
            raise ValueError(_ERR_SUFFIX)
        exponent = int(digits)
        if not -(2**63) <= exponent < 2**63:
            raise ValueError(_ERR_SUFFIX)
        return 10, _wrap_int32(exponent), QuantityFormat.DECIMAL_EXPONENT
    raise ValueError(_ERR_SUFFIX)


@functools.total_ordering
@dataclass(frozen=True, eq=False)
class Quantity:
    """A parsed quantity: its exact value and the format it prints in.

    Equality and ordering compare values only (``1Ki == 1024``), as
    ``Quantity.Cmp`` does.
    """

    value: Decimal
    format: QuantityFormat = QuantityFormat.DECIMAL_SI

    @classmethod
    def parse(cls, text: str) -> Quantity:
        """Parse like ``resource.ParseQuantity``; ``ValueError`` carries its message."""
        if not text:
            raise ValueError(_ERR_FORMAT)
        if text == "0":
            return cls(Decimal(0), QuantityFormat.DECIMAL_SI)
        parts = _scan(text)
        base, exponent, fmt = _interpret(parts.suffix)
        if parts.value in ("", "+", "-", ".") or not any(c.isdigit() for c in parts.value):
            amount = Decimal(0)
        else:
            amount = _CTX.create_decimal(parts.value.lstrip("+"))
        fast = _fast_path_applies(parts, exponent, fmt)
        if base == 10:
            amount = _CTX.scaleb(amount, exponent)
        else:
            amount = _CTX.multiply(amount, Decimal(2**exponent))
        if fast is not None:
            return cls(_normalize_zero(amount), fmt)
        negative = amount < 0
        amount = amount.copy_abs()  # context-free: the default context's exponent limit is too small
        exp = amount.as_tuple().exponent
        if amount != 0 and isinstance(exp, int) and exp < -9:
            # Non-zero values round up to the nano: asking for a sliver of a
            # resource must not turn into asking for none.
            amount = amount.quantize(_NANO, rounding=decimal.ROUND_UP, context=_CTX)
        if fmt is QuantityFormat.BINARY_SI and amount > _MAX_INT64:
            amount = _MAX_INT64
        if fmt is QuantityFormat.BINARY_SI and 0 < amount < 1:
            fmt = QuantityFormat.DECIMAL_SI
        return cls(_normalize_zero(amount.copy_negate() if negative else amount), fmt)

    def __str__(self) -> str:
        return _canonical(self.value, self.format)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Quantity):
            return NotImplemented
        return self.value == other.value

    def __lt__(self, other: Quantity) -> bool:
        return self.value < other.value

    def __hash__(self) -> int:
        return hash(self.value)


def _normalize_zero(d: Decimal) -> Decimal:
    return Decimal(0) if d == 0 else d


def _fast_path_applies(parts: _Parts, exponent: int, fmt: QuantityFormat) -> bool | None:
    """Whether Go's exact int64 fast path takes this quantity (no rounding)."""
    if fmt is QuantityFormat.BINARY_SI:
        if exponent < 0 or parts.denom:
            return None
        precision = 15 - len(parts.num) - int(exponent * 3 / 10) - 1
        scale = 0
    else:
        precision = _MAX_INT64_FACTORS - (len(parts.num) + len(parts.denom))
        scale = exponent
    if precision < 0:
        return None
    scale -= len(parts.denom)
    if scale < -9:
        return None
    shifted = int(parts.num + parts.denom)
    mantissa = 2**exponent if fmt is QuantityFormat.BINARY_SI else 1
    if shifted >= 2**63 or abs(shifted * mantissa) >= 2**63:
        return None
    return True


def _strip_tens(mantissa: int, exponent: int) -> tuple[int, int]:
    while mantissa != 0 and mantissa % 10 == 0:
        mantissa //= 10
        exponent += 1
    return mantissa, exponent


def _decimal_parts(value: Decimal) -> tuple[str, int]:
    """(mantissa, exponent) with the exponent a multiple of three and as large
    as possible without fractional digits, as ``AsCanonicalBytes``. The mantissa
    stays text: a quantity may have more digits than Python converts to ``int``."""
    sign, digits, exp = value.as_tuple()
    assert isinstance(exp, int)
    text = "".join(map(str, digits)).lstrip("0")
    if not text:
        return "0", 0
    stripped = text.rstrip("0")
    exp += len(text) - len(stripped)
    pad = exp % 3
    return ("-" if sign else "") + stripped + "0" * pad, exp - pad


def _canonical(value: Decimal, fmt: QuantityFormat) -> str:
    if value == 0:
        return "0"
    if fmt is QuantityFormat.BINARY_SI:
        if (
            -1024 < value < 1024
            or abs(value) > _MAX_INT64
            or value != value.to_integral_value(rounding=decimal.ROUND_UP)
        ):
            fmt = QuantityFormat.DECIMAL_SI
        else:
            amount = int(value)
            times = 0
            magnitude = abs(amount)
            while magnitude >= 1024 and magnitude % 1024 == 0:
                magnitude //= 1024
                times += 1
            amount = -magnitude if amount < 0 else magnitude
            return f"{amount}{_BINARY_BY_EXP.get(times * 10, '')}"
    mantissa, exponent = _decimal_parts(value)
    if fmt is QuantityFormat.DECIMAL_EXPONENT:
        return f"{mantissa}" if exponent == 0 else f"{mantissa}e{exponent}"
    # An exponent beyond the suffix table prints with no suffix at all; that is
    # what the Go code does, and we print what the server prints.
    return f"{mantissa}{_DECIMAL_BY_EXP.get(exponent, '')}"


def parse_quantity(text: str) -> Decimal:
    """The exact value of a quantity string; ``ValueError`` with Kubernetes' message."""
    return Quantity.parse(text).value


def is_quantity(text: object) -> bool:
    """Whether kube-apiserver would accept ``text`` as a quantity string."""
    if not isinstance(text, str):
        return False
    try:
        Quantity.parse(text)
    except ValueError:
        return False
    return True


def format_quantity(value: Decimal | int | str, fmt: QuantityFormat | str = QuantityFormat.DECIMAL_SI) -> str:
    """The canonical string of a value in the given format (``1536Mi``, ``1500m``)."""
    amount = Quantity.parse(value).value if isinstance(value, str) else Decimal(value)
    return _canonical(amount, QuantityFormat(fmt))


def canonical_quantity(text: str) -> str:
    """Re-print a quantity string the way the API server stores it."""
    return str(Quantity.parse(text))


def _as_decimal(q: Quantity | Decimal | int | str) -> Decimal:
    if isinstance(q, Quantity):
        return q.value
    if isinstance(q, str):
        return parse_quantity(q)
    return Decimal(q)


def compare_quantities(a: Quantity | Decimal | int | str, b: Quantity | Decimal | int | str) -> int:
    """-1, 0 or 1 as ``Quantity.Cmp``; strings are parsed first."""
    x, y = _as_decimal(a), _as_decimal(b)
    return (x > y) - (x < y)


def quantity_value(q: Quantity | Decimal | int | str, scale: int = 0) -> int:
    """The value in units of 10^scale, rounded away from zero (``ScaledValue``)."""
    scaled = _CTX.scaleb(_as_decimal(q), -scale)
    return int(scaled.to_integral_value(rounding=decimal.ROUND_UP))


def quantity_milli_value(q: Quantity | Decimal | int | str) -> int:
    """The value in thousandths, rounded away from zero (``MilliValue``)."""
    return quantity_value(q, -3)
