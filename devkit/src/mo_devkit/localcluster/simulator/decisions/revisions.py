"""Revision hashes and ControllerRevisions (pkg/controller/history and
``controller.ComputeHash``): names ``<owner>-<hash>``, FNV-32 hashes printed
with ``rand.SafeEncodeString``, revision numbers and history truncation.

The hashed bytes are our canonical JSON, not Go's encoding, so hash values
differ from a real cluster's; their form, stability and collision handling
are the same.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ..core.kinds import CONTROLLER_REVISION, Kind
from ..core.objects import Obj, meta, name_of, namespace_of, new_controller_ref

_SAFE = "bcdfghjklmnpqrstvwxz2456789"
_FNV_OFFSET = 0x811C9DC5
_FNV_PRIME = 0x01000193

#: Label ControllerRevisions carry with their hash.
REVISION_HASH_LABEL = "controller.kubernetes.io/hash"
#: Label StatefulSet pods carry with their revision's name.
POD_REVISION_LABEL = "controller-revision-hash"


def safe_encode(s: str) -> str:
    """``rand.SafeEncodeString``: no vowels, no look-alike digits."""
    return "".join(_SAFE[ord(c) % len(_SAFE)] for c in s)


def fnv32(data: bytes) -> int:
    h = _FNV_OFFSET
    for b in data:
        h = (h * _FNV_PRIME) & 0xFFFFFFFF
        h ^= b
    return h


def fnv32a(data: bytes) -> int:
    h = _FNV_OFFSET
    for b in data:
        h ^= b
        h = (h * _FNV_PRIME) & 0xFFFFFFFF
    return h


def canonical(obj: Any) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":")).encode()


def hash_revision(data: Any, collision_count: int | None) -> str:
    """``history.HashControllerRevision``."""
    raw = canonical(data)
    if collision_count is not None:
        raw += str(collision_count).encode()
    return safe_encode(str(fnv32(raw)))


def template_hash(template: Any, collision_count: int | None) -> str:
    """``controller.ComputeHash``: the Deployment's ``pod-template-hash``."""
    raw = canonical(template)
    if collision_count is not None:
        raw += str(collision_count).encode()
    return safe_encode(str(fnv32a(raw)))


def revision_name(prefix: str, hash_: str) -> str:
    return f"{prefix[:223]}-{hash_}"


def statefulset_revision_data(sts: Obj) -> Obj:
    """What a StatefulSet revision records (``getPatch``): its pod template,
    as a strategic-merge patch that replaces the template."""
    template = dict((sts.get("spec") or {}).get("template") or {})
    template["$patch"] = "replace"
    return {"spec": {"template": template}}


def template_of_revision(revision: Obj) -> Obj:
    template = dict(((revision.get("data") or {}).get("spec") or {}).get("template") or {})
    template.pop("$patch", None)
    return template


def new_revision(owner: Obj, owner_kind: Kind, data: Obj, number: int, collision_count: int) -> Obj:
    """``history.NewControllerRevision``."""
    template_labels = (
        (((owner.get("spec") or {}).get("template") or {}).get("metadata") or {}).get("labels")
    ) or {}
    h = hash_revision(data, collision_count)
    return {
        "apiVersion": CONTROLLER_REVISION.api_version,
        "kind": CONTROLLER_REVISION.kind,
        "metadata": {
            "name": revision_name(name_of(owner), h),
            "namespace": namespace_of(owner),
            "labels": {**template_labels, REVISION_HASH_LABEL: h},
            "ownerReferences": [new_controller_ref(owner, owner_kind)],
        },
        "data": data,
        "revision": number,
    }


def sort_revisions(revisions: Sequence[Obj]) -> list[Obj]:
    """``history.SortControllerRevisions``: by number, then age, then name."""
    return sorted(
        revisions,
        key=lambda r: (int(r.get("revision") or 0), str(meta(r).get("creationTimestamp") or ""), name_of(r)),
    )


def next_revision(revisions: Sequence[Obj]) -> int:
    return int(revisions[-1].get("revision") or 0) + 1 if revisions else 1
