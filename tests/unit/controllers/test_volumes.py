"""Growing volumes: which claims are patched, what the StatefulSet's templates ask,
and what the set says (controllers/steps/volumes.py)."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from mo_operator.controllers.steps import volumes

Obj = dict[str, Any]

GROWS = {"metadata": {"name": "fast"}, "allowVolumeExpansion": True}
FIXED = {"metadata": {"name": "fixed"}}


def claim(
    name: str, request: str, capacity: str | None = None, cls: str = "fast", phase: str = "Bound"
) -> Obj:
    status: Obj = {"phase": phase}
    if capacity is not None:
        status["capacity"] = {"storage": capacity}
    return {
        "metadata": {"name": name},
        "spec": {"storageClassName": cls, "resources": {"requests": {"storage": request}}},
        "status": status,
    }


CLASSES = {"fast": GROWS, "fixed": FIXED}


def test_claims_of_an_expandable_class_are_patched_and_the_template_takes_the_new_size() -> None:
    claims = {"mo-data": [claim("mo-data-a-log-1", "1Gi", "1Gi"), claim("mo-data-a-log-0", "1Gi", "1Gi")]}
    got = volumes.plan_expansion({"mo-data": "2Gi"}, {"mo-data": "1Gi"}, claims, CLASSES)
    assert got.patches == (("mo-data-a-log-0", "2Gi"), ("mo-data-a-log-1", "2Gi"))
    assert got.template_sizes == {"mo-data": "2Gi"}
    assert got.blocked == ()
    assert got.growing == ("mo-data-a-log-0: 1Gi of 2Gi", "mo-data-a-log-1: 1Gi of 2Gi")
    assert volumes.condition(got, reported=False) == (
        False,
        volumes.RESIZING,
        "growing: mo-data-a-log-0: 1Gi of 2Gi, mo-data-a-log-1: 1Gi of 2Gi",
    )


def test_a_class_that_cannot_expand_keeps_the_template_and_names_the_class_and_the_claims() -> None:
    claims = {"mo-data": [claim("mo-data-a-dn-0", "1Gi", "1Gi", cls="fixed")]}
    got = volumes.plan_expansion({"mo-data": "2Gi"}, {"mo-data": "1Gi"}, claims, CLASSES)
    assert got.patches == ()
    assert got.template_sizes == {"mo-data": "1Gi"}
    status, reason, message = volumes.condition(got, reported=False) or (None, "", "")
    assert (status, reason) == (False, volumes.BLOCKED)
    assert "StorageClass fixed does not allow volume expansion" in message
    assert "mo-data-a-dn-0" in message


def test_a_missing_class_blocks_too() -> None:
    claims = {"mo-data": [claim("c-0", "1Gi", "1Gi", cls="gone")]}
    got = volumes.plan_expansion({"mo-data": "2Gi"}, {}, claims, CLASSES)
    assert got.blocked == (volumes.Blocked("gone", "missing", ("c-0",), "2Gi"),)
    assert got.template_sizes == {"mo-data": "2Gi"}  # no workload yet: nothing to keep


def test_a_claim_naming_no_class_takes_the_default_one() -> None:
    default = {
        "metadata": {"name": "std", "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}},
        "allowVolumeExpansion": True,
    }
    c = claim("c-0", "1Gi", "1Gi")
    del c["spec"]["storageClassName"]
    got = volumes.plan_expansion({"mo-data": "2Gi"}, {}, {"mo-data": [c]}, {"std": default})
    assert got.patches == (("c-0", "2Gi"),)


def test_an_unbound_claim_waits_and_is_not_patched() -> None:
    got = volumes.plan_expansion(
        {"mo-data": "2Gi"}, {}, {"mo-data": [claim("c-0", "1Gi", phase="Pending")]}, CLASSES
    )
    assert got.patches == ()
    assert got.growing == ("c-0: waits to be bound",)


def test_progress_is_reported_until_capacity_reaches_the_request_then_done() -> None:
    resizing = volumes.plan_expansion(
        {"d": "2Gi"}, {"d": "2Gi"}, {"d": [claim("c-0", "2Gi", "1Gi")]}, CLASSES
    )
    assert resizing.patches == ()
    assert volumes.condition(resizing, reported=True) == (False, volumes.RESIZING, "growing: c-0: 1Gi of 2Gi")
    done = volumes.plan_expansion({"d": "2Gi"}, {"d": "2Gi"}, {"d": [claim("c-0", "2Gi", "2Gi")]}, CLASSES)
    assert volumes.condition(done, reported=True) == (
        True,
        volumes.EXPANDED,
        "every volume has the size its claim asks",
    )
    assert volumes.condition(done, reported=False) is None  # a set whose volumes never grew says nothing


def test_a_new_claim_being_provisioned_is_no_resize() -> None:
    got = volumes.plan_expansion(
        {"d": "1Gi"}, {"d": "1Gi"}, {"d": [claim("c-0", "1Gi", phase="Pending")]}, CLASSES
    )
    assert got == volumes.Expansion(template_sizes={"d": "1Gi"})
    assert volumes.condition(got, reported=False) is None


def test_a_template_in_step_needs_no_replacement_and_a_changed_size_does() -> None:
    vct = {"metadata": {"name": "mo-data"}, "spec": {"resources": {"requests": {"storage": "1Gi"}}}}
    cached = {
        "metadata": {"name": "s"},
        "spec": {"volumeClaimTemplates": [{**vct, "status": {"phase": "Pending"}}]},
    }
    assert not volumes.must_replace(cached, {"spec": {"volumeClaimTemplates": [vct]}})
    grown = volumes.with_sizes([vct], {"mo-data": "2Gi"})
    assert volumes.must_replace(cached, {"spec": {"volumeClaimTemplates": grown}})
    deleting = {**cached, "metadata": {"name": "s", "deletionTimestamp": "2026-01-01T00:00:00Z"}}
    assert not volumes.must_replace(deleting, {"spec": {"volumeClaimTemplates": grown}})
    assert not volumes.must_replace(None, {"spec": {"volumeClaimTemplates": grown}})


SIZES = st.integers(min_value=1, max_value=8).map(lambda n: f"{n}Gi")


@given(
    want=SIZES,
    current=SIZES,
    claims=st.lists(st.tuples(SIZES, st.sampled_from(["fast", "fixed", "gone"]), st.booleans()), max_size=5),
)
def test_never_shrinks_and_the_template_grows_only_when_no_claim_is_blocked(
    want: str, current: str, claims: list[tuple[str, str, bool]]
) -> None:
    objs = [
        claim(f"c-{i}", size, size, cls=cls, phase="Bound" if bound else "Pending")
        for i, (size, cls, bound) in enumerate(claims)
    ]
    got = volumes.plan_expansion({"d": want}, {"d": current}, {"d": objs}, CLASSES)
    by_name = {c["metadata"]["name"]: c for c in objs}
    for name, size in got.patches:  # only up, only bound claims of a class that grows
        c = by_name[name]
        assert volumes.size_of(size) > volumes.size_of(volumes.request_of(c))
        assert c["spec"]["storageClassName"] == "fast" and c["status"]["phase"] == "Bound"
    smaller_fixed = [
        c
        for c in objs
        if c["spec"]["storageClassName"] != "fast"
        and volumes.size_of(volumes.request_of(c)) < volumes.size_of(want)
    ]
    assert bool(got.blocked) == bool(smaller_fixed)
    assert got.template_sizes == {"d": current if smaller_fixed else want}
    assert (volumes.condition(got, reported=False) is None) == (
        not got.blocked and not got.patches and not got.growing
    )
