"""Field sets and their ``fieldsV1`` encoding, after
sigs.k8s.io/structured-merge-diff fieldpath (serialize.go: ``"."`` for an
element that is a member and has children, elements in ``PathElement.Compare``
order: field names, then keys, then values, then indices; serialize-pe.go:
``f:``, ``k:``, ``v:``, ``i:``; element.go ``String``) and the managedFields
examples in https://kubernetes.io/docs/reference/using-api/server-side-apply/.
"""

from __future__ import annotations

import pytest

from mo_devkit.localcluster.apiserver.patching.fieldpath import (
    FieldSet,
    deserialize_element,
    field_element,
    from_fields_v1,
    index_element,
    key_element,
    path_string,
    serialize_element,
    value_element,
)
from mo_devkit.localcluster.apiserver.patching.managed_fields import fields_of
from mo_devkit.localcluster.apiserver.patching.typeinfo import builtin_type_info

F = field_element


def test_element_serialisation() -> None:
    assert serialize_element(F("spec")) == "f:spec"
    assert serialize_element(key_element([("protocol", "TCP"), ("containerPort", 80)])) == (
        'k:{"containerPort":80,"protocol":"TCP"}'
    )
    assert serialize_element(value_element("example.com/a<b")) == 'v:"example.com/a\\u003cb"'
    assert serialize_element(value_element(True)) == "v:true"
    assert serialize_element(index_element(3)) == "i:3"
    for pe in (F("x"), key_element([("name", "a")]), value_element(2.5), index_element(0)):
        assert deserialize_element(serialize_element(pe)) == pe


def test_element_deserialisation_edge_cases() -> None:
    assert deserialize_element("x:whatever") is None  # unknown kinds are skipped
    assert deserialize_element('k:{"port":80.0}') == key_element([("port", 80)])
    with pytest.raises(ValueError):
        deserialize_element("f")


def test_path_strings_read_like_kube_apiserver() -> None:
    path = (F("spec"), F("containers"), key_element([("name", "main")]), F("ports"))
    assert path_string(path) == '.spec.containers[name="main"].ports'
    assert path_string((F("p"), key_element([("protocol", "TCP"), ("containerPort", 80)]))) == (
        '.p[containerPort=80,protocol="TCP"]'
    )
    assert path_string((F("metadata"), F("finalizers"), value_element("a"))) == '.metadata.finalizers[="a"]'
    assert path_string((F("a"), index_element(0))) == ".a[0]"


def test_fields_v1_of_a_deployment_apply() -> None:
    """What kube-apiserver stores for ``kubectl apply --server-side`` of an
    nginx Deployment: list items are members (``"."``) of their own, struct
    fields are not, container ports are keyed with the TCP default."""
    obj = {
        "metadata": {"labels": {"app": "nginx"}},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": "nginx"}},
            "template": {
                "metadata": {"labels": {"app": "nginx"}},
                "spec": {
                    "containers": [{"name": "nginx", "image": "nginx", "ports": [{"containerPort": 80}]}]
                },
            },
        },
    }
    fields = fields_of(obj, builtin_type_info("apps", "Deployment"))
    assert fields.to_fields_v1() == {
        "f:metadata": {"f:labels": {"f:app": {}}},
        "f:spec": {
            "f:replicas": {},
            "f:selector": {},
            "f:template": {
                "f:metadata": {"f:labels": {"f:app": {}}},
                "f:spec": {
                    "f:containers": {
                        'k:{"name":"nginx"}': {
                            ".": {},
                            "f:image": {},
                            "f:name": {},
                            "f:ports": {
                                'k:{"containerPort":80,"protocol":"TCP"}': {".": {}, "f:containerPort": {}}
                            },
                        }
                    }
                },
            },
        },
    }
    assert from_fields_v1(fields.to_fields_v1()) == fields


def test_encoding_order_and_membership() -> None:
    fs = FieldSet.of(
        (F("b"),),
        (F("a"), index_element(1)),
        (F("a"), value_element("x")),
        (F("a"), key_element([("k", 1)])),
        (F("a"), F("z")),
        (F("list"), key_element([("name", "n")])),
        (F("list"), key_element([("name", "n")]), F("v")),
    )
    encoded = fs.to_fields_v1()
    assert list(encoded) == ["f:a", "f:b", "f:list"]
    assert list(encoded["f:a"]) == ["f:z", 'k:{"k":1}', 'v:"x"', "i:1"]
    assert encoded["f:list"] == {'k:{"name":"n"}': {".": {}, "f:v": {}}}
    assert len(fs) == 7
    assert fs.has((F("list"), key_element([("name", "n")])))
    assert not fs.has((F("list"),))


def test_set_operations() -> None:
    a = FieldSet.of((F("spec"), F("replicas")), (F("spec"), F("paused")), (F("spec"),))
    b = FieldSet.of((F("spec"), F("replicas")), (F("status"),))
    assert a.intersection(b) == FieldSet.of((F("spec"), F("replicas")))
    assert a.union(b) == FieldSet.of(
        (F("spec"), F("replicas")), (F("spec"), F("paused")), (F("spec"),), (F("status"),)
    )
    # A member of the other set does not take away the paths below it.
    assert a.difference(FieldSet.of((F("spec"),))) == FieldSet.of(
        (F("spec"), F("replicas")), (F("spec"), F("paused"))
    )
    assert a.difference(a).is_empty()
    assert list(a.paths()) == [(F("spec"),), (F("spec"), F("paused")), (F("spec"), F("replicas"))]


def test_decoding_rejects_malformed_fields() -> None:
    with pytest.raises(ValueError):
        from_fields_v1({"f:a": "not an object"})
    with pytest.raises(ValueError):
        from_fields_v1(["f:a"])
    assert from_fields_v1({"f:a": {".": {}, "f:b": {}}, "f:c": {"x:unknown": {}}}) == FieldSet.of(
        (F("a"),), (F("a"), F("b")), (F("c"),)
    )
