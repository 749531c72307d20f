"""Error answers a client branches on: the HTTP code, ``Status.reason`` and
``details`` (name, kind, causes with field paths and cause types), for
missing objects and resources, wrong verbs, invalid objects, stale writes
and fields that may not change (api-conventions.md, "Response Status Kind")."""

from __future__ import annotations

import re
from typing import Any

from .harness import JSON_PATCH, MERGE, STRATEGIC, Target, Transcript
from .harness import test_differential as test_differential

Obj = dict[str, Any]


def _cm(name: str, **extra: Any) -> Obj:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, **extra}


async def case_not_found_shapes(t: Target) -> Transcript:
    """404 NotFound names the object and its resource; an unknown resource
    or group is a 404 with no details."""
    tr = Transcript()
    tr.add("missing object", await t.get(t.ns_path("configmaps", "nope")))
    tr.add(
        "missing namespaced object of a group", await t.get(t.ns_path("deployments", "nope", group="apps"))
    )
    tr.add("unknown resource", await t.get(t.ns_path("nosuchthings")))
    tr.add("unknown group", await t.get("/apis/nosuch.example.com/v1/things"))
    tr.add("missing namespace", await t.get("/api/v1/namespaces/diff-no-such-namespace"))
    return tr


async def case_create_in_missing_namespace(t: Target) -> Transcript:
    """NamespaceLifecycle admission: no creating in a namespace that does not exist."""
    tr = Transcript()
    tr.add("create", await t.post("/api/v1/namespaces/diff-no-such-namespace/configmaps", _cm("x")))
    return tr


async def case_method_not_allowed(t: Target) -> Transcript:
    """A verb the path does not serve is 405 MethodNotAllowed."""
    tr = Transcript()
    await t.post(t.ns_path("configmaps"), _cm("x"))
    tr.add("POST to an object", await t.post(t.ns_path("configmaps", "x"), _cm("x")))
    tr.add("PUT to a collection", await t.put(t.ns_path("configmaps"), _cm("x")))
    return tr


async def case_already_exists(t: Target) -> Transcript:
    """A second create of a name is 409 AlreadyExists naming it."""
    tr = Transcript()
    tr.add("first", (await t.post(t.ns_path("configmaps"), _cm("x"))).code)
    tr.add("second", await t.post(t.ns_path("configmaps"), _cm("x")))
    return tr


async def case_invalid_names_and_labels(t: Target) -> Transcript:
    """422 Invalid lists every bad field with its path and cause type."""
    tr = Transcript()
    bad = {
        "metadata": {
            "name": "Bad_Name",
            "labels": {"ok": "fine", "bad key!": "v", "k": "bad value!"},
            "annotations": {"Bad Annotation": "v"},
        }
    }
    tr.add("bad metadata", await t.post(t.ns_path("configmaps"), bad))
    tr.add("no name", await t.post(t.ns_path("configmaps"), {"metadata": {}}))
    tr.add("bad data key", await t.post(t.ns_path("configmaps"), _cm("y", data={"a/b": "v"})))
    return tr


async def case_names_of_64_kib(t: Target) -> Transcript:
    """A name of 64 KiB in the path fits Go's 1 MiB header limit: a GET or DELETE of it
    is 404 NotFound (the embedded server's HTTP parser refused it with a traceback);
    a create with it is 422 naming metadata.name."""
    tr = Transcript()
    long = "x" * 65536
    tr.add("get", await t.get(t.ns_path("configmaps", long)))
    tr.add("delete", await t.delete(t.ns_path("configmaps", long)))
    created = await t.post(t.ns_path("configmaps"), _cm(long))
    tr.add("create", (created.code, created.body.get("reason"), [c.get("field") for c in _causes(created)]))
    return tr


def _causes(answer: Any) -> list[Obj]:
    return list(((answer.body or {}).get("details") or {}).get("causes") or [])


async def case_invalid_pod(t: Target) -> Transcript:
    """Pod validation: required fields, enum values and duplicates."""
    tr = Transcript()
    tr.add("no containers", await t.post(t.ns_path("pods"), {"metadata": {"name": "p"}, "spec": {}}))
    pod = {
        "metadata": {"name": "p"},
        "spec": {
            "restartPolicy": "Sometimes",
            "containers": [{"name": "a", "image": "x"}, {"name": "a", "image": ""}],
        },
    }
    tr.add("bad pod", await t.post(t.ns_path("pods"), pod))
    return tr


async def case_url_and_body_disagree(t: Target) -> Transcript:
    """A body whose name, namespace or kind contradicts the URL is 400 BadRequest."""
    tr = Transcript()
    await t.post(t.ns_path("configmaps"), _cm("x"))
    tr.add("name", await t.put(t.ns_path("configmaps", "x"), _cm("y")))
    other_ns = {**_cm("z"), "metadata": {"name": "z", "namespace": "elsewhere"}}
    tr.add("namespace", await t.post(t.ns_path("configmaps"), other_ns))
    tr.add(
        "kind",
        await t.post(
            t.ns_path("configmaps"), {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}}
        ),
    )
    not_json = await t.post(t.ns_path("configmaps"), "{not json")
    # The message ends with the JSON decoder's own words.
    tr.add(
        "not json",
        [not_json.code, not_json.body["reason"], not_json.body["message"].split("; json parse")[0]],
    )
    return tr


async def case_stale_resource_version_conflicts(t: Target) -> Transcript:
    """Optimistic concurrency: a write carrying an old resourceVersion is 409
    Conflict; one carrying none is unconditional; a delete precondition on
    another uid or version is a 409 too."""
    tr = Transcript()
    created = await t.post(t.ns_path("configmaps"), _cm("x", data={"a": "1"}))
    stale = created.body
    fresh = await t.put(t.ns_path("configmaps", "x"), {**stale, "data": {"a": "2"}})
    tr.add("update", fresh.code)
    tr.add("stale update", await t.put(t.ns_path("configmaps", "x"), {**stale, "data": {"a": "3"}}))
    stale_patch = {"metadata": {"resourceVersion": stale["metadata"]["resourceVersion"]}, "data": {"a": "4"}}
    tr.add("stale patch", await t.patch(t.ns_path("configmaps", "x"), stale_patch, MERGE))
    unconditional = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}, "data": {"a": "5"}}
    tr.add("unconditional", (await t.put(t.ns_path("configmaps", "x"), unconditional)).body["data"])
    wrong_uid = {"preconditions": {"uid": "00000000-0000-0000-0000-000000000000"}}
    tr.add("delete with another uid", await t.delete(t.ns_path("configmaps", "x"), wrong_uid))
    wrong_rv = {"preconditions": {"resourceVersion": stale["metadata"]["resourceVersion"]}}
    old_version = await t.delete(t.ns_path("configmaps", "x"), wrong_rv)
    # The message quotes both versions, the servers' own numbers.
    tr.add(
        "delete with an old version",
        {**old_version.body, "message": re.sub(r"\d+", "N", old_version.body["message"])},
    )
    tr.add("update of a missing object", await t.put(t.ns_path("configmaps", "nope"), _cm("nope")))
    return tr


async def case_immutable_configmap(t: Target) -> Transcript:
    """``immutable: true``: data may not change and immutable may not be unset."""
    tr = Transcript()
    await t.post(t.ns_path("configmaps"), _cm("x", data={"a": "1"}, immutable=True))
    path = t.ns_path("configmaps", "x")
    tr.add("data", await t.patch(path, {"data": {"a": "2"}}, MERGE))
    tr.add("unset", await t.patch(path, {"immutable": False}, MERGE))
    tr.add("labels still change", (await t.patch(path, {"metadata": {"labels": {"l": "v"}}}, MERGE)).code)
    return tr


async def case_service_cluster_ip_is_immutable(t: Target) -> Transcript:
    """A Service's clusterIP may not change once set; becoming ExternalName
    needs an externalName."""
    tr = Transcript()
    svc = {"metadata": {"name": "s"}, "spec": {"ports": [{"port": 80}]}}
    created = await t.post(t.ns_path("services"), svc)
    ip = created.body["spec"]["clusterIP"]
    other = "10.96.0.7" if ip != "10.96.0.7" else "10.96.0.8"
    reply = await t.patch(
        t.ns_path("services", "s"), {"spec": {"clusterIP": other, "clusterIPs": [other]}}, MERGE
    )
    # The message quotes both addresses; they are the servers' own choices.
    tr.add("change", reply.record() | {"body": _without_ips(reply.body, ip, other)})
    type_change = await t.patch(t.ns_path("services", "s"), {"spec": {"type": "ExternalName"}}, MERGE)
    tr.add("to ExternalName without a name", _without_ips(type_change.body, ip, other))
    return tr


def _without_ips(body: Any, *ips: str) -> Any:
    if isinstance(body, dict):
        return {k: _without_ips(v, *ips) for k, v in body.items()}
    if isinstance(body, list):
        return [_without_ips(v, *ips) for v in body]
    if isinstance(body, str):
        for n, ip in enumerate(ips):
            body = body.replace(f'"{ip}"', f'"<ip{n}>"').replace(ip, f"<ip{n}>")
    return body


async def case_job_selector_and_template_are_immutable(t: Target) -> Transcript:
    """A Job's selector (generated from its uid) and completions are fixed."""
    tr = Transcript()
    job = {
        "metadata": {"name": "j"},
        "spec": {
            "suspend": True,
            "template": {
                "spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}
            },
        },
    }
    path = t.ns_path("jobs", group="batch")
    await t.post(path, job)
    selector = {"spec": {"selector": {"matchLabels": {"x": "y"}}}}
    tr.add("selector", await t.patch(path + "/j", selector, MERGE))
    completions = {"spec": {"completions": 3}}
    tr.add("completions", await t.patch(path + "/j", completions, MERGE))
    return tr


async def case_statefulset_forbidden_updates(t: Target) -> Transcript:
    """A StatefulSet's spec is fixed but for replicas, template, update
    strategy and a few more; a selector change also stops matching the template."""
    tr = Transcript()
    ss = {
        "metadata": {"name": "ss"},
        "spec": {
            "replicas": 0,
            "selector": {"matchLabels": {"app": "ss"}},
            "serviceName": "ss",
            "template": {
                "metadata": {"labels": {"app": "ss"}},
                "spec": {"containers": [{"name": "c", "image": "busybox"}]},
            },
        },
    }
    await t.post(t.ns_path("statefulsets", group="apps"), ss)
    path = t.ns_path("statefulsets", "ss", group="apps")
    tr.add("selector", await t.patch(path, {"spec": {"selector": {"matchLabels": {"app": "other"}}}}, MERGE))
    tr.add("serviceName", await t.patch(path, {"spec": {"serviceName": "other"}}, MERGE))
    tr.add("replicas", (await t.patch(path, {"spec": {"replicas": 2}}, MERGE)).code)
    return tr


async def case_patch_errors(t: Target) -> Transcript:
    """Malformed patches are 400; a JSON patch whose test fails or whose path
    is missing is 422; a patch type the resource does not take is 415."""
    tr = Transcript()
    await t.post(t.ns_path("configmaps"), _cm("x", data={"a": "1"}))
    path = t.ns_path("configmaps", "x")
    not_json = await t.patch(path, "{nope", MERGE)
    # The message ends with the JSON decoder's own words.
    tr.add(
        "merge patch not json",
        [not_json.code, not_json.body["reason"], not_json.body["message"].split(": ")[0]],
    )
    tr.add("json patch not a list", await t.patch(path, {"op": "add"}, JSON_PATCH))
    tr.add(
        "json patch test fails",
        await t.patch(path, [{"op": "test", "path": "/data/a", "value": "2"}], JSON_PATCH),
    )
    tr.add("json patch missing path", await t.patch(path, [{"op": "remove", "path": "/data/zz"}], JSON_PATCH))
    tr.add("json patch bad op", await t.patch(path, [{"op": "frobnicate", "path": "/data/a"}], JSON_PATCH))
    tr.add("unknown patch type", await t.patch(path, {"data": {}}, "application/x-nonsense"))
    tr.add("strategic patch changing kind", await t.patch(path, {"kind": "Secret"}, STRATEGIC))
    tr.add("patch of a missing object", await t.patch(t.ns_path("configmaps", "nope"), {"data": {}}, MERGE))
    return tr


async def case_bad_query_parameters(t: Target) -> Transcript:
    """Invalid write options are 422 on the options kind; bad selectors are 400."""
    tr = Transcript()
    tr.add("dryRun", await t.post(t.ns_path("configmaps"), _cm("x"), params={"dryRun": "Some"}))
    tr.add(
        "fieldValidation", await t.post(t.ns_path("configmaps"), _cm("x"), params={"fieldValidation": "Loud"})
    )
    selector = await t.get(t.ns_path("configmaps"), params={"labelSelector": "a in (b"})
    # After its first words, the message is the parser's own description.
    tr.add("label selector", [selector.code, selector.body["reason"], selector.body["message"].split(":")[0]])
    tr.add("field selector", await t.get(t.ns_path("configmaps"), params={"fieldSelector": "spec.nope=1"}))
    tr.add("limit", (await t.get(t.ns_path("configmaps"), params={"limit": "-1"})).code)
    return tr
