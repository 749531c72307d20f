"""Immutable, content-named ConfigMaps and their garbage collection
(controllers/specs/configmaps.py)."""

from __future__ import annotations

from typing import Any

from mo_operator.controllers.framework import resources as r
from mo_operator.controllers.framework.writes import Delete
from mo_operator.controllers.specs.configmaps import (
    CONFIG_HASH_LABEL,
    config_maps_in_use,
    hashed_config_map,
    unused_config_maps,
    unused_deletions,
)
from mo_operator.matrixone import labels
from mo_operator.matrixone.component import Component

Obj = dict[str, Any]
BASE = "mo-dn-config"


def owner(name: str = "mo", uid: str = "uid-mo") -> Obj:
    return {
        "apiVersion": "core.matrixorigin.io/v1alpha1",
        "kind": "DNSet",
        "metadata": {"name": name, "namespace": "ns", "uid": uid},
    }


LABELS = labels.sub_resource_labels(Component.TN, "mo", "ns")


def config(data: dict[str, str], *, base: str = BASE, of: Obj | None = None, deleting: bool = False) -> Obj:
    cm = hashed_config_map(of or owner(), base, LABELS, data)
    cm["metadata"]["uid"] = f"uid-{cm['metadata']['name']}"
    if deleting:
        cm["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    return cm


def pod(*config_maps: str) -> Obj:
    return {
        "kind": "Pod",
        "metadata": {"name": "mo-dn-0", "namespace": "ns", "labels": LABELS},
        "spec": {
            "volumes": [
                *({"name": f"v{i}", "configMap": {"name": n}} for i, n in enumerate(config_maps)),
                {"name": "data", "persistentVolumeClaim": {"claimName": "mo-data-mo-dn-0"}},
                {"name": "empty", "emptyDir": {}},
            ]
        },
    }


def test_the_name_carries_a_hash_of_the_content() -> None:
    a = hashed_config_map(owner(), BASE, LABELS, {"config.toml": "a = 1", "start.sh": "exec"})
    same = hashed_config_map(owner(), BASE, LABELS, {"start.sh": "exec", "config.toml": "a = 1"})
    other = hashed_config_map(owner(), BASE, LABELS, {"config.toml": "a = 2", "start.sh": "exec"})
    name = a["metadata"]["name"]
    assert name.startswith(f"{BASE}-") and len(name) == len(BASE) + 1 + 10
    assert same["metadata"]["name"] == name
    assert other["metadata"]["name"] != name
    assert a["immutable"] is True
    assert a["data"] == {"config.toml": "a = 1", "start.sh": "exec"}
    assert a["metadata"]["labels"] == {**LABELS, CONFIG_HASH_LABEL: BASE}
    assert a["metadata"]["ownerReferences"][0]["uid"] == "uid-mo"
    assert a["metadata"]["ownerReferences"][0]["controller"] is True


def test_config_maps_in_use_are_those_pods_mount() -> None:
    assert config_maps_in_use([pod("a", "b"), pod("c"), {"metadata": {}}]) == {"a", "b", "c"}
    assert config_maps_in_use([]) == set()


def test_unused_picks_only_that_owners_config_maps_of_that_base_that_nothing_names() -> None:
    old = config({"config.toml": "a = 1"})
    current = config({"config.toml": "a = 2"})
    in_use = config({"config.toml": "a = 3"})
    other_base = config({"config.toml": "a = 1"}, base="mo-dn-other")
    other_owner = config({"config.toml": "a = 4"}, of=owner("mo", uid="uid-of-a-previous-mo"))
    going = config({"config.toml": "a = 5"}, deleting=True)
    unlabelled = {**config({"config.toml": "a = 6"})}
    unlabelled["metadata"] = {**unlabelled["metadata"], "labels": dict(LABELS)}
    existing = [old, current, in_use, other_base, other_owner, going, unlabelled]
    keep = {current["metadata"]["name"], in_use["metadata"]["name"]}
    found = unused_config_maps(owner(), BASE, existing, keep)
    assert [cm["metadata"]["name"] for cm in found] == [old["metadata"]["name"]]
    assert unused_config_maps(owner(), BASE, existing, keep | {old["metadata"]["name"]}) == []


def test_unused_deletions_delete_what_no_pod_mounts_and_nothing_desired_names() -> None:
    old = config({"config.toml": "a = 1"})
    mounted = config({"config.toml": "a = 2"})
    desired = config({"config.toml": "a = 3"})
    deletions = unused_deletions(
        owner(),
        BASE,
        [old, mounted, desired],
        [pod(mounted["metadata"]["name"])],
        [desired["metadata"]["name"], "mo-dn-headless"],
    )
    # conditional on still being the object judged unused
    assert deletions == [Delete(r.CONFIGMAPS, "ns", old["metadata"]["name"], uid=old["metadata"]["uid"])]


def test_nothing_to_collect_plans_nothing() -> None:
    current = config({"config.toml": "a = 1"})
    assert unused_deletions(owner(), BASE, [current], [], [current["metadata"]["name"]]) == []
    assert unused_deletions(owner(), BASE, [current], [], []) != []
