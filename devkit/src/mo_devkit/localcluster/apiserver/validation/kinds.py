"""Validation of built-in kinds' content (pkg/apis/*/validation), limited to
the rules a controller writing Pods, workloads and ConfigMaps can break: a
pod spec's containers (present, named once, with an image), its restart
policy, a workload's selector matching its template, config keys, the
keys a typed Secret needs, node ports in their range.

Messages are kube-apiserver's, so kubectl prints the same thing."""

from __future__ import annotations

import re
from typing import Any

from ..errors import field_cause
from ..resources import ResourceType

Obj = dict[str, Any]
Cause = dict[str, str]

_CONFIG_KEY = re.compile(r"^[-._a-zA-Z0-9]+$")
_DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_RESTART_POLICIES = ("Always", "OnFailure", "Never")
_NODE_PORTS = (30000, 32767)  # kube-apiserver's default --service-node-port-range
_SECRET_KEYS = {
    "kubernetes.io/tls": ("tls.crt", "tls.key"),
    "kubernetes.io/dockerconfigjson": (".dockerconfigjson",),
    "kubernetes.io/dockercfg": (".dockercfg",),
}
_WORKLOADS = {("apps", "Deployment"), ("apps", "StatefulSet"), ("apps", "ReplicaSet"), ("apps", "DaemonSet")}
_TEMPLATED = {**dict.fromkeys(_WORKLOADS, "spec.template.spec"), ("batch", "Job"): "spec.template.spec"}


def validate_object(rt: ResourceType, obj: Obj) -> list[Cause]:
    """The content rules of ``obj``'s kind, on create and update."""
    key = (rt.group, rt.kind)
    spec = _dict(obj.get("spec"))
    causes: list[Cause] = []
    if key == ("", "Pod"):
        causes += _pod_spec(spec, "spec", images_required=True)
    elif key in _TEMPLATED:
        causes += _pod_spec(
            _dict(_dict(spec.get("template")).get("spec")), _TEMPLATED[key], images_required=False
        )
        if key in _WORKLOADS:
            causes += selector_matches_template(spec)
    elif key == ("", "Service"):
        for i, port in enumerate(spec.get("ports") or []):
            node_port = port.get("nodePort") if isinstance(port, dict) else None
            if isinstance(node_port, int) and not _NODE_PORTS[0] <= node_port <= _NODE_PORTS[1]:
                causes.append(
                    field_cause(
                        f"spec.ports[{i}].nodePort",
                        f"Invalid value: {node_port}: provided port is not in the valid range. "
                        f"The range of valid ports is {_NODE_PORTS[0]}-{_NODE_PORTS[1]}",
                    )
                )
    if key == ("", "Secret"):
        for required in _SECRET_KEYS.get(str(obj.get("type")), ()):
            if required not in (obj.get("data") or {}):
                causes.append(field_cause(f"data[{required}]", "Required value", "FieldValueRequired"))
    if key in (("", "ConfigMap"), ("", "Secret")):
        for field in ("data", "binaryData") if key == ("", "ConfigMap") else ("data",):
            causes += [
                field_cause(
                    f"{field}[{k}]",
                    f"Invalid value: \"{k}\": a valid config key must consist of alphanumeric characters, '-', '_' "
                    "or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is "
                    "'[-._a-zA-Z0-9]+')",
                )
                for k in obj.get(field) or {}
                if not _CONFIG_KEY.match(k)
            ]
    return causes


def _dict(value: Any) -> Obj:
    """``value`` if it is an object, else an empty one (the schema check reports its type)."""
    return value if isinstance(value, dict) else {}


def selector_matches_template(spec: Obj) -> list[Cause]:
    """A workload's selector must select its own pod template
    (ValidateDeploymentSpec, ValidateStatefulSetSpec...)."""
    selector = _dict(spec.get("selector"))
    labels = _dict(_dict(spec.get("template")).get("metadata")).get("labels") or {}
    if not selector or _selects(selector, labels):
        return []
    return [
        field_cause(
            "spec.template.metadata.labels",
            f"Invalid value: {labels}: `selector` does not match template `labels`",
        )
    ]


def _selects(selector: Obj, labels: dict[str, str]) -> bool:
    if any(labels.get(k) != v for k, v in (selector.get("matchLabels") or {}).items()):
        return False
    for req in selector.get("matchExpressions") or []:
        key, op, values = req.get("key"), req.get("operator"), req.get("values") or []
        present = key in labels
        if (
            (op == "In" and labels.get(key) not in values)
            or (op == "NotIn" and present and labels[key] in values)
            or (op == "Exists" and not present)
            or (op == "DoesNotExist" and present)
        ):
            return False
    return True


def _pod_spec(spec: Obj, path: str, *, images_required: bool) -> list[Cause]:
    causes: list[Cause] = []
    containers = spec.get("containers")
    if not containers:
        causes.append(field_cause(f"{path}.containers", "Required value", "FieldValueRequired"))
    seen: set[str] = set()
    for field in ("initContainers", "containers"):
        for i, c in enumerate(spec.get(field) or []):
            if not isinstance(c, dict):
                continue
            where = f"{path}.{field}[{i}]"
            name = c.get("name") or ""
            if not name:
                causes.append(field_cause(f"{where}.name", "Required value", "FieldValueRequired"))
            elif name in seen:
                causes.append(
                    field_cause(f"{where}.name", f'Duplicate value: "{name}"', "FieldValueDuplicate")
                )
            elif not _DNS1123_LABEL.match(name) or len(name) > 63:
                causes.append(
                    field_cause(
                        f"{where}.name",
                        f'Invalid value: "{name}": a lowercase RFC 1123 label must consist of lower case '
                        "alphanumeric characters or '-', and must start and end with an alphanumeric character "
                        "(e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
                    )
                )
            seen.add(name)
            if images_required and not c.get("image"):
                causes.append(field_cause(f"{where}.image", "Required value", "FieldValueRequired"))
    policy = spec.get("restartPolicy")
    if policy is not None and policy not in _RESTART_POLICIES:
        supported = ", ".join(f'"{p}"' for p in _RESTART_POLICIES)
        causes.append(
            field_cause(
                f"{path}.restartPolicy",
                f'Unsupported value: "{policy}": supported values: {supported}',
                "FieldValueNotSupported",
            )
        )
    return causes
