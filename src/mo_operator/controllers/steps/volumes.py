"""Growing volumes: which claims to patch, what a workload's claim template may
ask, and what to say about it (pure decisions, no API calls).

A StatefulSet's ``volumeClaimTemplates`` are immutable and its claims are never
resized by Kubernetes, so a bigger ``volume.size`` reaches the disks in two
moves, as upstream does (pkg/controllers/common/volume.go): each existing claim's
``spec.resources.requests.storage`` is raised (the StorageClass's resizer and the
kubelet grow the volume and report it in ``status.capacity``), and the
StatefulSet is replaced with one whose template asks the new size (deleted with
``propagationPolicy: Orphan`` and recreated; the new one adopts the same pods
and claims by selector, so no pod restarts).

A claim whose StorageClass does not allow expansion (or does not exist) cannot
grow: those claims are reported, and the template keeps the size it has, so the
StatefulSet is not replaced for a size its claims will never reach and the rest
of the spec still applies. A claim not bound yet is left alone (kube-apiserver
refuses to resize it) until it is bound. A claim is never shrunk: the webhook
refuses a smaller size, and kube-apiserver any smaller request.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from mo_operator.kube.meta.objects import annotations_of, is_deleting, mapping_at, spec_of, status_of
from mo_operator.kube.meta.quantity import canonical_quantity, quantity_value

from ..framework.desired import matches

Obj = dict[str, Any]

CONDITION = "VolumeExpansion"
"""Condition of a set whose volumes grow: False while they grow or cannot, True once done."""
BLOCKED = "StorageClassCannotExpand"
"""Reason: some claims' StorageClass does not allow expansion (a Warning)."""
RESIZING = "Resizing"
"""Reason: claims were asked a bigger size and have not all reached it."""
EXPANDED = "VolumesExpanded"
"""Reason: every claim reached the size it asks."""


@dataclass(frozen=True)
class Blocked:
    """Claims that cannot grow, and the StorageClass that keeps them from it."""

    storage_class: str
    reason: str
    """``missing`` or ``no expansion``."""
    claims: tuple[str, ...]
    size: str

    def describe(self) -> str:
        why = (
            "does not exist"
            if self.reason == "missing"
            else "does not allow volume expansion (allowVolumeExpansion is not true)"
        )
        return (
            f"StorageClass {self.storage_class or '(none)'} {why}: "
            f"PVCs {', '.join(self.claims)} cannot grow to {self.size}"
        )


@dataclass(frozen=True)
class Expansion:
    """What to do about one set's volumes."""

    patches: tuple[tuple[str, str], ...] = ()
    """``(claim, size)``: raise the claim's storage request to ``size``."""
    template_sizes: Mapping[str, str] = field(default_factory=dict)
    """Size each claim template (by name) asks: the spec's, or the current one while blocked."""
    blocked: tuple[Blocked, ...] = ()
    growing: tuple[str, ...] = ()
    """Claims asked a size their ``status.capacity`` has not reached, as ``name: have of want``."""


def size_of(text: Any) -> int:
    """Bytes of a quantity; 0 when absent or unreadable (so it never counts as reached)."""
    try:
        return quantity_value(str(text)) if text not in (None, "") else 0
    except ValueError:
        return 0


def request_of(claim: Mapping[str, Any]) -> str:
    return str(mapping_at(claim, "spec", "resources", "requests").get("storage") or "")


def capacity_of(claim: Mapping[str, Any]) -> str:
    return str(mapping_at(claim, "status", "capacity").get("storage") or "")


def class_of(claim: Mapping[str, Any], default_class: str | None) -> str:
    """The StorageClass of a claim (the default one when it names none yet)."""
    named = spec_of(claim).get("storageClassName")
    return str(named if named is not None else (default_class or ""))


def can_expand(storage_class: Mapping[str, Any] | None) -> bool:
    return bool(storage_class and storage_class.get("allowVolumeExpansion") is True)


def default_class_name(classes: Mapping[str, Mapping[str, Any]]) -> str | None:
    """The default StorageClass (the newest, as admission picks it since 1.26)."""
    defaults = [
        c
        for c in classes.values()
        if annotations_of(c).get("storageclass.kubernetes.io/is-default-class") == "true"
    ]
    if not defaults:
        return None
    newest = max(
        defaults, key=lambda c: (str(c["metadata"].get("creationTimestamp") or ""), c["metadata"]["name"])
    )
    return str(newest["metadata"]["name"])


def plan_expansion(
    wanted: Mapping[str, str],
    current: Mapping[str, str],
    claims: Mapping[str, Sequence[Mapping[str, Any]]],
    classes: Mapping[str, Mapping[str, Any]],
) -> Expansion:
    """Decide for claim templates ``wanted`` (name → size the spec asks) given the
    sizes the workload's templates ask now (``current``; empty before it exists),
    the existing claims of each template, and the StorageClasses by name."""
    default = default_class_name(classes)
    patches: list[tuple[str, str]] = []
    sizes: dict[str, str] = {}
    blocked: list[Blocked] = []
    growing: list[str] = []
    for template, size in wanted.items():
        want = size_of(size)
        stuck: dict[tuple[str, str], list[str]] = {}
        for claim in sorted(claims.get(template) or (), key=lambda c: str(c["metadata"]["name"])):
            name = str(claim["metadata"]["name"])
            if is_deleting(claim):
                continue
            asked = size_of(request_of(claim))
            if asked < want:
                cls_name = class_of(claim, default)
                cls = classes.get(cls_name)
                if not can_expand(cls):
                    stuck.setdefault((cls_name, "missing" if cls is None else "no expansion"), []).append(
                        name
                    )
                    continue
                if status_of(claim).get("phase") != "Bound":
                    growing.append(f"{name}: waits to be bound")
                    continue
                patches.append((name, canonical_quantity(size)))
                asked = want
            have = capacity_of(claim)
            if have and size_of(have) < asked:  # no capacity yet: being provisioned, not resized
                target = canonical_quantity(size if asked == want else request_of(claim))
                growing.append(f"{name}: {have} of {target}")
        for (cls_name, reason), names in sorted(stuck.items()):
            blocked.append(Blocked(cls_name, reason, tuple(names), canonical_quantity(size)))
        sizes[template] = current.get(template, size) if stuck else size
    return Expansion(tuple(patches), sizes, tuple(blocked), tuple(growing))


def condition(expansion: Expansion, *, reported: bool) -> tuple[bool, str, str] | None:
    """``(status, reason, message)`` of the ``VolumeExpansion`` condition; None while
    no volume ever had to grow (``reported``: the set already carries the condition)."""
    if expansion.blocked:
        message = "; ".join(b.describe() for b in expansion.blocked)
        if expansion.growing:
            message += f"; growing: {', '.join(expansion.growing)}"
        return False, BLOCKED, message
    if expansion.patches or expansion.growing:
        return False, RESIZING, f"growing: {', '.join(expansion.growing)}"
    if reported:
        return True, EXPANDED, "every volume has the size its claim asks"
    return None


def template_sizes(templates: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """Name → storage request of a workload's claim templates."""
    return {str(t["metadata"]["name"]): request_of(t) for t in templates if request_of(t)}


def with_sizes(templates: Sequence[Mapping[str, Any]], sizes: Mapping[str, str]) -> list[Obj]:
    """``templates`` with the storage request of each one named in ``sizes`` replaced."""
    out = []
    for t in templates:
        size = sizes.get(str(t["metadata"]["name"]))
        if size is None or size == request_of(t):
            out.append(dict(t))
            continue
        spec = dict(t["spec"])
        spec["resources"] = {
            **spec["resources"],
            "requests": {**spec["resources"]["requests"], "storage": size},
        }
        out.append({**t, "spec": spec})
    return out


def must_replace(cached: Mapping[str, Any] | None, desired: Mapping[str, Any]) -> bool:
    """Whether the cached StatefulSet's claim templates differ from the desired ones:
    they are immutable, so the StatefulSet must be replaced (not updated)."""
    if cached is None or is_deleting(cached):
        return False
    want = spec_of(desired).get("volumeClaimTemplates") or []
    have = spec_of(cached).get("volumeClaimTemplates") or []
    return not matches(want, have)
