"""Go's value printers, which validation messages embed: fmt's %v and %#v
(https://pkg.go.dev/fmt: "%v for floating point is %g", with the shortest
representation and an exponent from 1e+06 on), strconv.Quote, encoding/json
(HTML-safe escaping, exponent below 1e-6 and from 1e21), and RE2 patterns
(https://github.com/google/re2/wiki/Syntax)."""

from __future__ import annotations

import pytest

from mo_devkit.localcluster.apiserver.schema.goformat import go_float_v, go_json, go_quote, go_sharp_v
from mo_devkit.localcluster.apiserver.schema.goregex import PatternError, compile_go


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (1.0, "1"),
        (1.5, "1.5"),
        (123456.0, "123456"),
        (1e6, "1e+06"),
        (1234567.0, "1.234567e+06"),
        (0.0001, "0.0001"),
        (0.00001, "1e-05"),
        (-2.5e-7, "-2.5e-07"),
    ],
)
def test_go_float_v(value: float, text: str) -> None:
    assert go_float_v(value) == text


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (1e6, "1000000"),
        (1e21, "1e+21"),
        (1e-7, "1e-7"),
        (0.000025, "0.000025"),
        (5, "5"),
        (2**64, "18446744073709552000"),
    ],
)
def test_go_json_numbers(value: float, text: str) -> None:
    assert go_json(value) == text


def test_go_json_sorts_keys_and_escapes_html() -> None:
    assert go_json({"b": [1, None], "a": "<&>"}) == '{"a":"\\u003c\\u0026\\u003e","b":[1,null]}'


def test_go_sharp_v_of_unstructured_values() -> None:
    assert go_sharp_v({"name": "a", "port": 80, "x": [1.5, None, True]}) == (
        'map[string]interface {}{"name":"a", "port":80, "x":[]interface {}{1.5, interface {}(nil), true}}'
    )


def test_go_quote() -> None:
    assert go_quote('a"b\\c\n\x01é\u00a0') == '"a\\"b\\\\c\\n\\x01é\\u00a0"'


def test_go_regex_differences() -> None:
    assert compile_go("^a$").search("a\n") is None
    assert compile_go("^a\\z").search("a") is not None
    assert compile_go("^[[:digit:]]+$").search("123") is not None
    with pytest.raises(PatternError):
        compile_go("a(?=b)")
    with pytest.raises(PatternError):
        compile_go("(a")
