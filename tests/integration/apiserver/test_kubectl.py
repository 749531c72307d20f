"""kubectl works against the embedded API server unchanged: the commands a
platform engineer uses every day, run as a user would run them."""

from __future__ import annotations

import asyncio
import json
import os
import sys

import yaml

from conftest import Kubectl

CM = """
apiVersion: v1
kind: ConfigMap
metadata:
  name: web
  labels: {app: web}
data:
  a: "1"
"""

STS = """
apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: db
spec:
  replicas: 1
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers:
      - name: main
        image: busybox:1.36
        env: [{name: A, value: "1"}]
"""


async def test_apply_get_and_yaml_output(kubectl: Kubectl) -> None:
    out = await kubectl.run("apply", "-f", "-", input=CM)
    assert "configmap/web created" in out.stdout
    out = await kubectl.run("get", "cm", "web", "-o", "yaml")
    obj = yaml.safe_load(out.stdout)
    assert obj["data"] == {"a": "1"}
    assert "kubectl.kubernetes.io/last-applied-configuration" in obj["metadata"]["annotations"]
    out = await kubectl.run("apply", "-f", "-", input=CM.replace('a: "1"', 'a: "2"'))
    assert "configmap/web configured" in out.stdout
    out = await kubectl.run("apply", "-f", "-", input=CM.replace('a: "1"', 'a: "2"'))
    assert "configmap/web unchanged" in out.stdout
    out = await kubectl.run("get", "cm", "-l", "app=web")
    lines = out.stdout.strip().splitlines()
    assert lines[0].split()[:2] == ["NAME", "DATA"] and lines[1].split()[0] == "web"


async def test_server_side_apply_and_conflicts(kubectl: Kubectl) -> None:
    out = await kubectl.run("apply", "--server-side", "-f", "-", input=CM)
    assert "serverside-applied" in out.stdout
    obj = json.loads((await kubectl.run("get", "cm", "web", "-o", "json", "--show-managed-fields")).stdout)
    assert any(
        m["manager"] == "kubectl" and m["operation"] == "Apply" for m in obj["metadata"]["managedFields"]
    )
    other = CM.replace('a: "1"', 'a: "9"')
    res = await kubectl.run(
        "apply", "--server-side", "--field-manager", "other", "-f", "-", input=other, check=False
    )
    assert res.returncode != 0
    assert "conflict" in res.stderr.lower() and ".data.a" in res.stderr
    await kubectl.run(
        "apply", "--server-side", "--field-manager", "other", "--force-conflicts", "-f", "-", input=other
    )
    obj = json.loads((await kubectl.run("get", "cm", "web", "-o", "json")).stdout)
    assert obj["data"]["a"] == "9"


async def test_patch_types(kubectl: Kubectl) -> None:
    await kubectl.run("apply", "-f", "-", input=STS)
    await kubectl.run(
        "patch",
        "sts",
        "db",
        "-p",
        '{"spec":{"template":{"spec":{"containers":[{"name":"main","env":[{"name":"B","value":"2"}]}]}}}}',
    )
    obj = json.loads((await kubectl.run("get", "sts", "db", "-o", "json")).stdout)
    env = obj["spec"]["template"]["spec"]["containers"][0]["env"]
    assert {e["name"] for e in env} == {"A", "B"}, "strategic merge patch merges env by name"
    assert obj["spec"]["template"]["spec"]["containers"][0]["image"] == "busybox:1.36"
    await kubectl.run("patch", "sts", "db", "--type", "merge", "-p", '{"metadata":{"labels":{"x":"y"}}}')
    await kubectl.run(
        "patch", "sts", "db", "--type", "json", "-p", '[{"op":"replace","path":"/spec/replicas","value":2}]'
    )
    obj = json.loads((await kubectl.run("get", "sts", "db", "-o", "json")).stdout)
    assert obj["metadata"]["labels"] == {"x": "y"} and obj["spec"]["replicas"] == 2


async def test_scale_and_wait(kubectl: Kubectl) -> None:
    await kubectl.run("apply", "-f", "-", input=STS)
    out = await kubectl.run("scale", "sts", "db", "--replicas", "3")
    assert "scaled" in out.stdout
    out = await kubectl.run("get", "sts", "db", "-o", "jsonpath={.spec.replicas}")
    assert out.stdout == "3"
    await kubectl.run("apply", "-f", "-", input=CM)
    waiter = asyncio.create_task(kubectl.run("wait", "--for=jsonpath={.data.a}=5", "cm/web", "--timeout=20s"))
    await asyncio.sleep(0.5)
    await kubectl.run("patch", "cm", "web", "--type", "merge", "-p", '{"data":{"a":"5"}}')
    out = await waiter
    assert "condition met" in out.stdout


async def test_delete_and_describe(kubectl: Kubectl) -> None:
    await kubectl.run("apply", "-f", "-", input=CM)
    out = await kubectl.run("describe", "cm", "web")
    assert "Name:" in out.stdout and "web" in out.stdout and "app=web" in out.stdout
    out = await kubectl.run("delete", "cm", "web")
    assert 'configmap "web" deleted' in out.stdout
    res = await kubectl.run("get", "cm", "web", check=False)
    assert res.returncode != 0 and "NotFound" in res.stderr


async def test_edit(kubectl: Kubectl, tmp_path: object) -> None:
    await kubectl.run("apply", "-f", "-", input=CM)
    editor = f"{sys.executable} -c \"import sys,re;p=sys.argv[1];s=open(p).read();open(p,'w').write(s.replace('a: \\\"1\\\"','a: \\\"7\\\"'))\""
    os.environ["KUBE_EDITOR"] = editor
    try:
        out = await kubectl.run("edit", "cm", "web")
    finally:
        del os.environ["KUBE_EDITOR"]
    assert "edited" in out.stdout
    out = await kubectl.run("get", "cm", "web", "-o", "jsonpath={.data.a}")
    assert out.stdout == "7"


async def test_get_watch_streams_changes(kubectl: Kubectl) -> None:
    proc = await asyncio.create_subprocess_exec(
        kubectl.binary,
        "--kubeconfig",
        str(kubectl.kubeconfig),
        "get",
        "cm",
        "-w",
        "-l",
        "app=web",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    await asyncio.sleep(1.0)
    await kubectl.run("apply", "-f", "-", input=CM)
    await kubectl.run("apply", "-f", "-", input=CM.replace("name: web", "name: web2"))
    await asyncio.sleep(1.0)
    proc.terminate()
    out, _ = await proc.communicate()
    text = out.decode()
    assert "web " in text or "web\t" in text or "\nweb" in text
    assert "web2" in text


async def test_explain_built_in_kinds(kubectl: Kubectl) -> None:
    out = await kubectl.run("explain", "statefulsets.spec.replicas")
    assert "replicas" in out.stdout.lower() and "integer" in out.stdout.lower()
