"""The protobuf body decoder on messages encoded by hand here, field by field,
from the generated.proto files of Kubernetes v1.37 (k8s.io/api core/v1,
apps/v1, coordination/v1, autoscaling/v1, admissionregistration/v1;
k8s.io/apimachinery pkg/apis/meta/v1, pkg/runtime, pkg/util/intstr,
pkg/api/resource; k8s.io/apiextensions-apiserver pkg/apis/apiextensions/v1;
the field numbers are quoted in comments), for what kubectl's generators never
send: times, quantities, int-or-strings, packed numbers, doubles, raw JSON,
inlined structs, merged and unknown fields, and malformed bodies.

The JSON expected is what Go's encoding/json writes for the struct
kube-apiserver decodes (types.go ``json`` tags; metav1.Time and MicroTime
MarshalJSON; intstr, Quantity, RawExtension, apiextensions marshal.go), minus
nulls and zero ``omitempty`` structs.
"""

from __future__ import annotations

import struct
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mo_devkit.localcluster.apiserver.builtins import BUILTIN_RESOURCE_TYPES
from mo_devkit.localcluster.apiserver.protobuf import schema as protobuf_schema
from mo_devkit.localcluster.apiserver.protobuf.codec import DecodeError, decode


# ------------------------------------------------------------- an encoder
def varint(n: int) -> bytes:
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        low, n = n & 0x7F, n >> 7
        out.append(low | (0x80 if n else 0))
        if not n:
            return bytes(out)


def vi(number: int, n: int) -> bytes:
    """A varint field (int32, int64, bool)."""
    return varint(number << 3) + varint(n)


def ld(number: int, payload: bytes | str) -> bytes:
    """A length-delimited field (string, bytes, message, packed numbers)."""
    data = payload.encode() if isinstance(payload, str) else payload
    return varint(number << 3 | 2) + varint(len(data)) + data


def msg(number: int, *parts: bytes) -> bytes:
    return ld(number, b"".join(parts))


def f64(number: int, x: float) -> bytes:
    return varint(number << 3 | 1) + struct.pack("<d", x)


def entry(number: int, key: str, value: bytes | str) -> bytes:
    """One entry of a map field: {key = 1, value = 2}."""
    return msg(number, ld(1, key), ld(2, value))


def body(api_version: str, kind: str, *parts: bytes, unknown: bytes = b"") -> bytes:
    """``k8s\\0`` + runtime.Unknown{typeMeta = 1 {apiVersion = 1, kind = 2}, raw = 2}."""
    return b"k8s\x00" + msg(1, ld(1, api_version), ld(2, kind)) + ld(2, b"".join(parts)) + unknown


def meta(name: str, *parts: bytes) -> bytes:
    """ObjectMeta as field 1 of a kind: name = 1."""
    return msg(1, ld(1, name), *parts)


# ------------------------------------------------------------------ tests
def test_configmap_maps_bytes_and_a_false_pointer() -> None:
    # ConfigMap: metadata = 1, data = 2 (map<string,string>), binaryData = 3
    # (map<string,bytes>), immutable = 4 (*bool); ObjectMeta labels = 11.
    obj = decode(
        body(
            "v1",
            "ConfigMap",
            meta("cm", entry(11, "app", "web"), entry(11, "tier", "")),
            entry(2, "a", "1"),
            entry(2, "a", "2"),  # a repeated key: the last one wins
            entry(3, "bin", b"\x00\xff"),
            vi(4, 0),
        )
    )
    assert obj == {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "cm", "labels": {"app": "web", "tier": ""}},
        "data": {"a": "2"},
        "binaryData": {"bin": "AP8="},
        "immutable": False,
    }


def test_deployment_pointers_keep_zero_and_omitempty_drops_it() -> None:
    # DeploymentSpec: replicas = 1 (*int32), strategy = 4, minReadySeconds = 5
    # (int32 omitempty), revisionHistoryLimit = 6 (*int32), paused = 7 (bool
    # omitempty); DeploymentStrategy: type = 1, rollingUpdate = 2;
    # RollingUpdateDeployment: maxUnavailable = 1, maxSurge = 2 (*IntOrString);
    # IntOrString: type = 1 (0 int, 1 string), intVal = 2, strVal = 3.
    spec = msg(
        2,
        vi(1, 0),
        msg(
            4,
            ld(1, "RollingUpdate"),
            msg(2, msg(1, vi(1, 1), vi(2, 0), ld(3, "25%")), msg(2, vi(1, 0), vi(2, 0))),
        ),
        vi(5, 0),
        vi(6, 0),
        vi(7, 0),
    )
    obj = decode(body("apps/v1", "Deployment", meta("d"), spec))
    assert obj["spec"] == {
        "template": {},  # json:"template", no omitempty: Go writes the zero struct
        "replicas": 0,
        "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": 0}},
        "revisionHistoryLimit": 0,
    }


def test_pod_quantities_inline_structs_packed_and_negative_numbers() -> None:
    # PodSpec: volumes = 1, containers = 2, terminationGracePeriodSeconds = 4
    # (*int64), securityContext = 14, priority = 25 (*int32).
    # Volume: name = 1, volumeSource = 2 (embedded, json:""); VolumeSource:
    # emptyDir = 2, configMap = 19; ConfigMapVolumeSource: localObjectReference
    # = 1 (embedded) {name = 1}, defaultMode = 3 (*int32).
    # Container: name = 1, image = 2, env = 7, resources = 8, livenessProbe = 10;
    # EnvVar: name = 1 (json "name"), value = 2 (omitempty);
    # ResourceRequirements: limits = 1 (map<string, Quantity{string = 1}>);
    # Probe: handler = 1 (embedded ProbeHandler), periodSeconds = 4;
    # ProbeHandler: httpGet = 2; HTTPGetAction: path = 1, port = 2.
    # PodSecurityContext: runAsUser = 2, supplementalGroups = 4 (repeated int64).
    container = msg(
        2,
        ld(1, "main"),
        ld(2, "busybox"),
        msg(7, ld(1, "EMPTY"), ld(2, "")),
        msg(8, msg(1, ld(1, "cpu"), msg(2, ld(1, "500m"))), msg(1, ld(1, "memory"), msg(2, ld(1, "1Gi")))),
        msg(10, msg(1, msg(2, ld(1, "/healthz"), msg(2, vi(1, 1), ld(3, "http")))), vi(4, 5)),
    )
    volumes = msg(1, ld(1, "cfg"), msg(2, msg(19, msg(1, ld(1, "settings")), vi(3, 0o644)))) + msg(
        1, ld(1, "scratch"), msg(2, msg(2))
    )
    security = msg(14, vi(2, 1000), ld(4, varint(1) + varint(2)), vi(4, 3))  # packed, then unpacked
    spec = msg(2, volumes, container, vi(4, 0), security, vi(25, -5))
    obj = decode(body("v1", "Pod", meta("p"), spec))
    assert obj["spec"] == {
        "volumes": [
            {"name": "cfg", "configMap": {"name": "settings", "defaultMode": 420}},
            {"name": "scratch", "emptyDir": {}},
        ],
        "containers": [
            {
                "name": "main",
                "image": "busybox",
                "env": [{"name": "EMPTY"}],
                "resources": {"limits": {"cpu": "500m", "memory": "1Gi"}},
                "livenessProbe": {"httpGet": {"path": "/healthz", "port": "http"}, "periodSeconds": 5},
            }
        ],
        "terminationGracePeriodSeconds": 0,
        "securityContext": {"runAsUser": 1000, "supplementalGroups": [1, 2, 3]},
        "priority": -5,
    }


def test_times_and_micro_times() -> None:
    # core/v1 Event: firstTimestamp = 6, lastTimestamp = 7 (Time), count = 8,
    # eventTime = 10 (MicroTime); Time/MicroTime: seconds = 1, nanos = 2.
    # Go: Time keeps whole seconds (time_proto.go drops nanos), MicroTime
    # truncates to microseconds; an empty Time is the zero time, null in JSON.
    obj = decode(
        body(
            "v1",
            "Event",
            meta("e"),
            ld(6, b""),
            msg(7, vi(1, 1700000000), vi(2, 999)),
            vi(8, 3),
            msg(10, vi(1, 1700000000), vi(2, 123456789)),
        )
    )
    assert obj == {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": "e"},
        # No omitempty on these Go fields: kube-apiserver shows them empty too.
        "involvedObject": {},
        "reportingComponent": "",
        "reportingInstance": "",
        "lastTimestamp": "2023-11-14T22:13:20Z",
        "count": 3,
        "eventTime": "2023-11-14T22:13:20.123456Z",
    }


def test_times_before_year_1000_keep_four_digits() -> None:
    # Go formats the year with four digits; the zero time (year 1) is null.
    year_5 = -62009366400  # 0005-01-01T00:00:00Z
    obj = decode(body("v1", "Event", meta("e"), msg(6, vi(1, year_5)), msg(7, vi(1, -62135596800))))
    assert obj["firstTimestamp"] == "0005-01-01T00:00:00Z" and "lastTimestamp" not in obj


def test_lease_micro_time_and_zero_pointer() -> None:
    # LeaseSpec: holderIdentity = 1 (*string), leaseDurationSeconds = 2
    # (*int32), renewTime = 4 (*MicroTime).
    obj = decode(
        body(
            "coordination.k8s.io/v1",
            "Lease",
            meta("l"),
            msg(2, ld(1, ""), vi(2, 0), msg(4, vi(1, 0), vi(2, 1000))),
        )
    )
    assert obj["spec"] == {
        "holderIdentity": "",
        "leaseDurationSeconds": 0,
        "renewTime": "1970-01-01T00:00:00.000001Z",
    }


def test_controller_revision_raw_extension_is_json() -> None:
    # ControllerRevision: data = 2 (RawExtension{raw = 1}), revision = 3 (int64).
    obj = decode(
        body("apps/v1", "ControllerRevision", meta("r"), msg(2, ld(1, '{"spec":{"a":[1,2]}}')), vi(3, 2**40))
    )
    assert obj["data"] == {"spec": {"a": [1, 2]}} and obj["revision"] == 2**40


def test_crd_schema_names_doubles_and_either_or_types() -> None:
    # CustomResourceDefinitionSpec: group = 1, names = 3 {plural = 1, kind = 4},
    # scope = 4, versions = 7; CustomResourceDefinitionVersion: name = 1,
    # served = 2 and storage = 3 (bool, no omitempty), schema = 4
    # {openAPIV3Schema = 1}; JSONSchemaProps: ref = 3 (json "$ref"), type = 5,
    # default = 8 (JSON{raw = 1}), maximum = 9 and minimum = 11 (double),
    # enum = 20, items = 24 (OrArray{schema = 1, jSONSchemas = 2}),
    # properties = 29, additionalProperties = 30 (OrBool{allows = 1, schema = 2}),
    # xKubernetesPreserveUnknownFields = 38.
    replicas = msg(2, ld(5, "integer"), f64(9, 10.0), f64(11, 0.5), msg(8, ld(1, "1")))
    size = msg(2, ld(5, "string"), msg(20, ld(1, '"S"')), msg(20, ld(1, '"M"')))
    tags = msg(2, ld(5, "array"), msg(24, msg(1, ld(5, "string"))))
    anything = msg(2, vi(38, 1), msg(30, vi(1, 0)))
    ref = msg(2, ld(3, "#/definitions/x"))
    schema = msg(
        1,
        ld(5, "object"),
        msg(29, ld(1, "replicas"), replicas),
        msg(29, ld(1, "size"), size),
        msg(29, ld(1, "tags"), tags),
        msg(29, ld(1, "anything"), anything),
        msg(29, ld(1, "ref"), ref),
        msg(30, vi(1, 1), msg(2, ld(5, "string"))),
    )
    version = msg(7, ld(1, "v1"), vi(2, 1), vi(3, 0), msg(4, schema))
    spec = msg(
        2, ld(1, "example.com"), msg(3, ld(1, "widgets"), ld(4, "Widget")), ld(4, "Namespaced"), version
    )
    obj = decode(
        body("apiextensions.k8s.io/v1", "CustomResourceDefinition", meta("widgets.example.com"), spec)
    )
    assert obj["spec"] == {
        "group": "example.com",
        "names": {"plural": "widgets", "kind": "Widget"},
        "scope": "Namespaced",
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": False,
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "properties": {
                            "replicas": {"type": "integer", "default": 1, "maximum": 10, "minimum": 0.5},
                            "size": {"type": "string", "enum": ["S", "M"]},
                            "tags": {"type": "array", "items": {"type": "string"}},
                            "anything": {
                                "x-kubernetes-preserve-unknown-fields": True,
                                "additionalProperties": False,
                            },
                            "ref": {"$ref": "#/definitions/x"},
                        },
                        "additionalProperties": {"type": "string"},
                    }
                },
            }
        ],
    }


def test_webhook_ca_bundle_and_inlined_rule() -> None:
    # MutatingWebhookConfiguration: Webhooks = 2 (json "webhooks");
    # MutatingWebhook: name = 1, clientConfig = 2 {url = 3, caBundle = 2 (bytes)},
    # rules = 3; RuleWithOperations: operations = 1, rule = 2 (embedded Rule:
    # apiGroups = 1, apiVersions = 2, resources = 3); timeoutSeconds = 7 (*int32).
    hook = msg(
        2,
        ld(1, "a.example.com"),
        msg(2, ld(3, "https://hook"), ld(2, b"PEM")),
        msg(3, ld(1, "CREATE"), msg(2, ld(1, "apps"), ld(2, "v1"), ld(3, "deployments"))),
        vi(7, 5),
    )
    obj = decode(body("admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration", meta("m"), hook))
    assert obj["webhooks"] == [
        {
            "name": "a.example.com",
            "clientConfig": {"url": "https://hook", "caBundle": "UEVN"},
            "rules": [
                {
                    "operations": ["CREATE"],
                    "apiGroups": ["apps"],
                    "apiVersions": ["v1"],
                    "resources": ["deployments"],
                }
            ],
            "timeoutSeconds": 5,
        }
    ]


def test_repeated_messages_merge_and_unknown_fields_are_skipped() -> None:
    # A singular message given twice is merged (protobuf's rule); fields a
    # newer client knows are skipped, as gogo-protobuf's Unmarshal skips them.
    obj = decode(
        body(
            "v1",
            "ConfigMap",
            meta("cm"),
            msg(1, entry(11, "a", "b")),
            vi(99, 7),
            f64(98, 1.0),
            ld(97, b"\x00"),
            varint(96 << 3 | 5) + b"\x00\x00\x00\x00",
        )
    )
    assert obj == {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm", "labels": {"a": "b"}}}


@pytest.mark.parametrize("api_version", ["meta.k8s.io/v1", "v1", "apps/v1"])
def test_delete_options_under_any_group_version(api_version: str) -> None:
    # DeleteOptions: gracePeriodSeconds = 1 (*int64), preconditions = 2
    # {uid = 1 (*string)}, propagationPolicy = 4, dryRun = 5.
    obj = decode(
        body(api_version, "DeleteOptions", vi(1, 0), msg(2, ld(1, "u-1")), ld(4, "Foreground"), ld(5, "All"))
    )
    assert obj == {
        "apiVersion": api_version,
        "kind": "DeleteOptions",
        "gracePeriodSeconds": 0,
        "preconditions": {"uid": "u-1"},
        "propagationPolicy": "Foreground",
        "dryRun": ["All"],
    }


def test_scale_subresource_body() -> None:
    # autoscaling/v1 Scale: spec = 2 {replicas = 1 (int32, omitempty)}.
    assert decode(body("autoscaling/v1", "Scale", meta("d"), msg(2, vi(1, 3))))["spec"] == {"replicas": 3}
    assert "spec" not in decode(body("autoscaling/v1", "Scale", meta("d"), msg(2, vi(1, 0))))


def test_int32_keeps_the_low_32_bits_of_a_ten_byte_varint() -> None:
    # Go writes a negative int32 as the 64-bit two's complement (10 bytes).
    assert varint(-5) == b"\xfb\xff\xff\xff\xff\xff\xff\xff\xff\x01"
    obj = decode(body("v1", "Pod", meta("p"), msg(2, vi(25, (1 << 40) - 5))))
    assert obj["spec"] == {"priority": -5}


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b"", "does not appear to be a protobuf message"),
        (b'{"kind":"ConfigMap"}', "does not appear to be a protobuf message"),
        (b"k8s\x00\x0a", "unexpected EOF"),
        (b"k8s\x00" + b"\xff" * 11, "integer overflow"),
        (b"k8s\x00\x00", "illegal tag 0"),
        (body("v1", "Widget"), 'no kind "Widget" is registered for version "v1"'),
        (body("example.com/v1", "Widget"), 'no kind "Widget" is registered for version "example.com/v1"'),
        (body("v1", "ConfigMap", meta("cm"), unknown=ld(3, "gzip")), "unsupported content encoding"),
        (body("v1", "ConfigMap", vi(1, 5)), "wrong wireType = 0 for field metadata"),
        (body("v1", "ConfigMap", msg(1, vi(1, 5))), "wrong wireType = 0 for field name"),
        (body("v1", "ConfigMap", msg(1, varint(1 << 3 | 3))), "illegal wireType 3"),
        (body("v1", "ConfigMap", ld(1, b"\x0a\x05ab")), "unexpected EOF"),
        (body("v1", "Service", msg(2, msg(1, msg(4, vi(1, 2))))), "impossible IntOrString.Type"),
        (body("v1", "Pod", msg(2, msg(2, msg(8, entry(1, "cpu", ld(1, "lots")))))), "quantities must match"),
        (body("apps/v1", "ControllerRevision", msg(2, ld(1, "{not json"))), "is not JSON"),
        (body("coordination.k8s.io/v1", "Lease", msg(2, msg(3, vi(1, 10**15)))), "year outside of range"),
    ],
)
def test_malformed_bodies_raise_decode_errors(data: bytes, message: str) -> None:
    with pytest.raises(DecodeError) as err:
        decode(data)
    assert message in str(err.value)


def test_decode_errors_read_like_kube_apiservers() -> None:
    with pytest.raises(DecodeError) as err:
        decode(body("v1", "ConfigMap", vi(1, 5)))
    assert err.value.describe("ConfigMap") == (
        'ConfigMap in version "v1" cannot be handled as a ConfigMap: proto: wrong wireType = 0 for field metadata'
    )
    with pytest.raises(DecodeError) as err:
        decode(b"{}")
    assert err.value.describe("Secret").startswith(
        "the object provided is unrecognized (must be of type Secret)"
    )


def test_nan_cannot_be_written_as_json() -> None:
    schema = msg(2, msg(7, msg(4, msg(1, f64(9, float("nan"))))))
    with pytest.raises(DecodeError, match="unsupported value"):
        decode(body("apiextensions.k8s.io/v1", "CustomResourceDefinition", schema))


def test_deep_nesting_is_refused_not_a_crash() -> None:
    # JSONSchemaProps.not = 28, nested far beyond any real schema.
    props = b""
    for _ in range(500):
        props = msg(28, props)
    crd = msg(2, msg(7, msg(4, msg(1, props))))
    with pytest.raises(DecodeError, match="max depth"):
        decode(body("apiextensions.k8s.io/v1", "CustomResourceDefinition", crd))


@settings(max_examples=300, deadline=None)
@given(kind=st.sampled_from(sorted(protobuf_schema.KINDS)), raw=st.binary(max_size=200))
def test_arbitrary_bytes_decode_or_fail_cleanly(kind: tuple[str, str], raw: bytes) -> None:
    try:
        obj: Any = decode(body(kind[0], kind[1], raw))
    except DecodeError:
        return
    assert obj["apiVersion"] == kind[0] and obj["kind"] == kind[1]


def test_every_served_kind_has_a_message_and_every_reference_resolves() -> None:
    served = {(rt.api_version, rt.kind) for rt in BUILTIN_RESOURCE_TYPES}
    assert served <= set(protobuf_schema.KINDS), "re-run tools/gen_protobuf_schema.py"
    for name, fields in protobuf_schema.MESSAGES.items():
        for number, json_name, label, type_, mode in fields:
            assert label in ("", "rep", "map") and mode in ("ptr", "omit", "keep", "inline", "skip"), name
            assert type_ in protobuf_schema.MESSAGES or type_ in (
                "string",
                "bytes",
                "bool",
                "int32",
                "int64",
                "uint32",
                "uint64",
                "double",
                "float",
            ), (name, number, json_name)
