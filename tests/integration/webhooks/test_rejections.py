"""Bad manifests are refused with messages naming the field, as kubectl prints them:
``admission webhook "v<kind>.core.matrixorigin.io" denied the request:
<Kind>.core.matrixorigin.io "<name>" is invalid: <field>: <upstream's message>``;
updates that break an update rule likewise; and nothing refused is stored."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from conftest import Kubectl

from .conftest import Webhooks, example_files, load

Obj = dict[str, Any]


def _manifest(tmp_path: Path, obj: Obj, name: str = "obj.yaml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(obj))
    return path


async def _refused(kubectl: Kubectl, path: Path) -> str:
    result = await kubectl.run("apply", "-f", str(path), check=False)
    assert result.returncode != 0, result.stdout
    return result.stderr


def _denied_by(kind: str, name: str) -> str:
    return (
        f'admission webhook "v{kind.lower()}.core.matrixorigin.io" denied the request: '
        f'{kind}.core.matrixorigin.io "{name}" is invalid: '
    )


async def test_invalid_objects_are_refused_naming_the_fields(
    webhooks: Webhooks, kubectl: Kubectl, tmp_path: Path
) -> None:
    logset = load(example_files()["logset"])
    logset["metadata"]["name"] = "zero"
    logset["spec"]["volume"]["size"] = "0"
    stderr = await _refused(kubectl, _manifest(tmp_path, logset))
    assert f'error when creating "{tmp_path / "obj.yaml"}": ' in stderr
    assert _denied_by("LogSet", "zero") + "spec.volume.size: size must not be zero" in stderr

    cluster = load(example_files()["matrixonecluster"])
    cluster["metadata"]["name"] = "m" * 47
    del cluster["spec"]["tn"]
    stderr = await _refused(kubectl, _manifest(tmp_path, cluster))
    assert (
        _denied_by("MatrixOneCluster", "m" * 47)
        + "[metadata.name: must be no more than 46 characters, spec.tn: .spec.tn must be set]"
        in stderr
    )

    cnset = load(example_files()["cnset"])
    cnset["spec"]["nodePort"] = 30001
    stderr = await _refused(kubectl, _manifest(tmp_path, cnset))
    assert (
        _denied_by("CNSet", "mo") + "spec.nodePort: cannot set node port when serviceType is ClusterIP"
        in stderr
    )

    groups = load(example_files()["matrixonecluster"])
    groups["spec"]["cnGroups"].append({**groups["spec"]["cnGroups"][0], "name": "Not_A_Name"})
    stderr = await _refused(kubectl, _manifest(tmp_path, groups))
    assert (
        _denied_by("MatrixOneCluster", "mo") + '[spec.cnGroups[1].name: Invalid value: "Not_A_Name": '
        in stderr
    ), "a subdomain's rule, then its Services' (api/validation/derived.py)"
    assert (
        'it names the CNSet\'s Service "mo-Not_A_Name-cn", which must be a Service name (a DNS-1035 label)'
        in stderr
    )

    listed = json.loads(
        (await kubectl.run("get", "logsets,matrixoneclusters,cnsets", "-A", "-o", "json")).stdout
    )
    assert listed["items"] == [], "nothing refused is stored"


async def test_schema_errors_are_named_by_the_api_server_before_our_webhook(
    webhooks: Webhooks, kubectl: Kubectl, tmp_path: Path
) -> None:
    """kube-apiserver checks the CRD schema after defaulting and before validating
    webhooks: a negative count never reaches our validator, and the message still
    names the field."""
    logset = load(example_files()["logset"])
    logset["spec"]["replicas"] = -1
    stderr = await _refused(kubectl, _manifest(tmp_path, logset))
    assert (
        "spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or equal to 0"
        in stderr
    )
    assert "admission webhook" not in stderr


async def test_updates_that_break_update_rules_are_refused(
    webhooks: Webhooks, kubectl: Kubectl, tmp_path: Path
) -> None:
    logset = load(example_files()["logset"])
    logset["spec"]["volume"]["storageClassName"] = "standard"
    await kubectl.run("apply", "-f", str(_manifest(tmp_path, logset)))
    # initialConfig is fixed from creation, as upstream's webhook fixes it.
    cases = [
        (("volume", "size"), "5Gi", "spec.volume.size: volume size cannot be decreased"),
        (
            ("volume", "storageClassName"),
            "fast",
            "spec.volume.storageClassName: storageClassName is immutable",
        ),
        (("sharedStorage", "s3", "path"), "other", "spec.sharedStorage.s3: sharedStorage.s3 is immutable"),
        (("initialConfig",), {"logShardReplicas": 1}, "spec.initialConfig: initialConfig is immutable"),
    ]
    for fields, value, expected in cases:
        changed = load(_manifest(tmp_path, logset))
        node = changed["spec"]
        for f in fields[:-1]:
            node = node[f]
        node[fields[-1]] = value
        stderr = await _refused(kubectl, _manifest(tmp_path, changed, "changed.yaml"))
        assert _denied_by("LogSet", "mo") + expected in stderr, stderr
        assert "error when applying patch" in stderr or "error when patching" in stderr
    # Growing the volume is fine.
    logset["spec"]["volume"]["size"] = "20Gi"
    await kubectl.run("apply", "-f", str(_manifest(tmp_path, logset)))

    cnset = load(example_files()["cnset"])
    cnset["spec"]["operatorVersion"] = "1.3.0"
    await kubectl.run("apply", "-f", str(_manifest(tmp_path, cnset)))
    cnset["spec"]["operatorVersion"] = "1.2.0"
    stderr = await _refused(kubectl, _manifest(tmp_path, cnset))
    assert (
        _denied_by("CNSet", "mo")
        + "spec.operatorVersion: new operatorVersion must be greater than or equal to the oldVersion"
        in stderr
    )
    stored = json.loads((await kubectl.run("get", "cnset", "mo", "-o", "json")).stdout)
    assert stored["spec"]["operatorVersion"] == "1.3.0"


async def test_compressed_morpc_is_refused(webhooks: Webhooks, kubectl: Kubectl, tmp_path: Path) -> None:
    """HAKeeper answering in compressed frames would leave the operator deaf to it."""
    logset = load(example_files()["logset"])
    logset["metadata"]["name"] = "compressed"
    logset["spec"]["config"] = "[logservice.rpc]\nenable-compress = true\n"
    stderr = await _refused(kubectl, _manifest(tmp_path, logset))
    assert (
        _denied_by("LogSet", "compressed")
        + "spec.config: [logservice.rpc] enable-compress = true is not supported: "
        "the operator's admin client speaks uncompressed morpc"
    ) in stderr
    result = await kubectl.run("get", "logset", "compressed", check=False)
    assert result.returncode != 0
