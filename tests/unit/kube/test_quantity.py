"""Resource quantities, checked against the examples and rules of
k8s.io/apimachinery/pkg/api/resource (quantity.go and quantity_test.go) and
the "Resource units in Kubernetes" section of the docs
(https://kubernetes.io/docs/concepts/configuration/manage-resources-containers/#resource-units-in-kubernetes).
"""

from __future__ import annotations

import re
from decimal import Decimal

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from mo_operator.kube.meta.quantity import (
    QUANTITY_PATTERN,
    Quantity,
    QuantityFormat,
    canonical_quantity,
    compare_quantities,
    format_quantity,
    is_quantity,
    parse_quantity,
    quantity_milli_value,
    quantity_value,
)

FORMAT_ERROR = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("100m", Decimal("0.1")),
        ("1.5Gi", Decimal(1610612736)),
        ("2e3", Decimal(2000)),
        ("1k", Decimal(1000)),
        ("1Ki", Decimal(1024)),
        ("128974848", Decimal(128974848)),
        ("129e6", Decimal(129000000)),
        ("129M", Decimal(129000000)),
        ("123Mi", Decimal(123 * 2**20)),
        ("0.5", Decimal("0.5")),
        ("-1", Decimal(-1)),
        ("+1", Decimal(1)),
        (".5", Decimal("0.5")),
        ("1E", Decimal(10**18)),
        ("1E3", Decimal(1000)),
        ("5n", Decimal("0.000000005")),
        ("0", Decimal(0)),
    ],
)
def test_parse_values(text: str, value: Decimal) -> None:
    """The docs: 128974848, 129e6, 129M and 123Mi are (about) the same memory;
    E is exa (10^18) and E3 is an exponent."""
    assert parse_quantity(text) == value


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("1.5", "1500m"),
        ("1.5Gi", "1536Mi"),
        ("0.1", "100m"),
        ("1000m", "1"),
        ("1024", "1024"),
        ("1Ki", "1Ki"),
        ("0.5Ki", "512"),
        ("1.1Ki", "1126400m"),
        ("12e6", "12e6"),
        ("1.5e3", "1500"),
        ("1000000", "1M"),
        ("-1Ki", "-1Ki"),
        ("1e-12", "1e-9"),
        ("0.0000000001", "1n"),
        ("8Ei", "9223372036854775807"),
        ("00", "0"),
    ],
)
def test_canonical_form(text: str, canonical: str) -> None:
    """quantity.go: "1.5 will be serialized as 1500m, 1.5Gi as 1536Mi"; no
    fractional digits, largest exponent; tiny values round up to 1n; BinarySI
    values under 1024 print as DecimalSI; BinarySI is capped at 2^63-1."""
    assert canonical_quantity(text) == canonical


def test_fractional_exponent_is_refused() -> None:
    """The published pattern admits 1e.5 but ParseQuantity does not."""
    assert re.fullmatch(QUANTITY_PATTERN, "1e.5")
    assert not is_quantity("1e.5")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", FORMAT_ERROR),
        ("abc", FORMAT_ERROR),
        ("1KiB", FORMAT_ERROR),
        ("1.2.3", FORMAT_ERROR),
        ("1 ", FORMAT_ERROR),
        ("1e", "unable to parse quantity's suffix"),
        ("1ki", "unable to parse quantity's suffix"),
        ("1Gb", FORMAT_ERROR),
    ],
)
def test_invalid_quantities_carry_kubernetes_messages(text: str, message: str) -> None:
    """ErrFormatWrong and ErrSuffix from quantity.go."""
    with pytest.raises(ValueError) as err:
        parse_quantity(text)
    assert str(err.value) == message
    assert not is_quantity(text)


def test_is_quantity_rejects_non_strings() -> None:
    assert is_quantity("250m")
    assert not is_quantity(250)
    assert not is_quantity(None)


def test_round_up_to_nano() -> None:
    """quantity.go rounds non-zero values up to the nano so a request is never
    silently turned into none: 1.0001n is 2n."""
    assert parse_quantity("1.0001n") == Decimal("2e-9")
    assert parse_quantity("-1.0001n") == Decimal("-2e-9")


def test_format_quantity_in_each_format() -> None:
    assert format_quantity(Decimal("1.5")) == "1500m"
    assert format_quantity(1536 * 2**20, QuantityFormat.BINARY_SI) == "1536Mi"
    assert format_quantity(3000, "DecimalExponent") == "3e3"
    assert format_quantity("2Gi", QuantityFormat.DECIMAL_SI) == "2147483648"


def test_comparisons_use_values() -> None:
    """Quantity.Cmp compares values whatever the suffix."""
    assert compare_quantities("1Ki", "1024") == 0
    assert compare_quantities("1k", "1Ki") == -1
    assert compare_quantities("2", "1500m") == 1
    assert Quantity.parse("1Gi") > Quantity.parse("1G")
    assert Quantity.parse("1Ki") == Quantity.parse("1024")
    assert len({Quantity.parse("1Ki"), Quantity.parse("1024")}) == 1


def test_scaled_values_round_away_from_zero() -> None:
    """Value() and MilliValue() round up (ScaledValue's doc)."""
    assert quantity_value("1500m") == 2
    assert quantity_value("-1500m") == -2
    assert quantity_milli_value("1.5") == 1500
    assert quantity_milli_value("1n") == 1
    assert quantity_value("1Gi", 6) == 1074


_FRACTIONAL_EXPONENT = re.compile(r"[eE][+-]?[0-9]*\.")
_EXPONENT = re.compile(r"[eE]([+-]?[0-9]+)$")
_PAST_THE_E_SUFFIX = Decimal("1000e18")


def _exponent_fits_int64(text: str) -> bool:
    found = _EXPONENT.search(text)
    return found is None or -(2**63) <= int(found.group(1)) < 2**63


def test_an_exponent_past_int64_is_refused_as_go_refuses_it() -> None:
    """Found by hypothesis: ``interpret`` reads the exponent with ParseInt(..., 64),
    so a longer one is not a suffix at all, though the published pattern admits it."""
    with pytest.raises(ValueError, match="unable to parse quantity's suffix"):
        Quantity.parse(".0E10000000000000000000")
    assert Quantity.parse("1E9223372036854775807").value > 0


@given(
    st.from_regex(QUANTITY_PATTERN, fullmatch=True).filter(
        lambda s: len(s) < 40 and not _FRACTIONAL_EXPONENT.search(s) and _exponent_fits_int64(s)
    )
)
def test_published_pattern_strings_parse_and_canonicalize_stably(text: str) -> None:
    """Every string the OpenAPI pattern admits parses (except fractional
    exponents and exponents past int64, which the pattern allows but
    ParseQuantity refuses), and the canonical form is a fixed point with the
    same value (except decimal-SI values of 1000E and more: past the E suffix
    Kubernetes prints no suffix at all, as test_decimal_round_trip says)."""
    q = Quantity.parse(text)
    assume(not (q.format is QuantityFormat.DECIMAL_SI and abs(q.value) >= _PAST_THE_E_SUFFIX))
    again = Quantity.parse(str(q))
    assert str(again) == str(q)
    assert again.value == q.value


@given(st.integers(min_value=-(2**62), max_value=2**62), st.integers(min_value=-9, max_value=0))
def test_decimal_round_trip(mantissa: int, exponent: int) -> None:
    """Any int64-sized value with nano precision prints and parses back exactly
    (beyond the E suffix Kubernetes prints no suffix at all, so larger values
    are out of this property)."""
    value = Decimal(mantissa).scaleb(exponent)
    text = format_quantity(value)
    assert parse_quantity(text) == value


def test_a_huge_exponent_parses_like_go_instead_of_overflowing() -> None:
    """Found by hypothesis: the pattern admits exponents far past Python's default
    decimal context; Go's inf.Dec parses them (resource.ParseQuantity caps BinarySI only)."""
    q = Quantity.parse(".000000000000000001E1100000")
    assert str(q) == "100e1099980" and Quantity.parse(str(q)) == q
    assert str(Quantity.parse("-.000000000000000001E1100000")) == "-100e1099980"


def test_a_quantity_with_more_digits_than_python_turns_into_an_int_is_still_formatted() -> None:
    # Python refuses int <-> str conversions past 4300 digits; a size a user types
    # that long must still get a canonical form, not an exception in the webhook
    digits = "8" + "9" * 4300 + "1"
    assert format_quantity(Decimal(digits), "DecimalSI") == digits
    assert format_quantity(Decimal(digits + "000"), "DecimalSI") == digits + "k"
    assert format_quantity(Decimal(digits + "000"), "BinarySI") == digits + "k"
