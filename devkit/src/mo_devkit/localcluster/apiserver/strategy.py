"""Per-kind write rules of kube-apiserver (the registry "strategies"): what a
create resets, which changes bump metadata.generation, how the main resource
and the status subresource split an object, and which updates are forbidden.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from mo_operator.kube.meta.quantity import quantity_value

from .errors import field_cause
from .resources import ResourceType

Obj = dict[str, Any]

# Built-in kinds whose strategy sets metadata.generation (custom resources always do).
_WITH_GENERATION = {
    ("apps", "Deployment"),
    ("apps", "StatefulSet"),
    ("apps", "ReplicaSet"),
    ("apps", "DaemonSet"),
    ("batch", "Job"),
    ("batch", "CronJob"),
    ("policy", "PodDisruptionBudget"),
    ("apiextensions.k8s.io", "CustomResourceDefinition"),
    ("admissionregistration.k8s.io", "MutatingWebhookConfiguration"),
    ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration"),
}

# Top-level fields that are not "spec" for generation purposes.
_NON_SPEC = {"metadata", "status", "apiVersion", "kind"}


def has_generation(rt: ResourceType) -> bool:
    return rt.is_custom or (rt.group, rt.kind) in _WITH_GENERATION


def spec_changed(rt: ResourceType, old: Obj, new: Obj) -> bool:
    """Whether an update bumps metadata.generation.

    Custom resources: any change outside metadata (and outside status when the
    status subresource is on). Deployments also bump on annotation changes
    (pkg/registry/apps/deployment/strategy.go).
    """
    if rt.is_custom and not rt.status_subresource:
        keys = (set(old) | set(new)) - {"metadata", "apiVersion", "kind"}
    else:
        keys = (set(old) | set(new)) - _NON_SPEC
    if any(old.get(k) != new.get(k) for k in keys):
        return True
    if (rt.group, rt.kind) == ("apps", "Deployment"):
        return (old["metadata"].get("annotations") or {}) != (new["metadata"].get("annotations") or {})
    return False


def separates_status(rt: ResourceType) -> bool:
    """Kinds whose main resource ignores status writes (status subresource)."""
    return rt.status_subresource


def initial_status(rt: ResourceType, obj: Obj) -> None:
    """What PrepareForCreate puts in status."""
    if not rt.status_subresource:
        return
    key = (rt.group, rt.kind)
    if key == ("", "Pod"):
        obj["status"] = {"phase": "Pending", "qosClass": _qos_class(obj.get("spec") or {})}
    elif key == ("", "Namespace"):
        obj["status"] = {"phase": "Active"}
        obj.setdefault("spec", {})["finalizers"] = ["kubernetes"]  # on create only, as PrepareForCreate
    elif key == ("", "PersistentVolumeClaim") or key == ("", "PersistentVolume"):
        obj["status"] = {"phase": "Pending"}
    elif key == ("", "Service"):
        obj["status"] = {"loadBalancer": {}}
    elif rt.is_custom:
        obj.pop("status", None)
    else:
        obj["status"] = {}


def _qos_class(spec: Obj) -> str:
    containers = list(spec.get("containers") or [])
    requests_seen = limits_seen = False
    guaranteed = bool(containers)
    for c in containers:
        res = c.get("resources") or {}
        req, lim = res.get("requests") or {}, res.get("limits") or {}
        requests_seen |= bool(req)
        limits_seen |= bool(lim)
        for r in ("cpu", "memory"):
            if r not in lim or (r in req and req[r] != lim[r]):
                guaranteed = False
    if guaranteed:
        return "Guaranteed"
    return "Burstable" if (requests_seen or limits_seen) else "BestEffort"


# Built-in kinds whose status strategy keeps the metadata the write sends, but
# for the fields named here, which it resets to the stored object's: what their
# PrepareForUpdate does (pkg/registry/apps/deployment/strategy.go,
# deploymentStatusStrategy: spec and labels reset; kube-controller-manager's
# deployment controller writes deployment.kubernetes.io/revision this way).
# Other kinds, custom resources among them, keep only status from a /status write.
_STATUS_KEEPS_METADATA_BUT: dict[tuple[str, str], tuple[str, ...]] = {
    ("apps", "Deployment"): ("labels",),
}


def merge_for_subresource(rt: ResourceType, old: Obj, new: Obj, subresource: str) -> Obj:
    """The object to store after a write to the main resource or to /status.

    Main resource: status is kept from the old object. /status: everything but
    status (and managedFields, which the write recomputed) is kept from old,
    except the metadata a kind's status strategy lets the write change.
    """
    reset = _STATUS_KEEPS_METADATA_BUT.get((rt.group, rt.kind))
    if subresource == "status" and reset is not None:
        merged = {k: v for k, v in old.items() if k != "status"}
        merged["metadata"] = dict(new["metadata"])
        for key in reset:
            if key in old["metadata"]:
                merged["metadata"][key] = old["metadata"][key]
            else:
                merged["metadata"].pop(key, None)
        if "status" in new:
            merged["status"] = new["status"]
        return merged
    if subresource == "status":
        merged = dict(old)
        merged["metadata"] = dict(old["metadata"])
        if "managedFields" in new.get("metadata", {}):
            merged["metadata"]["managedFields"] = new["metadata"]["managedFields"]
        if "status" in new:
            merged["status"] = new["status"]
        else:
            merged.pop("status", None)
        return merged
    if separates_status(rt):
        if "status" in old:
            new["status"] = old["status"]
        else:
            new.pop("status", None)
    return new


# --------------------------------------------------------------- validation
_DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_DNS1035_LABEL = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
_QUALIFIED_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")


def _name_rule(rt: ResourceType) -> tuple[re.Pattern[str], int, str]:
    if (rt.group, rt.kind) in (("", "Namespace"),):
        return (
            _DNS1123_LABEL,
            63,
            (
                "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and "
                "end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
                "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
            ),
        )
    if (rt.group, rt.kind) == ("", "Service"):
        return (
            _DNS1035_LABEL,
            63,
            (
                "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic "
                "character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for "
                "validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"
            ),
        )
    return (
        _DNS1123_SUBDOMAIN,
        253,
        (
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must "
            "start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
            "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
        ),
    )


_NAME_PART = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
_LABEL_VALUE_MESSAGE = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must "
    "start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used "
    "for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)


def _qualified_name(key: str) -> bool:
    """A label or annotation key: an optional DNS subdomain prefix and a name part."""
    prefix, _, local = key.rpartition("/")
    return (
        bool(_QUALIFIED_NAME.match(local))
        and len(local) <= 63
        and (not prefix or bool(_DNS1123_SUBDOMAIN.match(prefix)))
    )


def validate_metadata(rt: ResourceType, obj: Obj) -> list[dict[str, str]]:
    meta = obj.get("metadata") or {}
    causes: list[dict[str, str]] = []
    name = meta.get("name", "")
    if not name:
        causes.append(
            field_cause(
                "metadata.name", "Required value: name or generateName is required", "FieldValueRequired"
            )
        )
    else:
        pattern, max_len, msg = _name_rule(rt)
        if len(name) > max_len:
            causes.append(
                field_cause(
                    "metadata.name", f'Invalid value: "{name}": must be no more than {max_len} characters'
                )
            )
        elif not pattern.match(name) and rt.kind not in (
            "Role",
            "ClusterRole",
            "RoleBinding",
            "ClusterRoleBinding",
        ):
            causes.append(field_cause("metadata.name", f'Invalid value: "{name}": {msg}'))
    for key, value in (meta.get("labels") or {}).items():
        if not _qualified_name(key):
            causes.append(field_cause("metadata.labels", f'Invalid value: "{key}": {_NAME_PART}'))
        if not isinstance(value, str) or len(value) > 63 or not _LABEL_VALUE.match(value):
            causes.append(field_cause("metadata.labels", f'Invalid value: "{value}": {_LABEL_VALUE_MESSAGE}'))
    for key in meta.get("annotations") or {}:
        if not _qualified_name(key):
            causes.append(field_cause("metadata.annotations", f'Invalid value: "{key}": {_NAME_PART}'))
    for ref in meta.get("ownerReferences") or []:
        for f in ("apiVersion", "kind", "name", "uid"):
            if not ref.get(f):
                causes.append(
                    field_cause(
                        f"metadata.ownerReferences.{f}",
                        'Invalid value: "": ' + f + " must not be empty",
                        "FieldValueInvalid",
                    )
                )
    controllers = [r for r in meta.get("ownerReferences") or [] if r.get("controller")]
    if len(controllers) > 1:
        causes.append(
            field_cause(
                "metadata.ownerReferences",
                "Invalid value: only one reference can have Controller set to true",
            )
        )
    return causes


_STS_MUTABLE = {
    "replicas",
    "ordinals",
    "template",
    "updateStrategy",
    "persistentVolumeClaimRetentionPolicy",
    "minReadySeconds",
}


def _spec(obj: Obj) -> Obj:
    return obj.get("spec") or {}


def _statefulset_update(old: Obj, new: Obj) -> list[dict[str, str]]:
    def fixed(spec: Obj) -> Obj:
        return {k: v for k, v in spec.items() if k not in _STS_MUTABLE}

    if fixed(_spec(old)) == fixed(_spec(new)):
        return []
    return [
        field_cause(
            "spec",
            "Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
            "FieldValueForbidden",
        )
    ]


def _selector_update(old: Obj, new: Obj) -> list[dict[str, str]]:
    selector = _spec(new).get("selector")
    if _spec(old).get("selector") == selector:
        return []
    return [field_cause("spec.selector", f"Invalid value: {selector}: field is immutable")]


def _secret_update(old: Obj, new: Obj) -> list[dict[str, str]]:
    """A Secret keeps its type, and its data like a ConfigMap."""
    causes: list[dict[str, str]] = []
    if old.get("type") != new.get("type"):
        causes.append(field_cause("type", f'Invalid value: "{new.get("type")}": field is immutable'))
    return causes + _data_update(old, new)


def _data_update(old: Obj, new: Obj) -> list[dict[str, str]]:
    """ConfigMaps and Secrets: an ``immutable`` one keeps its data and stays immutable."""
    causes: list[dict[str, str]] = []
    if not old.get("immutable"):
        return causes
    forbidden = "Forbidden: field is immutable when `immutable` is set"
    causes += [
        field_cause(f, forbidden, "FieldValueForbidden")
        for f in ("data", "binaryData", "stringData")
        if old.get(f) != new.get(f)
    ]
    if not new.get("immutable"):
        causes.append(field_cause("immutable", forbidden, "FieldValueForbidden"))
    return causes


def _claim_update(old: Obj, new: Obj) -> list[dict[str, str]]:
    """A claim's spec is immutable but for a bound claim's storage request,
    which may only grow."""
    os_, ns_ = _spec(old), _spec(new)
    bound = (old.get("status") or {}).get("phase") == "Bound"

    def strip(s: Obj) -> Obj:
        s = dict(s)
        if bound:  # only a bound claim's storage request may change
            resources = dict(s.get("resources") or {})
            resources["requests"] = {
                k: v for k, v in (resources.get("requests") or {}).items() if k != "storage"
            }
            s["resources"] = resources
        if os_.get("volumeName") in (None, ""):
            s.pop("volumeName", None)
        if "storageClassName" not in os_:
            # KEP-3333 (GA in 1.28): the PV controller may assign the default
            # class retroactively to a claim created without one (nil, not "").
            s.pop("storageClassName", None)
        return s

    causes: list[dict[str, str]] = []
    if strip(os_) != strip(ns_):
        causes.append(
            field_cause(
                "spec",
                "Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims",
                "FieldValueForbidden",
            )
        )
    if storage_request(ns_) < storage_request(os_):
        causes.append(
            field_cause(
                "spec.resources.requests.storage",
                "Forbidden: field can not be less than previous value",
                "FieldValueForbidden",
            )
        )
    return causes


def _service_update(old: Obj, new: Obj) -> list[dict[str, str]]:
    os_, ns_ = _spec(old), _spec(new)
    causes: list[dict[str, str]] = []
    if os_.get("clusterIP") and ns_.get("clusterIP") not in (None, "", os_.get("clusterIP")):
        causes.append(
            field_cause(
                "spec.clusterIPs[0]",
                f"Invalid value: {_go_strings(ns_.get('clusterIPs'))}: may not change once set",
            )
        )
    if ns_.get("type") == "ExternalName" and not ns_.get("externalName"):
        causes.append(field_cause("spec.externalName", "Required value", "FieldValueRequired"))
    return causes


_UPDATE_RULES: dict[tuple[str, str], Callable[[Obj, Obj], list[dict[str, str]]]] = {
    ("apps", "StatefulSet"): _statefulset_update,
    ("apps", "Deployment"): _selector_update,
    ("apps", "ReplicaSet"): _selector_update,
    ("apps", "DaemonSet"): _selector_update,
    ("batch", "Job"): lambda old, new: _job_update(_spec(old), _spec(new)),
    ("", "Pod"): lambda old, new: _pod_update(_spec(old), _spec(new)),
    ("", "ConfigMap"): _data_update,
    ("", "Secret"): _secret_update,
    ("", "PersistentVolumeClaim"): _claim_update,
    ("", "Service"): _service_update,
}


def validate_update(rt: ResourceType, old: Obj, new: Obj) -> list[dict[str, str]]:
    """Update rules of built-in kinds that a controller can run into."""
    causes: list[dict[str, str]] = _finalizers_while_deleting(old, new)
    rule = _UPDATE_RULES.get((rt.group, rt.kind))
    return causes + rule(old, new) if rule is not None else causes


def storage_request(pvc_spec: Obj) -> int:
    """Bytes a claim's spec asks (0 when it asks nothing readable)."""
    text = ((pvc_spec.get("resources") or {}).get("requests") or {}).get("storage")
    try:
        return quantity_value(str(text)) if text is not None else 0
    except ValueError:
        return 0


def _go_strings(values: Any) -> str:
    """A list of strings as Go's ``%#v`` prints a ``[]string``."""
    return "[]string{" + ", ".join(f'"{v}"' for v in values or []) + "}"


def _finalizers_while_deleting(old: Obj, new: Obj) -> list[dict[str, str]]:
    """No finalizer may be added to an object being deleted (ValidateObjectMetaUpdate)."""
    if not old["metadata"].get("deletionTimestamp"):
        return []
    before = set(old["metadata"].get("finalizers") or [])
    added = [f for f in new["metadata"].get("finalizers") or [] if f not in before]
    if not added:
        return []
    cause = field_cause(
        "metadata.finalizers",
        f"Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers {_go_strings(added)}",
        "FieldValueForbidden",
    )
    # kube-apiserver checks object metadata twice on update (the registry's
    # BeforeUpdate and the kind's ValidateUpdate) and reports both.
    return [cause, cause]


def _job_update(old: Obj, new: Obj) -> list[dict[str, str]]:
    """A Job's selector, completions and (once started) template are fixed
    (ValidateJobUpdate). A changed selector is also not the generated one,
    and no longer matches the template: kube-apiserver reports that once for
    the spec and once more for the update."""
    from .validation.kinds import selector_matches_template

    causes: list[dict[str, str]] = []
    if old.get("selector") != new.get("selector"):
        if not new.get("manualSelector"):
            causes.append(field_cause("spec.selector", "Invalid value: {}: `selector` not auto-generated"))
        causes += selector_matches_template(new) * 2
        causes.append(field_cause("spec.selector", "Invalid value: {}: field is immutable"))
    if old.get("completions") != new.get("completions"):
        causes.append(
            field_cause("spec.completions", f"Invalid value: {new.get('completions')}: field is immutable")
        )
    if old.get("template") != new.get("template") and not old.get("suspend"):
        causes.append(field_cause("spec.template", "Invalid value: {}: field is immutable"))
    return causes


def _pod_update(old: Obj, new: Obj) -> list[dict[str, str]]:
    """Pod spec updates may only change images, activeDeadlineSeconds and add
    tolerations (pkg/apis/core/validation ValidatePodUpdate)."""

    def masked(spec: Obj) -> Obj:
        s = dict(spec)
        for f in ("containers", "initContainers"):
            s[f] = [{k: v for k, v in c.items() if k != "image"} for c in spec.get(f) or []]
        s.pop("activeDeadlineSeconds", None)
        s.pop("tolerations", None)
        s.pop("nodeName", None) if not old.get("nodeName") else None
        return s

    if len(old.get("containers") or []) != len(new.get("containers") or []):
        return [
            field_cause(
                "spec.containers",
                "Forbidden: pod updates may not add or remove containers",
                "FieldValueForbidden",
            )
        ]
    if masked(old) != masked(new):
        return [
            field_cause(
                "spec",
                "Forbidden: pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)",
                "FieldValueForbidden",
            )
        ]
    return []
