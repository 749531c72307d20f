"""Defaults kube-apiserver fills into built-in kinds (pkg/apis/*/v1/defaults.go
and the default admission plugins), limited to the fields a controller or
kubectl can observe. Each function mutates a fresh copy it is handed."""

from __future__ import annotations

import base64
import random
from typing import Any

Obj = dict[str, Any]


def _image_pull_policy(image: str) -> str:
    tail = image.rsplit("/", 1)[-1]
    if "@" in tail:
        return "IfNotPresent"
    tag = tail.split(":", 1)[1] if ":" in tail else "latest"
    return "Always" if tag == "latest" else "IfNotPresent"


def _container(c: Obj) -> None:
    c.setdefault("terminationMessagePath", "/dev/termination-log")
    c.setdefault("terminationMessagePolicy", "File")
    if c.get("image"):
        c.setdefault("imagePullPolicy", _image_pull_policy(c["image"]))
    c.setdefault("resources", {})
    for p in c.get("ports") or []:
        p.setdefault("protocol", "TCP")
    for probe in ("livenessProbe", "readinessProbe", "startupProbe"):
        pr = c.get(probe)
        if isinstance(pr, dict):
            pr.setdefault("timeoutSeconds", 1)
            pr.setdefault("periodSeconds", 10)
            pr.setdefault("successThreshold", 1)
            pr.setdefault("failureThreshold", 3)


def pod_spec(spec: Obj) -> None:
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("securityContext", {})
    spec.setdefault("schedulerName", "default-scheduler")
    for c in spec.get("containers") or []:
        _container(c)
    for c in spec.get("initContainers") or []:
        _container(c)
    for v in spec.get("volumes") or []:
        if "configMap" in v and isinstance(v["configMap"], dict):
            v["configMap"].setdefault("defaultMode", 420)
        if "secret" in v and isinstance(v["secret"], dict):
            v["secret"].setdefault("defaultMode", 420)


def _template(spec: Obj) -> None:
    tmpl = spec.get("template")
    if isinstance(tmpl, dict) and isinstance(tmpl.get("spec"), dict):
        pod_spec(tmpl["spec"])


def pod(obj: Obj) -> None:
    spec = obj.setdefault("spec", {})
    pod_spec(spec)
    spec.setdefault("enableServiceLinks", True)


_TOKEN_MOUNT = "/var/run/secrets/kubernetes.io/serviceaccount"
_RANDOM_CHARS = "bcdfghjklmnpqrstvwxz2456789"  # apimachinery's util/rand alphabet


def pod_admission(obj: Obj) -> None:
    """What the admission plugins add to a new pod: the ServiceAccount (and,
    unless automount is off, its projected token volume mounted in every
    container), the Priority plugin's priority, DefaultTolerationSeconds'
    tolerations."""
    spec = obj.setdefault("spec", {})
    spec.setdefault("serviceAccountName", spec.get("serviceAccount") or "default")
    spec["serviceAccount"] = spec["serviceAccountName"]  # the deprecated alias, kept equal
    if spec.get("automountServiceAccountToken") is not False:
        _token_volume(spec)
    spec.setdefault("priority", 0)
    spec.setdefault("preemptionPolicy", "PreemptLowerPriority")
    tolerations = spec.setdefault("tolerations", [])
    for key in ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"):
        if not any(t.get("key") == key for t in tolerations):
            tolerations.append(
                {"key": key, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}
            )


def _token_volume(spec: Obj) -> None:
    containers = [c for f in ("initContainers", "containers") for c in spec.get(f) or []]
    if any(m.get("mountPath") == _TOKEN_MOUNT for c in containers for m in c.get("volumeMounts") or []):
        return
    name = "kube-api-access-" + "".join(random.choices(_RANDOM_CHARS, k=5))
    spec.setdefault("volumes", []).append(
        {
            "name": name,
            "projected": {
                "sources": [
                    {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                    {
                        "configMap": {
                            "name": "kube-root-ca.crt",
                            "items": [{"key": "ca.crt", "path": "ca.crt"}],
                        }
                    },
                    {
                        "downwardAPI": {
                            "items": [
                                {
                                    "path": "namespace",
                                    "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"},
                                }
                            ]
                        }
                    },
                ],
                "defaultMode": 420,
            },
        }
    )
    for c in containers:
        c.setdefault("volumeMounts", []).append({"name": name, "readOnly": True, "mountPath": _TOKEN_MOUNT})


def statefulset(obj: Obj) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("replicas", 1)
    spec.setdefault("podManagementPolicy", "OrderedReady")
    strategy = spec.setdefault("updateStrategy", {"type": "RollingUpdate"})
    if strategy.get("type", "RollingUpdate") == "RollingUpdate":
        strategy.setdefault("type", "RollingUpdate")
        strategy.setdefault("rollingUpdate", {}).setdefault("partition", 0)
    spec.setdefault("revisionHistoryLimit", 10)
    policy = spec.setdefault("persistentVolumeClaimRetentionPolicy", {})
    policy.setdefault("whenDeleted", "Retain")
    policy.setdefault("whenScaled", "Retain")
    for vct in spec.get("volumeClaimTemplates") or []:
        vct.setdefault("apiVersion", "v1")
        vct.setdefault("kind", "PersistentVolumeClaim")
        vct.setdefault("spec", {}).setdefault("volumeMode", "Filesystem")
        vct.setdefault("status", {}).setdefault("phase", "Pending")
    _template(spec)


def deployment(obj: Obj) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("replicas", 1)
    strategy = spec.setdefault("strategy", {"type": "RollingUpdate"})
    if strategy.get("type", "RollingUpdate") == "RollingUpdate":
        strategy.setdefault("type", "RollingUpdate")
        ru = strategy.setdefault("rollingUpdate", {})
        ru.setdefault("maxUnavailable", "25%")
        ru.setdefault("maxSurge", "25%")
    spec.setdefault("revisionHistoryLimit", 10)
    spec.setdefault("progressDeadlineSeconds", 600)
    _template(spec)


def replicaset(obj: Obj) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("replicas", 1)
    _template(spec)


def job(obj: Obj) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("parallelism", 1)
    spec.setdefault("completions", 1)
    spec.setdefault("backoffLimit", 6)
    spec.setdefault("completionMode", "NonIndexed")
    spec.setdefault("suspend", False)
    _template(spec)


def job_admission(obj: Obj) -> None:
    """The Job strategy's PrepareForCreate: a selector on the Job's own uid
    and the matching template labels; and, as every read of a Job applies,
    the template's labels as the Job's when it has none."""
    spec = obj.setdefault("spec", {})
    uid = obj["metadata"]["uid"]
    if not spec.get("manualSelector"):
        labels = {"batch.kubernetes.io/controller-uid": uid}
        spec.setdefault("selector", {"matchLabels": labels})
        tmpl = spec.setdefault("template", {})
        tl = tmpl.setdefault("metadata", {}).setdefault("labels", {})
        tl.setdefault("batch.kubernetes.io/controller-uid", uid)
        tl.setdefault("controller-uid", uid)
        tl.setdefault("batch.kubernetes.io/job-name", obj["metadata"]["name"])
        tl.setdefault("job-name", obj["metadata"]["name"])
    template_labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels")
    if template_labels and not obj["metadata"].get("labels"):
        obj["metadata"]["labels"] = dict(template_labels)


def daemonset(obj: Obj) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("revisionHistoryLimit", 10)
    _template(spec)


def pvc(obj: Obj) -> None:
    obj.setdefault("spec", {}).setdefault("volumeMode", "Filesystem")


def pv(obj: Obj) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("persistentVolumeReclaimPolicy", "Retain")
    spec.setdefault("volumeMode", "Filesystem")


def namespace(obj: Obj) -> None:
    labels = obj["metadata"].setdefault("labels", {})
    labels["kubernetes.io/metadata.name"] = obj["metadata"]["name"]


def secret(obj: Obj) -> None:
    obj.setdefault("type", "Opaque")
    string_data = obj.pop("stringData", None)
    if isinstance(string_data, dict):
        data = obj.setdefault("data", {})
        for k, v in string_data.items():
            data[k] = base64.b64encode(str(v).encode()).decode()


def webhook_configuration(obj: Obj) -> None:
    for wh in obj.get("webhooks") or []:
        wh.setdefault("failurePolicy", "Fail")
        wh.setdefault("matchPolicy", "Equivalent")
        wh.setdefault("namespaceSelector", {})
        wh.setdefault("objectSelector", {})
        wh.setdefault("timeoutSeconds", 10)
        if obj.get("kind") == "MutatingWebhookConfiguration":
            wh.setdefault("reinvocationPolicy", "Never")
        for rule in wh.get("rules") or []:
            rule.setdefault("scope", "*")
        svc = (wh.get("clientConfig") or {}).get("service")
        if isinstance(svc, dict):
            svc.setdefault("port", 443)


def crd(obj: Obj) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("conversion", {"strategy": "None"})
    names = spec.setdefault("names", {})
    if names.get("kind"):
        names.setdefault("singular", names["kind"].lower())
        names.setdefault("listKind", names["kind"] + "List")


def service(obj: Obj) -> None:
    spec = obj.setdefault("spec", {})
    spec.setdefault("type", "ClusterIP")
    spec.setdefault("sessionAffinity", "None")
    if spec["type"] != "ExternalName":
        spec.setdefault("internalTrafficPolicy", "Cluster")
    if spec["type"] in ("NodePort", "LoadBalancer"):
        spec.setdefault("externalTrafficPolicy", "Cluster")
    for p in spec.get("ports") or []:
        p.setdefault("protocol", "TCP")
        if "port" in p:
            p.setdefault("targetPort", p["port"])


def service_allocation(obj: Obj) -> None:
    """The IP families the Service REST storage picks (on this single-stack
    IPv4 cluster): a headless Service without a selector gets no address, so
    both families, as RequireDualStack."""
    spec = obj.setdefault("spec", {})
    if spec.get("type", "ClusterIP") == "ExternalName":
        return
    if spec.get("clusterIP") == "None" and not spec.get("selector"):
        spec.setdefault("ipFamilyPolicy", "RequireDualStack")
        spec.setdefault("ipFamilies", ["IPv4", "IPv6"])
    else:
        spec.setdefault("ipFamilyPolicy", "SingleStack")
        spec.setdefault("ipFamilies", ["IPv4"])


def pvc_admission(obj: Obj) -> None:
    """StorageObjectInUseProtection: a claim is not removed while a pod uses
    it (kube-controller-manager's PVC protection controller, played by the
    workload simulator, removes the finalizer once none does)."""
    finalizers = obj["metadata"].setdefault("finalizers", [])
    if "kubernetes.io/pvc-protection" not in finalizers:
        finalizers.append("kubernetes.io/pvc-protection")


ADMISSION_BY_KIND = {
    ("", "Pod"): pod_admission,
    ("", "PersistentVolumeClaim"): pvc_admission,
    ("batch", "Job"): job_admission,
    ("", "Service"): service_allocation,
}
"""What kube-apiserver adds to a new object after recording the creator's
fields (admission plugins, the strategy's PrepareForCreate, the REST
storage's allocation): none of it is in the creator's managedFields."""


def apply_creation_additions(group: str, kind: str, obj: Obj) -> None:
    fn = ADMISSION_BY_KIND.get((group, kind))
    if fn is not None:
        fn(obj)


BY_KIND = {
    ("", "Pod"): pod,
    ("apps", "StatefulSet"): statefulset,
    ("apps", "Deployment"): deployment,
    ("apps", "ReplicaSet"): replicaset,
    ("apps", "DaemonSet"): daemonset,
    ("batch", "Job"): job,
    ("", "PersistentVolumeClaim"): pvc,
    ("", "PersistentVolume"): pv,
    ("", "Namespace"): namespace,
    ("", "Secret"): secret,
    ("", "Service"): service,
    ("admissionregistration.k8s.io", "MutatingWebhookConfiguration"): webhook_configuration,
    ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration"): webhook_configuration,
    ("apiextensions.k8s.io", "CustomResourceDefinition"): crd,
}


def apply_builtin_defaults(group: str, kind: str, obj: Obj) -> None:
    fn = BY_KIND.get((group, kind))
    if fn is not None:
        fn(obj)
