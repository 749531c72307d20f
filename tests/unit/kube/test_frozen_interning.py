"""Frozen copies intern short strings (``kube/meta/frozen.py``): objects decoded
separately share one copy of each short key and value, so a cache of many
similar objects does not hold each label, reason or image once per object."""

from __future__ import annotations

import tracemalloc
from typing import Any

import msgspec
import pytest

from mo_operator.kube.meta import frozen
from mo_operator.kube.meta.frozen import INTERN_MAX, as_json, freeze, thaw

POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {
        "name": "mo-tp-cn-0",
        "labels": {"matrixorigin.io/component": "CNSet", "matrixorigin.io/instance": "mo-tp"},
    },
    "spec": {
        "containers": [{"name": "main", "image": "matrixorigin/matrixone:2.0.0", "ports": [{"name": "sql"}]}]
    },
    "status": {"conditions": [{"type": "Ready", "status": "True", "reason": "x" * (INTERN_MAX + 1)}]},
}


def decoded_copies(n: int) -> list[Any]:
    """``n`` separately decoded copies (each with its own string objects, as
    from separate API responses)."""
    raw = msgspec.json.encode(POD)
    return [msgspec.json.decode(raw) for _ in range(n)]


def test_short_keys_and_values_are_shared_between_separately_decoded_objects() -> None:
    a, b = (freeze(o) for o in decoded_copies(2))
    assert a == b == POD
    for path in (
        lambda o: o["metadata"]["labels"]["matrixorigin.io/component"],
        lambda o: o["spec"]["containers"][0]["image"],
        lambda o: o["spec"]["containers"][0]["ports"][0]["name"],
        lambda o: o["status"]["conditions"][0]["type"],
    ):
        assert path(a) is path(b)
    key_a = next(k for k in a["metadata"]["labels"] if k.endswith("component"))
    key_b = next(k for k in b["metadata"]["labels"] if k.endswith("component"))
    assert key_a is key_b


def test_long_values_are_left_alone() -> None:
    a, b = (freeze(o) for o in decoded_copies(2))
    long_a, long_b = a["status"]["conditions"][0]["reason"], b["status"]["conditions"][0]["reason"]
    assert long_a == long_b and long_a is not long_b


def test_interned_strings_still_thaw_to_plain_equal_json() -> None:
    (frozen,) = (freeze(o) for o in decoded_copies(1))
    plain = thaw(frozen)
    assert plain == POD and type(plain["metadata"]["labels"]) is dict
    assert msgspec.json.decode(msgspec.json.encode(frozen, enc_hook=as_json)) == POD


def retained_per_object(n: int) -> float:
    """Bytes each of ``n`` objects costs, decoded then frozen as an informer
    does (the decoded form is dropped, the frozen copy kept)."""
    raw = msgspec.json.encode(POD)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        kept = [freeze(msgspec.json.decode(raw)) for _ in range(n)]
        retained = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert len(kept) == n
    return retained / n


def test_similar_objects_cost_less_when_their_strings_are_shared(monkeypatch: pytest.MonkeyPatch) -> None:
    shared = retained_per_object(200)
    monkeypatch.setattr(frozen, "INTERN_MAX", -1)  # values no longer interned (keys still are)
    unshared = retained_per_object(200)
    assert shared < 0.85 * unshared, (shared, unshared)
