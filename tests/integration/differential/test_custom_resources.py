"""CustomResourceDefinitions and their instances: the CRD's own defaults and
conditions, structural-schema validation errors naming fields, defaulting,
pruning and x-kubernetes-preserve-unknown-fields, fieldValidation, the
status and scale subresources, printer columns, and strategic merge refused
(https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definitions/)."""

from __future__ import annotations

from typing import Any

from .crds import crd, install, widget
from .harness import JSON_PATCH, MERGE, STRATEGIC, TABLE, Target, Transcript
from .harness import test_differential as test_differential

Obj = dict[str, Any]


def _established(crd_body: Obj) -> Any:
    return [
        [c["type"], c["status"], c["reason"], c["message"]]
        for c in crd_body.get("status", {}).get("conditions", [])
    ]


async def case_crd_defaults_and_conditions(t: Target) -> Transcript:
    """The CRD comes back with its defaults (conversion None, singular and
    listKind), and once served reports NamesAccepted and Established and its
    accepted names."""
    tr = Transcript()
    created, _ = await install(t)
    tr.add("created spec", created["spec"])
    name = created["metadata"]["name"]
    after = await t.get(f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}")
    tr.add("conditions", sorted(_established(after.body)))
    tr.add("accepted", [after.body["status"]["acceptedNames"], after.body["status"]["storedVersions"]])
    return tr


async def case_invalid_crd(t: Target) -> Transcript:
    """A CRD whose name is not plural.group, with no storage version and a
    non-structural schema, is 422 with a cause per problem."""
    tr = Transcript()
    body, _ = crd(t)
    body["metadata"]["name"] = "wrong"
    body["spec"]["versions"][0]["storage"] = False
    body["spec"]["versions"][0]["schema"]["openAPIV3Schema"] = {"type": "object", "properties": {"spec": {}}}
    reply = await t.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", body)
    tr.add("invalid", reply)
    return tr


async def case_schema_validation_errors(t: Target) -> Transcript:
    """Each violated schema rule is one cause with the field's path."""
    tr = Transcript()
    _, path = await install(t)
    bad = {"size": 20, "mode": "medium", "name": "ABC123456", "tags": ["a", "b", "c"], "limits": {"cpu": 1}}
    tr.add("many", await t.post(path, widget(t, "w", bad)))
    tr.add("required", await t.post(path, widget(t, "w", {})))
    tr.add("wrong type", await t.post(path, widget(t, "w", {"size": "big"})))
    not_object = await t.post(path, widget(t, "w", "text"))  # type: ignore[arg-type]
    # kube-apiserver adds a cause from the scale subresource's accessor,
    # on the replicas path (".spec.replicas"), for the same wrong type.
    causes = [c for c in not_object.body["details"]["causes"] if not c["field"].startswith(".")]
    tr.add(
        "spec not an object", {**not_object.body, "details": {**not_object.body["details"], "causes": causes}}
    )
    return tr


async def case_defaulting_and_pruning(t: Target) -> Transcript:
    """Defaults fill absent fields (nested ones inside defaulted objects);
    unknown fields are pruned, except under
    x-kubernetes-preserve-unknown-fields; Strict validation refuses them
    and Warn answers with a warning."""
    tr = Transcript()
    _, path = await install(t)
    spec = {"size": 2, "unknown": 1, "free": {"anything": {"goes": True}}}
    created = await t.post(path, {**widget(t, "w", spec), "extra": "top"})
    tr.add("created", [created.code, created.body["spec"], "extra" in created.body])
    strict = await t.post(path, widget(t, "s", spec), params={"fieldValidation": "Strict"})
    tr.add("strict", strict)
    return tr


async def case_status_subresource(t: Target) -> Transcript:
    """With a status subresource the main resource ignores status and the
    status one ignores spec; generation moves on spec changes only."""
    tr = Transcript()
    _, path = await install(t)
    created = await t.post(path, {**widget(t, "w", {"size": 1}), "status": {"ready": 5}})
    tr.add("create drops status", [created.body.get("status"), created.body["metadata"]["generation"]])
    status = await t.patch(
        path + "/w/status", {"status": {"ready": 2, "phase": "Up"}, "spec": {"size": 9}}, MERGE
    )
    tr.add(
        "status write",
        [status.code, status.body["spec"], status.body["status"], status.body["metadata"]["generation"]],
    )
    spec = await t.patch(path + "/w", {"spec": {"size": 3}, "status": {"ready": 7}}, MERGE)
    tr.add(
        "spec write", [spec.body["spec"]["size"], spec.body["status"], spec.body["metadata"]["generation"]]
    )
    meta = await t.patch(path + "/w", {"metadata": {"labels": {"a": "b"}}}, MERGE)
    tr.add("metadata write", meta.body["metadata"]["generation"])
    return tr


async def case_scale_subresource(t: Target) -> Transcript:
    """/scale reads and writes spec.replicas through an autoscaling/v1 Scale."""
    tr = Transcript()
    _, path = await install(t)
    await t.post(path, widget(t, "w", {"size": 1, "replicas": 2}))
    await t.patch(path + "/w/status", {"status": {"ready": 1, "selector": "app=w"}}, MERGE)
    tr.add("get", await t.get(path + "/w/scale"))
    scale = (await t.get(path + "/w/scale")).body
    tr.add("put", await t.put(path + "/w/scale", {**scale, "spec": {"replicas": 4}}))
    tr.add("patch", await t.patch(path + "/w/scale", {"spec": {"replicas": 5}}, MERGE))
    stored = (await t.get(path + "/w")).body
    tr.add("replicas", stored["spec"]["replicas"])
    # a write through /scale is recorded as the scale subresource's
    tr.add(
        "managed",
        sorted((m["operation"], m.get("subresource", "")) for m in stored["metadata"]["managedFields"]),
    )
    tr.add("missing", await t.get(path + "/nope/scale"))
    return tr


async def case_printer_columns_table(t: Target) -> Transcript:
    """The CRD's additionalPrinterColumns, with Name and Age, as a Table."""
    tr = Transcript()
    _, path = await install(t)
    await t.post(path, widget(t, "w", {"size": 4}))
    table = await t.get(path, accept=TABLE)
    body = table.body
    tr.add("columns", body.get("columnDefinitions"))
    names = [c["name"] for c in body.get("columnDefinitions", [])]
    tr.add(
        "rows",
        [[c for n, c in zip(names, r["cells"], strict=True) if n != "Age"] for r in body.get("rows", [])],
    )
    tr.add("row objects", [r["object"]["metadata"]["name"] for r in body.get("rows", [])])
    tr.add("kind", [body.get("kind"), body.get("apiVersion"), sorted(body.get("metadata", {}))])
    one = await t.get(path + "/w", accept=TABLE)
    tr.add("one", [one.code, one.body.get("kind"), len(one.body.get("rows", []))])
    return tr


async def case_patch_types_on_custom_resources(t: Target) -> Transcript:
    """Merge and JSON patches work; strategic merge is 415 for custom resources."""
    tr = Transcript()
    _, path = await install(t)
    await t.post(path, widget(t, "w", {"size": 1, "tags": ["a"]}))
    tr.add("strategic", await t.patch(path + "/w", {"spec": {"size": 2}}, STRATEGIC))
    merged = await t.patch(path + "/w", {"spec": {"tags": ["b"]}}, MERGE)
    tr.add("merge", merged.body["spec"])
    jp = await t.patch(path + "/w", [{"op": "add", "path": "/spec/tags/-", "value": "c"}], JSON_PATCH)
    tr.add("json", jp.body["spec"])
    invalid = await t.patch(path + "/w", {"spec": {"size": 0}}, MERGE)
    tr.add("invalid", invalid)
    return tr


async def case_custom_resource_apply_and_status_apply(t: Target) -> Transcript:
    """Apply creates the instance with defaults; apply to /status is owned
    separately; a second applier conflicts on spec.size."""
    tr = Transcript()
    _, path = await install(t)
    applied = await t.apply(path + "/w", widget(t, "w", {"size": 2}), "alpha")
    tr.add("apply", applied)
    status = {
        "apiVersion": f"{t.tag}.diff.example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "w"},
        "status": {"phase": "Up"},
    }
    tr.add("status apply", await t.apply(path + "/w/status", status, "beta"))
    tr.add("conflict", await t.apply(path + "/w", widget(t, "w", {"size": 3}), "gamma"))
    return tr
