"""Names the operator derives from the names users give are checked at admission
(``api/validation/derived.py``): at each kind's limit every name the operator
actually makes (``matrixone/names.py`` and the controllers) passes Kubernetes'
rule for it, and one character past it the object is refused naming the field,
the limit and the object that needs it. A group named ``x.y`` or a 60-character
one (`<cluster>-<group>`) used to be admitted and then refused by the API server
on every retry."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from mo_operator.api.validation import validate_create
from mo_operator.api.validation.cluster import MAX_CLUSTER_NAME_LENGTH
from mo_operator.api.validation.derived import DERIVED, MAX_DERIVED_LENGTH, name_limit
from mo_operator.api.validation.names import dns1035_label, dns1123_label, label_value
from mo_operator.controllers.backup.schedule_decisions import deletion_job_name, run_name
from mo_operator.controllers.cluster.restore import restore_job_name
from mo_operator.controllers.pool.cnpool import REVISION_LENGTH, managed_by
from mo_operator.matrixone import names
from mo_operator.matrixone.buckets import cleanup_job_name
from mo_operator.matrixone.component import Component

from .conftest import example

ORDINAL = 1999
"""The highest pod ordinal a set of 1,000 pods reaches during a roll."""
HASH = "a" * 10
FAR = 99_999_999 * 60.0
"""The last minute since the epoch written with 8 digits, as the rule allows for (in 2160)."""


def _component(component: Component) -> Callable[[str], dict[str, list[str]]]:
    def made(name: str) -> dict[str, list[str]]:
        services = [
            names.headless_service_name(component, name),
            names.metric_service_name(component, name),
        ]
        if component is Component.LOG:
            services.append(names.discovery_service_name(name))
        if component in (Component.CN, Component.PROXY, Component.WEBUI):
            services.append(names.client_service_name(component, name))
        if component is Component.WEBUI:
            services = [names.client_service_name(component, name)]
        if component is Component.PROXY:
            services = [
                names.client_service_name(component, name),
                names.metric_service_name(component, name),
            ]
        pods = [names.pod_name(component, name, ORDINAL)] if component in STATEFUL | {Component.CN} else []
        labels = [name]
        if component in STATEFUL:
            labels.append(f"{names.workload_name(component, name)}-{HASH}")
        return {"service": services, "pod": pods, "label": labels}

    return made


STATEFUL = {Component.LOG, Component.TN}


def _pool(name: str) -> dict[str, list[str]]:
    made = _component(Component.CN)(f"{name}-{'b' * REVISION_LENGTH}")
    made["label"] += [managed_by(name), name]
    return made


MADE: dict[str, Callable[[str], dict[str, list[str]]]] = {
    "LogSet": _component(Component.LOG),
    "DNSet": _component(Component.TN),
    "TNSet": _component(Component.TN),
    "CNSet": _component(Component.CN),
    "ProxySet": _component(Component.PROXY),
    "WebUI": _component(Component.WEBUI),
    "CNPool": _pool,
    "CNClaimSet": lambda n: {"service": [], "pod": [], "label": [n]},
    "BackupJob": lambda n: {"service": [], "pod": [], "label": [n]},
    "RestoreJob": lambda n: {"service": [], "pod": [], "label": [n]},
    # a run's BackupJob, its Job's label, and the Job deleting its Backup's data, far in the future
    "BackupSchedule": lambda n: {
        "service": [],
        "pod": [],
        "label": [run_name(n, FAR), deletion_job_name(run_name(n, FAR))],
    },
    "BucketClaim": lambda n: {"service": [], "pod": [], "label": [cleanup_job_name(n)]},
}
RULES = {"service": dns1035_label, "pod": dns1123_label, "label": label_value}


def test_every_kind_that_derives_names_is_covered() -> None:
    assert set(DERIVED) == set(MADE)


def test_a_cluster_at_upstreams_limit_names_every_child_validly() -> None:
    """A cluster's LogSet, DNSet, ProxySet and WebUI are named like it, its legacy CN
    sets <mo>-tp and <mo>-ap, its RestoreJob restore-<mo>: all fit at 46 characters."""
    name = "m" * MAX_CLUSTER_NAME_LENGTH
    for kind in ("LogSet", "DNSet", "ProxySet", "WebUI"):
        limit = name_limit(kind)
        assert limit is not None and limit >= MAX_CLUSTER_NAME_LENGTH, kind
    cnset = name_limit("CNSet")
    assert cnset is not None and len(names.cn_group_cnset_name(name, "tp")) <= cnset
    assert label_value(restore_job_name(name)) == [] and label_value(name) == []


@pytest.mark.parametrize("kind", sorted(DERIVED))
def test_at_the_limit_every_name_the_operator_makes_is_valid(kind: str) -> None:
    limit = name_limit(kind)
    assert limit is not None
    name = ("m" * limit)[:limit]
    for rule, made in MADE[kind](name).items():
        for derived in made:
            assert RULES[rule](derived) == [], (kind, rule, derived)


@pytest.mark.parametrize("kind", sorted(DERIVED))
def test_one_past_the_limit_some_name_the_operator_makes_is_invalid(kind: str) -> None:
    limit = name_limit(kind)
    assert limit is not None
    name = "m" * (limit + 1)
    broken = [d for rule, made in MADE[kind](name).items() for d in made if RULES[rule](d)]
    assert broken or limit == MAX_DERIVED_LENGTH, "the limit is no tighter than it must be"


def _named(manifest: str, name: str) -> dict[str, object]:
    obj = example(manifest)
    obj["metadata"]["name"] = name
    return obj


SETS = {
    "LogSet": "logset",
    "DNSet": "dnset",
    "TNSet": "tnset",
    "CNSet": "cnset",
    "ProxySet": "proxyset",
    "WebUI": "webui",
    "CNPool": "cnpool",
    "CNClaimSet": "cnclaimset",
    "BackupJob": "backupjob",
    "RestoreJob": "restorejob",
    "BackupSchedule": "backupschedule",
}


@pytest.mark.parametrize("kind", sorted(SETS))
def test_an_object_named_past_its_limit_is_refused_naming_the_field_and_the_limit(kind: str) -> None:
    limit = name_limit(kind)
    assert limit is not None
    assert validate_create(kind, _named(SETS[kind], "m" * limit)) == []
    errors = validate_create(kind, _named(SETS[kind], "m" * (limit + 1)))
    assert [e.path for e in errors] == ["metadata.name"], errors
    assert f"must be no more than {limit} characters" in errors[0].message


@pytest.mark.parametrize("name", ["x.y", "1abc"])
@pytest.mark.parametrize("kind", ["LogSet", "DNSet", "CNSet", "ProxySet", "WebUI"])
def test_a_set_whose_services_cannot_be_named_after_it_is_refused(kind: str, name: str) -> None:
    errors = validate_create(kind, _named(SETS[kind], name))
    assert [e.path for e in errors] == ["metadata.name"] and "Service" in errors[0].message, errors


def _cluster(name: str, group: str) -> dict[str, object]:
    cluster = _named("matrixonecluster", name)
    cluster["spec"]["cnGroups"][0]["name"] = group  # type: ignore[index]
    return cluster


def test_a_cn_group_is_held_to_its_cnsets_limits_less_the_clusters_name() -> None:
    cnset = name_limit("CNSet")
    assert cnset is not None
    for cluster in ("mo", "c" * 46):
        room = cnset - len(cluster) - 1
        assert validate_create("MatrixOneCluster", _cluster(cluster, "g" * room)) == []
        errors = validate_create("MatrixOneCluster", _cluster(cluster, "g" * (room + 1)))
        assert [e.path for e in errors] == ["spec.cnGroups[0].name"], errors
        assert f"must be no more than {room} characters" in errors[0].message


def test_a_cn_group_with_a_dot_is_refused() -> None:
    (error,) = validate_create("MatrixOneCluster", _cluster("mo", "x.y"))
    assert error.path == "spec.cnGroups[0].name" and '"mo-x.y-cn"' in error.message


def test_a_name_already_stored_is_not_held_against_an_update() -> None:
    """An object stored before the rule (with the webhook off) stays editable."""
    from mo_operator.api.validation import validate_update

    old = _named("cnset", "x.y")
    new = _named("cnset", "x.y")
    new["spec"]["replicas"] = 3  # type: ignore[index]
    assert validate_update("CNSet", old, new) == []
