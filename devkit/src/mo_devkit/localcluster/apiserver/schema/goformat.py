"""How Go prints JSON values, so our messages read like kube-apiserver's.

Validation messages embed values through Go's ``fmt`` verbs (``%v``, ``%q``,
``%#v``) and ``encoding/json``. A client that matches on an error message (or
a person diffing it against a real cluster) must see the same text, so these
helpers reproduce those printers for the values a decoded JSON object holds:
``None``, ``bool``, ``int`` (Go's int64), ``float`` (float64), ``str``,
``list`` and ``dict``.
"""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Any

_INT64_MIN = -(2**63)
_INT64_MAX = 2**63 - 1


def is_int64(value: Any) -> bool:
    """Whether Go's JSON decoder would give an int64 (else a float64)."""
    return type(value) is int and _INT64_MIN <= value <= _INT64_MAX


def as_go_number(value: int | float) -> int | float:
    """Integers beyond int64 decode to float64 in Go; mirror that."""
    if type(value) is int and not is_int64(value):
        return float(value)
    return value


def go_kind(value: Any) -> str:
    """The Go reflect kind of a decoded JSON value: map, slice, string, bool,
    int64, float64 or nil."""
    if value is None:
        return "nil"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int64" if is_int64(value) else "float64"
    if isinstance(value, float):
        return "float64"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "slice"
    if isinstance(value, dict):
        return "map"
    return "unknown"


def go_deep_equal(a: Any, b: Any) -> bool:
    """``reflect.DeepEqual`` on decoded JSON: 1 and 1.0 differ, True and 1 differ."""
    ka, kb = go_kind(a), go_kind(b)
    if ka != kb:
        return False
    if ka == "map":
        return a.keys() == b.keys() and all(go_deep_equal(a[k], b[k]) for k in a)
    if ka == "slice":
        return len(a) == len(b) and all(go_deep_equal(x, y) for x, y in zip(a, b, strict=True))
    if ka in ("int64", "float64"):
        return float(a) == float(b) if ka == "float64" else bool(a == b)
    return bool(a == b)


def _shortest_digits(f: float) -> tuple[str, int]:
    """Shortest round-trip digits of |f| (no trailing zeros) and the decimal
    exponent of the first digit."""
    _, digits, exp = Decimal(repr(abs(f))).as_tuple()
    assert isinstance(exp, int)
    text = "".join(map(str, digits))
    return text.rstrip("0") or "0", len(text) + exp - 1


def _format_e(digits: str, exp: int, *, two_digit_exp: bool) -> str:
    mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
    sign = "-" if exp < 0 else "+"
    width = 2 if two_digit_exp else 1
    return f"{mantissa}e{sign}{abs(exp):0{width}d}"


def _format_f(digits: str, exp: int) -> str:
    if exp < 0:
        return "0." + "0" * (-exp - 1) + digits
    if len(digits) <= exp + 1:
        return digits + "0" * (exp + 1 - len(digits))
    return digits[: exp + 1] + "." + digits[exp + 1 :]


def go_float_v(f: float) -> str:
    """``fmt.Sprintf("%v", f)`` for a float64: Go's shortest ``%g``, which
    switches to exponent form below 1e-4 and from 1e+06 on."""
    if math.isnan(f):
        return "NaN"
    if math.isinf(f):
        return "+Inf" if f > 0 else "-Inf"
    if f == 0:
        return "-0" if math.copysign(1.0, f) < 0 else "0"
    digits, exp = _shortest_digits(f)
    sign = "-" if f < 0 else ""
    if exp < -4 or exp >= 6:
        return sign + _format_e(digits, exp, two_digit_exp=True)
    return sign + _format_f(digits, exp)


def go_quote(s: str) -> str:
    """``strconv.Quote``: a double-quoted Go string literal."""
    out = ['"']
    for ch in s:
        code = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch == " " or (ch.isprintable() and code != 0x7F and not 0xD800 <= code <= 0xDFFF):
            out.append(ch)
        elif ch in _SHORT_ESCAPES:
            out.append(_SHORT_ESCAPES[ch])
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\x{code:02x}")
        elif code < 0x10000:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    out.append('"')
    return "".join(out)


_SHORT_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v"}


def go_scalar_v(value: Any) -> str:
    """``%v`` of an int64, float64 or bool."""
    if isinstance(value, bool):
        return "true" if value else "false"
    value = as_go_number(value)
    if isinstance(value, int):
        return str(value)
    return go_float_v(value)


def go_sharp_v(value: Any) -> str:
    """``%#v`` of a decoded JSON value held in an ``interface{}``."""
    if value is None:
        return "interface {}(nil)"
    if isinstance(value, str):
        return go_quote(value)
    if isinstance(value, bool | int | float):
        return go_scalar_v(value)
    if isinstance(value, list):
        return "[]interface {}{" + ", ".join(go_sharp_v(v) for v in value) + "}"
    if isinstance(value, dict):
        items = ", ".join(f"{go_quote(k)}:{go_sharp_v(value[k])}" for k in sorted(value))
        return "map[string]interface {}{" + items + "}"
    return repr(value)


def _json_string(s: str) -> str:
    out = ['"']
    for ch in s:
        code = ord(ch)
        if ch in ('"', "\\"):
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif code < 0x20 or ch in "<>&\u2028\u2029":
            out.append(f"\\u{code:04x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _json_float(f: float) -> str:
    if f == 0:
        return "-0" if math.copysign(1.0, f) < 0 else "0"
    digits, exp = _shortest_digits(f)
    sign = "-" if f < 0 else ""
    if abs(f) < 1e-6 or abs(f) >= 1e21:
        return sign + _format_e(digits, exp, two_digit_exp=False)
    return sign + _format_f(digits, exp)


def go_json(value: Any) -> str:
    """``json.Marshal`` of a decoded JSON value (sorted keys, HTML escaping)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int) and is_int64(value):
        return str(value)
    if isinstance(value, int | float):
        return _json_float(float(value))
    if isinstance(value, str):
        return _json_string(value)
    if isinstance(value, list):
        return "[" + ",".join(go_json(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ",".join(f"{_json_string(k)}:{go_json(value[k])}" for k in sorted(value)) + "}"
    return _json_string(str(value))
