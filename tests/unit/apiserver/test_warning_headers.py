"""Warnings reach clients as kube-apiserver sends them: one ``Warning`` header per
warning, ``299 - "<text>"`` with ``"`` and ``\\`` escaped; kubectl drops a value
whose quoting is broken, so an unescaped quote used to hide the warning."""

from __future__ import annotations

from mo_devkit.localcluster.apiserver.handlers import json_response, warning_header


def test_quotes_and_backslashes_are_escaped() -> None:
    assert warning_header('unknown field "spec.foo"') == '299 - "unknown field \\"spec.foo\\""'
    assert warning_header("a\\b") == '299 - "a\\\\b"'


def test_line_breaks_become_spaces() -> None:
    assert warning_header("one\ntwo\r\nthree") == '299 - "one two  three"'


def test_each_distinct_warning_is_a_header_of_its_own() -> None:
    resp = json_response({}, 201, ["a, b", 'c "d"', "a, b", ""])
    assert resp.headers.getall("Warning") == ['299 - "a, b"', '299 - "c \\"d\\""']


def test_no_warning_no_header() -> None:
    assert "Warning" not in json_response({}).headers
