"""Property tests of the webhooks, with the api tests' strategies (``api/fuzzing.py``):
1,000 specs per kind, valid examples and mutations of them (wrong types, negative
numbers, bad quantities, missing and unknown fields, oversized and unicode strings,
deep nesting), each sent through the handlers as kube-apiserver sends it (the
defaulting webhook, then the validating one) on CREATE, and half of them also as an
UPDATE of a valid stored object. Every spec is admitted or denied with a message that names a field,
no exception escapes, the defaulting webhook never denies and is idempotent, and an
admitted spec passes validation again after defaulting (what the reconcilers check).

Directly through the handlers for speed; a sample per kind also goes through the
real HTTPS server, whose answers must be the same.
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Iterator
from typing import Any

import pytest
from api.fuzzing import BASES, FUZZ, mutated, names_a_field
from hypothesis import given, settings
from hypothesis import strategies as st

from mo_operator.api.defaulting import default
from mo_operator.api.kinds import GROUP, KINDS
from mo_operator.api.validation import FieldError, validate_create, validate_update
from mo_operator.kube.webhook.server import AdmissionRequest, Admitted, Denial
from mo_operator.webhooks import DEFAULTED_KINDS, Defaulter, Validator

from .conftest import DEFAULT_ARGS, Served, review, wire

Obj = dict[str, Any]


@pytest.fixture(scope="module")
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    """One event loop to await the handlers in, for every example (a new loop each
    time would cost more than the handlers)."""
    loop = asyncio.new_event_loop()
    yield loop
    loop.close()


class Admission:
    """kube-apiserver's admission chain for one kind: defaulting, then validation."""

    def __init__(self, kind: str, loop: asyncio.AbstractEventLoop) -> None:
        self.kind = kind
        self.loop = loop
        self.defaulter = Defaulter(kind) if kind in DEFAULTED_KINDS else None
        self.validator = Validator(kind)

    def admit(self, operation: str, obj: Any, old: Obj | None = None) -> tuple[Any, Denial | None]:
        """The object after the defaulting webhook, and the validating webhook's denial."""
        if self.defaulter is not None:
            result = self.loop.run_until_complete(
                self.defaulter(AdmissionRequest.from_review(review(self.kind, operation, obj, old)))
            )
            assert isinstance(result, dict), "the defaulting webhook never denies"
            obj = result
        result = self.loop.run_until_complete(
            self.validator(AdmissionRequest.from_review(review(self.kind, operation, obj, old)))
        )
        if isinstance(result, Admitted):
            _check_warnings(result.warnings)
        return obj, result if isinstance(result, Denial) else None


def _check_warnings(warnings: list[str]) -> None:
    """Each warning names its field first and fits in one header kube-apiserver never truncates."""
    assert warnings
    for w in warnings:
        assert w.split(": ", 1)[0].startswith(("spec.", "deps.")), w
        assert len(w) <= 256 and w.isprintable(), w


def _name(obj: Any) -> str:
    meta = obj.get("metadata") if isinstance(obj, dict) else None
    name = meta.get("name") if isinstance(meta, dict) else None
    return name if isinstance(name, str) else ""


def _check_denial(kind: str, obj: Any, denial: Denial, errors: list[FieldError]) -> None:
    """The denial says which object and lists the errors, each naming a field."""
    assert errors, "denied, so validation must have found something"
    assert denial.code == 422 and denial.reason == "Invalid"
    prefix = f'{kind}.{GROUP} "'
    assert denial.message.startswith(prefix) and '" is invalid: ' in denial.message
    assert all(names_a_field(e, obj if isinstance(obj, dict) else {}, kind) for e in errors), errors
    listed = denial.message.split('" is invalid: ', 1)[1]
    assert listed.lstrip("[").startswith(f"{errors[0].path}: "), (listed[:200], errors[0])


def _stored(kind: str) -> Obj:
    """A valid object as the API server stores it: the old object of the updates."""
    obj: Obj = default(kind, BASES[kind][0])
    assert validate_create(kind, obj) == []
    return obj


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_every_spec_is_admitted_or_denied_naming_a_field(kind: str, loop: asyncio.AbstractEventLoop) -> None:
    chain = Admission(kind, loop)
    stored = _stored(kind)

    @FUZZ
    @given(mutated(kind), st.booleans())
    def check(obj: Obj, also_as_update: bool) -> None:
        before = copy.deepcopy(obj)
        admitted, denial = chain.admit("CREATE", obj)
        assert obj == before, "the handlers must not change the request"
        if denial is not None:
            _check_denial(kind, admitted, denial, validate_create(kind, admitted))
        elif chain.defaulter is not None:
            # Defaulting again changes nothing, so what the validator admitted is
            # what the reconcilers will read and validate.
            assert chain.defaulter.mutate("CREATE", admitted) == admitted, "defaulting is idempotent"
        else:
            assert validate_create(kind, default(kind, admitted)) == []
        if not also_as_update:
            return
        # The same spec as an UPDATE of a valid stored object (the API server keeps
        # the stored identity: name and namespace cannot change). Half the specs, to
        # keep the run short: UPDATE validation defaults and checks both objects.
        new = {**obj, "metadata": stored["metadata"]}
        admitted, denial = chain.admit("UPDATE", new, stored)
        if denial is not None:
            _check_denial(kind, admitted, denial, validate_update(kind, stored, admitted))
        else:
            assert validate_create(kind, admitted) == [], "an admitted update is a valid object"

    check()


def _samples(kind: str, n: int) -> list[Obj]:
    """``n`` generated specs of a kind, collected to be sent over HTTP afterwards."""
    out: list[Obj] = []

    @settings(FUZZ, max_examples=n)
    @given(mutated(kind))
    def collect(obj: Obj) -> None:
        out.append(obj)

    collect()
    return out


async def test_a_sample_through_the_https_server_gets_the_same_answers(served: Served) -> None:
    """What the server sends back (a JSON patch, an AdmissionReview status) says
    exactly what the handlers said."""
    for kind in sorted(KINDS):
        defaulter = Defaulter(kind, default_args=DEFAULT_ARGS) if kind in DEFAULTED_KINDS else None
        validator = Validator(kind)
        for sample in _samples(kind, 15):
            obj = wire(sample)
            if defaulter is not None:
                response, patched = await served.mutate(kind, "CREATE", obj)
                assert response["allowed"] is True
                assert patched == await defaulter(AdmissionRequest.from_review(review(kind, "CREATE", obj)))
                obj = patched
            response = await served.validate(kind, "CREATE", obj)
            result = await validator(AdmissionRequest.from_review(review(kind, "CREATE", obj)))
            assert response["allowed"] is not isinstance(result, Denial)
            if isinstance(result, Denial):
                assert response["status"] == {"code": 422, "reason": "Invalid", "message": result.message}
            assert response.get("warnings") == (result.warnings if isinstance(result, Admitted) else None)
