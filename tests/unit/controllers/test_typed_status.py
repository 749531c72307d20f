"""``status_of`` reads a cached object's status as its kind's model: once per status
seen (remembered by identity), empty when there is none or it does not parse."""

from __future__ import annotations

import logging

import pytest

from mo_operator.api.backup import RestoreJobStatus
from mo_operator.controllers.framework.typed import status_of
from mo_operator.kube.meta.frozen import freeze

ENDED = {
    "type": "Ended",
    "status": "True",
    "reason": "Done",
    "message": "restored",
    "lastTransitionTime": "2026-01-01T00:00:00Z",
}


def job(status: dict[str, object] | None) -> object:
    body: dict[str, object] = {"kind": "RestoreJob", "metadata": {"name": "r", "namespace": "ns"}}
    if status is not None:
        body["status"] = status
    return freeze(body)


def test_a_status_reads_typed_with_its_conditions() -> None:
    status = status_of(RestoreJobStatus, job({"phase": "Completed", "conditions": [ENDED]}))
    assert status.phase == "Completed"
    assert status.is_true("Ended")
    ended = status.condition("Ended")
    assert ended is not None and ended.message == "restored"
    assert status.condition("Ready") is None


def test_the_same_cached_status_is_parsed_once() -> None:
    cached = job({"phase": "Running"})
    assert status_of(RestoreJobStatus, cached) is status_of(RestoreJobStatus, cached)
    assert status_of(RestoreJobStatus, job({"phase": "Running"})) == status_of(RestoreJobStatus, cached)


def test_no_status_reads_as_empty() -> None:
    assert status_of(RestoreJobStatus, job(None)) == RestoreJobStatus()
    assert status_of(RestoreJobStatus, None).phase is None


def test_a_status_that_does_not_parse_reads_as_empty_and_is_logged(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        status = status_of(RestoreJobStatus, job({"phase": 3}))
    assert status == RestoreJobStatus()
    assert "RestoreJob ns/r: status does not parse as RestoreJobStatus" in caplog.text
