"""The validating webhook refuses a LogSet or MatrixOneCluster on an S3 path another
LogSet holds, or whose claim is being deleted, with upstream's words; it only checks
creation, and a failure to read the claims admits (the controller checks again)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from api.conftest import example

from mo_operator.kube.webhook.server import AdmissionRequest
from mo_operator.matrixone import buckets
from mo_operator.webhooks import Validator

from .conftest import review

Obj = dict[str, Any]


def claim(bound: str | None, *, deleting: bool = False, name: str = "bucket-1") -> Obj:
    meta: Obj = {
        "name": name,
        "namespace": "default",
        "creationTimestamp": "2024-01-01T00:00:00Z",
        "annotations": {buckets.BIND_TO: bound or ""},
    }
    if deleting:
        meta["deletionTimestamp"] = "2024-01-02T00:00:00Z"
    return {"metadata": meta}


class Claims:
    def __init__(self, *found: Obj, fail: bool = False) -> None:
        self.found = list(found)
        self.fail = fail
        self.asked: list[str] = []

    async def __call__(self, unique_id: str) -> Sequence[Mapping[str, Any]]:
        self.asked.append(unique_id)
        if self.fail:
            raise RuntimeError("forbidden")
        return self.found


async def check(kind: str, operation: str, obj: Obj, claims: Claims) -> str | None:
    denial = await Validator(kind, claims=claims)(
        AdmissionRequest.from_review(review(kind, operation, obj, obj))
    )
    return None if denial is None else denial.message


async def test_a_logset_on_a_path_another_logset_holds_is_refused() -> None:
    logset = example("logset")
    claims = Claims(claim("default/other"))
    message = await check("LogSet", "CREATE", logset, claims)
    assert message == (
        'LogSet.core.matrixorigin.io "mo" is invalid: spec.sharedStorage.s3: '
        "claimed bucket default/bucket-1 already bind to default/other"
    )
    assert claims.asked == [buckets.unique_id(logset["spec"]["sharedStorage"]["s3"])]


async def test_a_cluster_is_checked_under_the_name_of_its_logset() -> None:
    mo = example("matrixonecluster")
    name, ns = mo["metadata"]["name"], mo["metadata"].get("namespace", "default")
    assert await check("MatrixOneCluster", "CREATE", mo, Claims(claim(f"{ns}/{name}"))) is None
    message = await check("MatrixOneCluster", "CREATE", mo, Claims(claim(f"{ns}/someone-else")))
    assert message is not None and "spec.logService.sharedStorage.s3: claimed bucket" in message


async def test_a_path_being_deleted_is_refused_a_released_one_is_not() -> None:
    logset = example("logset")
    message = await check("LogSet", "CREATE", logset, Claims(claim(None, deleting=True)))
    assert message is not None and message.endswith("claimed bucket default/bucket-1 state is deleting")
    assert await check("LogSet", "CREATE", logset, Claims(claim(None))) is None
    assert await check("LogSet", "CREATE", logset, Claims(claim("default/mo"))) is None


async def test_updates_are_not_checked_so_a_finalizer_can_always_go() -> None:
    claims = Claims(claim("default/other"))
    assert await check("LogSet", "UPDATE", example("logset"), claims) is None
    assert claims.asked == []


async def test_claims_that_cannot_be_read_admit_and_other_kinds_are_not_looked_at() -> None:
    assert await check("LogSet", "CREATE", example("logset"), Claims(fail=True)) is None
    claims = Claims(claim("default/other"))
    assert await check("CNSet", "CREATE", example("cnset"), claims) is None
    filesystem = example("logset")
    filesystem["spec"]["sharedStorage"] = {"fileSystem": {"path": "/mnt/mo"}}
    assert await check("LogSet", "CREATE", filesystem, claims) is None
    assert claims.asked == []
