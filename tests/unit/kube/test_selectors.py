"""Label selectors as apimachinery's ``labels`` package defines them
(``pkg/labels/selector.go``: ``Parse``, ``!=``/``notin`` match missing keys)
and ``metav1.LabelSelectorAsSelector`` (``pkg/apis/meta/v1/helpers.go``: a nil
selector matches nothing, an empty one everything)."""

from __future__ import annotations

import pytest

from mo_operator.kube.cache.cache import Store
from mo_operator.kube.meta.selectors import (
    Selector,
    as_selector,
    parse_selector,
    selector_from_dict,
    selector_from_labels,
)

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


@pytest.mark.parametrize(
    "plain",
    [
        {"app": "web"},
        {"app": "db", "matchLabels": {"app": "db"}},  # a typo'd or mixed object is refused too
        {"matchlabels": {"app": "web"}},
    ],
)
def test_a_plain_label_map_is_not_a_label_selector(plain: dict[str, object]) -> None:
    """A plain label map read as a LabelSelector object would have no
    requirements and select every object: it is refused, with the way out."""
    with pytest.raises(TypeError, match=r"not a LabelSelector object.*selector_from_labels"):
        as_selector(plain)
    with pytest.raises(TypeError, match="not a LabelSelector object"):
        selector_from_dict(plain)


@pytest.mark.parametrize(
    "malformed",
    [
        {"matchLabels": "app=web"},
        {"matchLabels": {"app": 1}},
        {"matchExpressions": {"key": "app", "operator": "Exists"}},
        {"matchExpressions": ["app"]},
    ],
)
def test_a_malformed_label_selector_is_refused(malformed: dict[str, object]) -> None:
    with pytest.raises(TypeError, match="LabelSelector match"):
        as_selector(malformed)


def test_only_selectors_strings_and_mappings_are_selectors() -> None:
    with pytest.raises(TypeError, match="not a label selector: list"):
        as_selector([("app", "web")])  # type: ignore[arg-type]


def test_a_label_map_selects_through_selector_from_labels() -> None:
    sel = selector_from_labels({"app": "web", "tier": "front"})
    assert sel.matches(LABELS)
    assert not sel.matches({"app": "web"})
    assert str(sel) == "app=web,tier=front"
    assert as_selector(sel) is sel
    assert selector_from_labels({}).is_everything
    with pytest.raises(ValueError):
        selector_from_labels({"bad key!": "x"})


def test_a_cache_list_with_a_plain_label_map_fails_instead_of_listing_everything() -> None:
    """The bug this guards against: ``list(ns, {"app": "db"})`` returned every
    object of the namespace."""
    store = Store()
    for name, app in (("a", "web"), ("b", "db")):
        store.upsert(
            {"metadata": {"name": name, "namespace": "ns", "resourceVersion": "1", "labels": {"app": app}}}
        )
    with pytest.raises(TypeError):
        store.list("ns", {"app": "db"})
    assert [o["metadata"]["name"] for o in store.list("ns", selector_from_labels({"app": "db"}))] == ["b"]
    assert [o["metadata"]["name"] for o in store.list("ns", {"matchLabels": {"app": "db"}})] == ["b"]
