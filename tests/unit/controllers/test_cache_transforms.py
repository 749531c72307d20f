"""What the operator's cache drops: managed fields, ``kubectl apply``'s copy of
the object, and every pod spec field no controller reads."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import mo_operator.controllers as controllers
from mo_operator.controllers.common import resources as r
from mo_operator.controllers.common.cache_transforms import CACHE_TRANSFORMS, POD_SPEC_READ
from mo_operator.kube.informer import LAST_APPLIED, strip_managed_fields

POD: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {
        "name": "mo-tp-cn-0",
        "namespace": "ns",
        "resourceVersion": "7",
        "annotations": {
            LAST_APPLIED: "{...}",
            "matrixorigin.io/hakeeper-discovery": "mo-log-discovery:32001",
        },
        "managedFields": [{"manager": "mo-operator"}],
    },
    "spec": {
        "containers": [{"name": "main", "image": "matrixorigin/matrixone:2.0.0"}],
        "tolerations": [{"operator": "Exists"}],
        "volumes": [{"name": "config", "configMap": {"name": "mo-tp-cn-config-1"}}],
        "nodeName": "node-0",
        "hostname": "mo-tp-cn-0",
        "subdomain": "mo-tp-headless",
    },
    "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]},
}


def test_a_cached_pod_keeps_its_metadata_status_and_the_spec_fields_read() -> None:
    cached = CACHE_TRANSFORMS[r.PODS](POD)
    assert set(cached["spec"]) == set(POD_SPEC_READ)
    assert cached["status"] == POD["status"]
    assert cached["metadata"]["resourceVersion"] == "7"
    assert "managedFields" not in cached["metadata"]
    assert cached["metadata"]["annotations"] == {
        "matrixorigin.io/hakeeper-discovery": "mo-log-discovery:32001"
    }
    assert POD["spec"]["containers"], "the input is left as it was"


def test_other_kinds_lose_only_managed_fields_and_the_last_applied_copy() -> None:
    sts = {**POD, "kind": "StatefulSet"}
    cached = strip_managed_fields(sts)
    assert cached["spec"] == POD["spec"]
    assert set(cached["metadata"]) == set(POD["metadata"]) - {"managedFields"}
    assert strip_managed_fields(cached) is cached, "nothing to strip: the same object"


_SPEC_READ = re.compile(
    r"""(?:spec_of\((?P<a>\w+)\)|\((?P<b>\w+)\.get\("spec"\)\s+or\s+\{\}\))\.get\("(?P<field>\w+)"\)"""
)


def test_controllers_read_no_other_pod_spec_field() -> None:
    """A guard over the sources: ``spec_of(pod).get("x")`` or ``(pod.get("spec") or
    {}).get("x")`` on a variable named like a pod must name a field the cache keeps."""
    root = Path(controllers.__file__).parent
    reads = set()
    for path in root.rglob("*.py"):
        for m in _SPEC_READ.finditer(path.read_text()):
            var = m.group("a") or m.group("b")
            if var in ("p", "pod") or var.endswith("_pod"):
                reads.add((path.name, m.group("field")))
    assert reads, "the pattern still finds the known reads"
    assert {field for _, field in reads} <= set(POD_SPEC_READ), sorted(reads)
