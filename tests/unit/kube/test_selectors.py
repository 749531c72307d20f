"""Label selectors as apimachinery's ``labels`` package defines them
(``pkg/labels/selector.go``: ``Parse``, ``!=``/``notin`` match missing keys)
and ``metav1.LabelSelectorAsSelector`` (``pkg/apis/meta/v1/helpers.go``: a nil
selector matches nothing, an empty one everything)."""

from __future__ import annotations

import pytest

from mo_operator.kube.selectors import Selector, as_selector, parse_selector, selector_from_dict

LABELS = {"app": "web", "tier": "front", "env": ""}


@pytest.mark.parametrize(
    ("text", "matches"),
    [
        ("", True),
        ("app=web", True),
        ("app==web", True),
        ("app=db", False),
        ("app!=db", True),
        ("missing!=x", True),  # != matches objects without the key
        ("app in (web,db)", True),
        ("app in (db)", False),
        ("app notin (db, cache)", True),
        ("missing notin (x)", True),
        ("app", True),
        ("missing", False),
        ("!missing", True),
        ("!app", False),
        ("app=web,tier=front", True),
        ("app=web,tier=back", False),
        ("env=", True),  # the empty value
        ("  app = web ,  tier in ( front )  ", True),
    ],
)
def test_parse_and_match(text: str, matches: bool) -> None:
    assert parse_selector(text).matches(LABELS) is matches


@pytest.mark.parametrize(
    "text",
    [
        "app in ()",
        "app in (a b)",
        "app in a",
        "=x",
        "app=web=x",
        "app b",
        "-bad=x",
        "app=-bad",
        "a" * 64 + "=x",
        "app in (x",
        "app=x,",
    ],
)
def test_invalid_selectors_are_rejected(text: str) -> None:
    with pytest.raises(ValueError):
        parse_selector(text)


def test_string_form_is_canonical_and_round_trips() -> None:
    sel = parse_selector("tier in (b,a), app=web, !legacy, env")
    assert str(sel) == "app=web,env,!legacy,tier in (a,b)"  # sorted by key, values sorted
    again = parse_selector(str(sel))
    assert str(again) == str(sel)
    assert set(again.requirements) == set(sel.requirements)


def test_label_selector_objects() -> None:
    sel = selector_from_dict(
        {
            "matchLabels": {"app": "web"},
            "matchExpressions": [
                {"key": "tier", "operator": "In", "values": ["front", "edge"]},
                {"key": "legacy", "operator": "DoesNotExist"},
            ],
        }
    )
    assert sel.matches(LABELS)
    assert not sel.matches({**LABELS, "legacy": "1"})
    assert not sel.matches({"app": "web"})
    assert selector_from_dict({}).matches({})  # empty: everything
    assert not selector_from_dict(None).matches(LABELS)  # nil: nothing
    with pytest.raises(ValueError):
        selector_from_dict({"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]})
    with pytest.raises(ValueError):
        selector_from_dict({"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["1"]}]})


def test_as_selector_accepts_every_form() -> None:
    assert as_selector(None).is_everything
    assert as_selector("app=web").matches(LABELS)
    assert as_selector({"matchLabels": {"app": "db"}}).matches(LABELS) is False
    sel = Selector.everything()
    assert as_selector(sel) is sel
    assert as_selector("app=web").matches_object({"metadata": {"labels": {"app": "web"}}})
    assert not as_selector("app=web").matches_object({"metadata": {}})
