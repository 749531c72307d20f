"""Which sets the running operator may take over: opted in by the flag, or by the
annotation on the set or on the object that owns it (a cluster, or a pool for its sets)."""

from __future__ import annotations

from typing import Any

from mo_operator.controllers.adoption.optin import ADOPT_ANNOTATION, opted_in
from mo_operator.controllers.framework.env import Settings

from ..controller_fakes import FakeCaches, make_env

Obj = dict[str, Any]


def _owner(kind: str, annotated: bool) -> Obj:
    annotations = {ADOPT_ANNOTATION: "kruise"} if annotated else {}
    return {"kind": kind, "metadata": {"name": "p", "namespace": "ns", "annotations": annotations}}


def _cnset(owner_kind: str | None) -> Obj:
    refs = [{"kind": owner_kind, "name": "p", "controller": True}] if owner_kind else []
    return {"kind": "CNSet", "metadata": {"name": "p-abc", "namespace": "ns", "ownerReferences": refs}}


def test_a_pools_set_is_opted_in_by_its_annotated_pool() -> None:
    cnset = _cnset("CNPool")
    assert opted_in(make_env(FakeCaches(_owner("CNPool", True))), cnset)
    assert not opted_in(make_env(FakeCaches(_owner("CNPool", False))), cnset)
    assert not opted_in(make_env(FakeCaches()), cnset), "a pool not (yet) cached opts nothing in"


def test_a_cluster_annotation_covers_its_sets_and_the_flag_every_set() -> None:
    assert opted_in(make_env(FakeCaches(_owner("MatrixOneCluster", True))), _cnset("MatrixOneCluster"))
    assert not opted_in(make_env(FakeCaches(_owner("Deployment", True))), _cnset("Deployment"))
    assert opted_in(make_env(FakeCaches(), settings=Settings(adopt_kruise=True)), _cnset(None))
