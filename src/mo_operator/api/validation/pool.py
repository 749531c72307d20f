"""CN pools and claims: selectors that match, labels that are complete, sizes that fit."""

from __future__ import annotations

from typing import Any

from .deps import logset_ref_errors
from .errors import FieldError
from .names import label_errors
from .podset import podset_errors
from .sets import cn_label_errors, cnset_spec_errors

__all__ = ["cnclaim_errors", "cnclaimset_errors", "cnpool_errors"]


def _claim_spec_errors(spec: dict[str, Any] | None, path: str) -> list[FieldError]:
    if spec is None:
        return []
    errs = cn_label_errors(spec.get("cnLabels"), f"{path}.cnLabels")
    errs += label_errors(spec.get("additionalPodLabels") or {}, f"{path}.additionalPodLabels")
    errs += label_errors(
        (spec.get("selector") or {}).get("matchLabels") or {}, f"{path}.selector.matchLabels"
    )
    return errs


def cnclaim_errors(obj: dict[str, Any]) -> list[FieldError]:
    return _claim_spec_errors(obj.get("spec"), "spec")


def cnclaimset_errors(obj: dict[str, Any]) -> list[FieldError]:
    spec = obj.get("spec")
    if spec is None:
        return []
    template = spec["template"]
    labels: dict[str, str] = (template.get("metadata") or {}).get("labels") or {}
    errs = label_errors(labels, "spec.template.metadata.labels")
    errs += _claim_spec_errors(template.get("spec"), "spec.template.spec")
    wanted: dict[str, str] = (spec.get("selector") or {}).get("matchLabels") or {}
    if any(labels.get(k) != v for k, v in wanted.items()):
        errs.append(
            FieldError("spec.template.metadata.labels", "`selector` does not match template `labels`")
        )
    return errs


def cnpool_errors(obj: dict[str, Any]) -> list[FieldError]:
    spec = obj["spec"]
    scale = spec["strategy"]["scaleStrategy"]
    errs = label_errors(spec.get("podLabels") or {}, "spec.podLabels")
    errs += cnset_spec_errors(spec["template"], "spec.template")
    errs += podset_errors(spec["template"], "spec.template")
    errs += logset_ref_errors(spec["deps"], "spec.deps")
    if scale.get("maxPods") is not None and scale["maxPods"] < scale["maxIdle"]:
        errs.append(
            FieldError("spec.strategy.scaleStrategy.maxPods", "maxPods must not be less than maxIdle")
        )
    return errs
