"""String formats a CRD schema may name, checked as kube-openapi's ``strfmt``
registry checks them.

Kubernetes keeps only a fixed list of formats in CRD schemas (the rest are
silently dropped), so a format we do not know is not validated there either.
Each checker follows the Go function kube-apiserver calls; where Go leans on
its standard library (``net/url``, ``net/mail``) we follow the rules that
matter for realistic values.
"""

from __future__ import annotations

import base64
import binascii
import datetime
import ipaddress
import re
import unicodedata
from collections.abc import Callable
from email.utils import parseaddr

#: Formats kept in CRD schemas of type string (or untyped), by normalized name
#: (``date-time`` is ``datetime``): apiextensions' ``supportedFormats`` of v1.30.
SUPPORTED_STRING_FORMATS = frozenset(
    {
        "bsonobjectid",
        "uri",
        "email",
        "hostname",
        "ipv4",
        "ipv6",
        "cidr",
        "mac",
        "uuid",
        "uuid3",
        "uuid4",
        "uuid5",
        "isbn",
        "isbn10",
        "isbn13",
        "creditcard",
        "ssn",
        "hexcolor",
        "rgbcolor",
        "byte",
        "password",
        "date",
        "duration",
        "datetime",
    }
)


def normalize(name: str) -> str:
    """strfmt's name normalizer: dashes do not count (``date-time`` = ``datetime``)."""
    return name.replace("-", "")


def effective_format(fmt: str, types: list[str]) -> str:
    """The format left after apiextensions strips unsupported ones
    (``StripUnsupportedFormatsPostProcess``)."""
    if not fmt:
        return ""
    schema_type = types[0] if len(types) == 1 else ""
    if schema_type in ("", "string"):
        return fmt if normalize(fmt) in SUPPORTED_STRING_FORMATS else ""
    if schema_type == "integer":
        return fmt if fmt in ("int32", "int64") else ""
    if schema_type == "number":
        return fmt if fmt in ("float", "double") else ""
    return ""


_UUID = re.compile(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}\Z")
_UUID3 = re.compile(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}\Z")
_UUID4 = re.compile(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}\Z")
_UUID5 = re.compile(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}\Z")
_CREDIT_CARD = re.compile(
    r"^(?:4[0-9]{12}(?:[0-9]{3})?|5[1-5][0-9]{14}|6(?:011|5[0-9][0-9])[0-9]{12}|3[47][0-9]{13}"
    r"|3(?:0[0-5]|[68][0-9])[0-9]{11}|(?:2131|1800|35[0-9]{3})[0-9]{11})\Z"
)
_ISBN10 = re.compile(r"^(?:[0-9]{9}X|[0-9]{10})\Z")
_ISBN13 = re.compile(r"^(?:[0-9]{13})\Z")
_HEXCOLOR = re.compile(r"^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})\Z")
_RGB_PART = r"\s*(0|[1-9][0-9]?|1[0-9][0-9]?|2[0-4][0-9]|25[0-5])\s*"
_RGBCOLOR = re.compile(rf"^rgb\({_RGB_PART},{_RGB_PART},{_RGB_PART}\)\Z", re.ASCII)
_BASE64 = re.compile(r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})\Z")
_SSN = re.compile(r"^[0-9]{3}[- ]?[0-9]{2}[- ]?[0-9]{4}\Z")
_DATE = re.compile(r"^([0-9]{4})-([0-9]{2})-([0-9]{2})\Z")
_TIME = re.compile(r"^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))\Z")
_GO_DURATION = re.compile(r"^[-+]?(?:(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:ns|us|µs|μs|ms|s|m|h))+\Z")
_LOOSE_DURATION = re.compile(r"(([0-9]+)\s*([A-Za-zµ]+))")
_DURATION_UNITS = [
    ["ns", "nano"],
    ["us", "µs", "micro"],
    ["ms", "milli"],
    ["s", "sec"],
    ["m", "min"],
    ["h", "hr", "hour"],
    ["d", "day"],
    ["w", "wk", "week"],
]
# Hostname pattern of strfmt, over a string where every character was
# replaced by its class: a letter, 0 a digit, $ a symbol.
_HOSTNAME = re.compile(r"^([a0$]((-?[a0$]{0,62})?)|([a0$](([a0$-]{0,61}[a0$])?)(\.)){1,}([a]){2,63})\Z")
_MAC_SEP = re.compile(r"^[0-9A-Fa-f]{2}(?:([:-])[0-9A-Fa-f]{2})+\Z")
_MAC_DOT = re.compile(r"^[0-9A-Fa-f]{4}(?:\.[0-9A-Fa-f]{4})+\Z")
_URL_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def _char_class(ch: str) -> str:
    if ch in "-.":
        return ch
    if ch.isascii():
        if ch.isalpha():
            return "a"
        return "0" if ch.isdigit() else "!"
    category = unicodedata.category(ch)
    if category.startswith("L"):
        return "a"
    return "$" if category.startswith("S") else "!"


def is_hostname(s: str) -> bool:
    if not _HOSTNAME.match("".join(_char_class(c) for c in s)):
        return False
    if len(s.encode()) > 255:
        return False
    return all(len(p.encode()) <= 63 for p in s.split("."))


def _is_date(s: str) -> bool:
    m = _DATE.match(s)
    if not m:
        return False
    try:
        datetime.date(int(m[1]), int(m[2]), int(m[3]))
    except ValueError:
        return False
    return True


def is_datetime(s: str) -> bool:
    if len(s) < 4:
        return False
    parts = s.lower().split("t")
    if len(parts) < 2 or not _is_date(parts[0]):
        return False
    m = _TIME.match(parts[1])
    if m is None:
        return False
    return m[1] <= "23" and m[2] <= "59" and m[3] <= "59"


def is_duration(s: str) -> bool:
    if s == "0" or _GO_DURATION.match(s):
        return True
    for _, _, unit_raw in _LOOSE_DURATION.findall(s):
        unit = unit_raw.strip().lower()
        for variants in _DURATION_UNITS:
            last = len(variants) - 1
            for i, variant in enumerate(variants):
                if (i == last and unit.startswith(variant)) or variant.lower() == unit:
                    return True
    return False


def _sloppy_ipv4(s: str) -> ipaddress.IPv4Address | None:
    parts = s.split(".")
    if len(parts) != 4 or not all(p.isdigit() and p.isascii() and 0 < len(p) <= 3 for p in parts):
        return None
    octets = [int(p) for p in parts]
    if any(o > 255 for o in octets):
        return None
    return ipaddress.IPv4Address(".".join(map(str, octets)))


def _parse_ip(s: str, *, sloppy: bool) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """``net.ParseIP`` (or k8s' sloppy variant that allows leading zeros)."""
    if ":" not in s:
        if sloppy:
            return _sloppy_ipv4(s)
        try:
            return ipaddress.IPv4Address(s)
        except ValueError:
            return None
    if "%" in s:
        return None
    try:
        return ipaddress.IPv6Address(s)
    except ValueError:
        return None


def is_ipv4(s: str) -> bool:
    return _parse_ip(s, sloppy=True) is not None and "." in s


def is_ipv6(s: str) -> bool:
    return _parse_ip(s, sloppy=False) is not None and ":" in s


def is_cidr(s: str) -> bool:
    addr, sep, prefix = s.partition("/")
    ip = _parse_ip(addr, sloppy=True)
    if not sep or ip is None or not prefix.isdigit() or not prefix.isascii() or len(prefix) > 3:
        return False
    return int(prefix) <= ip.max_prefixlen


def is_mac(s: str) -> bool:
    if _MAC_SEP.match(s):
        seps = set(s[2::3])
        return len(seps) == 1 and (len(s) + 1) // 3 in (6, 8, 20)
    if _MAC_DOT.match(s):
        return (len(s) + 1) // 5 * 2 in (6, 8, 20)
    return False


def is_request_uri(s: str) -> bool:
    """``url.ParseRequestURI``: an absolute URI or an absolute path."""
    if not s or any(ord(c) < 0x20 or ord(c) == 0x7F for c in s):
        return False
    if s == "*":
        return True
    m = _URL_SCHEME.match(s)
    if m is None:
        return s.startswith("/")
    rest = s[m.end() :]
    if rest.startswith("//"):
        hostport = rest[2:].split("/", 1)[0].split("?", 1)[0].rpartition("@")[2]
        if " " in hostport:
            return False
        if not hostport.startswith("["):
            _, sep, port = hostport.rpartition(":")
            if sep and port and not (port.isascii() and port.isdigit()):
                return False
    return True


def is_email(s: str) -> bool:
    """``mail.ParseAddress``: an addr-spec, optionally with a display name."""
    _, addr = parseaddr(s)
    local, at, domain = addr.rpartition("@")
    return bool(at and local and domain) and " " not in addr


def _luhn(digits: str) -> bool:
    total = 0
    for i, d in enumerate(reversed(digits)):
        n = int(d)
        if i % 2 == 1:
            n *= 2
            if n >= 10:
                n = n % 10 + 1
        total += n
    return total % 10 == 0


def is_credit_card(s: str) -> bool:
    digits = re.sub(r"[^0-9]+", "", s)
    return bool(_CREDIT_CARD.match(digits)) and _luhn(digits)


def is_isbn10(s: str) -> bool:
    clean = re.sub(r"[\s-]+", "", s)
    if not _ISBN10.match(clean):
        return False
    checksum = sum((i + 1) * int(clean[i]) for i in range(9))
    checksum += 100 if clean[9] == "X" else 10 * int(clean[9])
    return checksum % 11 == 0


def is_isbn13(s: str) -> bool:
    clean = re.sub(r"[\s-]+", "", s)
    if not _ISBN13.match(clean):
        return False
    checksum = sum((1, 3)[i % 2] * int(clean[i]) for i in range(12))
    return int(clean[12]) - ((10 - checksum % 10) % 10) == 0


def is_bson_object_id(s: str) -> bool:
    if len(s) != 24:
        return False
    try:
        binascii.unhexlify(s)
    except (binascii.Error, ValueError):
        return False
    return True


def is_base64(s: str) -> bool:
    if not _BASE64.match(s):
        return False
    try:
        base64.b64decode(s, validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


CHECKERS: dict[str, Callable[[str], bool]] = {
    "bsonobjectid": is_bson_object_id,
    "uri": is_request_uri,
    "email": is_email,
    "hostname": is_hostname,
    "ipv4": is_ipv4,
    "ipv6": is_ipv6,
    "cidr": is_cidr,
    "mac": is_mac,
    "uuid": lambda s: bool(_UUID.match(s)),
    "uuid3": lambda s: bool(_UUID3.match(s)),
    "uuid4": lambda s: bool(_UUID4.match(s)),
    "uuid5": lambda s: bool(_UUID5.match(s)),
    "isbn": lambda s: is_isbn10(s) or is_isbn13(s),
    "isbn10": is_isbn10,
    "isbn13": is_isbn13,
    "creditcard": is_credit_card,
    "ssn": lambda s: len(s) == 11 and bool(_SSN.match(s)),
    "hexcolor": lambda s: bool(_HEXCOLOR.match(s)),
    "rgbcolor": lambda s: bool(_RGBCOLOR.match(s)),
    "byte": is_base64,
    "password": lambda s: True,
    "date": _is_date,
    "datetime": is_datetime,
    "duration": is_duration,
}


def checker(fmt: str) -> Callable[[str], bool] | None:
    """The validator registered for a format name, if any."""
    return CHECKERS.get(normalize(fmt))
