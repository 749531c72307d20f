"""The controller reference manager (pkg/controller/controller_ref_manager.go):
which children an owner controls, which orphans it adopts and which
children it releases because they no longer match its selector."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..core.actions import Action, Patch
from ..core.kinds import Kind
from ..core.objects import Obj, controller_ref, is_deleting, labels_of, meta, name_of, namespace_of, uid_of
from ..core.selectors import selector_matches


def _set_owner_refs(kind: Kind, child: Obj, refs: list[Any]) -> Patch:
    """A merge patch replacing the child's owner references, guarded by its
    uid so that it cannot land on a recreated namesake."""
    return Patch(
        kind,
        namespace_of(child),
        name_of(child),
        {"metadata": {"ownerReferences": refs, "uid": uid_of(child)}},
    )


def claim_children(
    owner: Obj,
    owner_kind: Kind,
    child_kind: Kind,
    selector: dict[str, Any] | None,
    candidates: Sequence[Obj],
    can_adopt: Callable[[Obj], bool] = lambda _: True,
) -> tuple[list[Obj], list[Action]]:
    """Children controlled by ``owner`` after adoption and release, and the
    patches that adopt (orphans matching the selector) or release (children
    no longer matching). A deleted owner adopts nothing."""
    owned: list[Obj] = []
    actions: list[Action] = []
    uid = uid_of(owner)
    for child in candidates:
        if namespace_of(child) != namespace_of(owner):
            continue
        ref = controller_ref(child)
        matches = selector_matches(selector, labels_of(child))
        if ref is not None:
            if ref.get("uid") != uid:
                continue
            if matches:
                owned.append(child)
            elif not is_deleting(child):
                refs = [r for r in meta(child).get("ownerReferences") or [] if r.get("uid") != uid]
                actions.append(_set_owner_refs(child_kind, child, refs))
            continue
        if matches and not is_deleting(child) and not is_deleting(owner) and can_adopt(child):
            refs = list(meta(child).get("ownerReferences") or [])
            refs.append(
                {
                    "apiVersion": owner_kind.api_version,
                    "kind": owner_kind.kind,
                    "name": name_of(owner),
                    "uid": uid,
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            )
            actions.append(_set_owner_refs(child_kind, child, refs))
            owned.append(child)
    return owned, actions
