"""Server-side apply and field ownership (``metadata.managedFields``).

This follows kube-apiserver's field manager (k8s.io/apimachinery
``pkg/util/managedfields/internal``) over structured-merge-diff's updater
(``merge/update.go``) and the Server-Side Apply documentation
(https://kubernetes.io/docs/reference/using-api/server-side-apply/):

- An ordinary write (create, update, patch) gives its manager the fields it
  changed or added and takes them from everyone else; fields it removed are
  dropped from every set. A write that changes nothing changes no entry.
- An apply merges the configuration into the live object. Another manager
  owning a field the apply would change is a conflict, unless forced, in
  which case ownership moves. The applier then owns exactly the fields of its
  configuration; fields it applied last time and no longer applies are
  removed from the object unless some other manager owns them.

Server-owned metadata is never tracked; ``status`` is tracked only through
the ``status`` subresource (whose writes in turn never track ``spec``).
"""

from __future__ import annotations

import json
from typing import Any

from ..schema.goformat import go_json
from .errors import PatchError
from .fieldpath import FieldSet, Path, field_element, path_string
from .managers import (
    APPLY,
    UPDATE,
    Identity,
    ManagedFieldsError,
    ManagerEntry,
    Managers,
    cap_update_managers,
    decode_managed_fields,
    encode_managed_fields,
    identity_json,
)
from .structured import (
    MISSING,
    Comparison,
    ItemError,
    compare,
    drop_applied_nulls,
    merge,
    remove_items,
    validate_applied,
    with_named_fields,
)
from .structured import fields_of as _fields_of
from .typeinfo import TypeInfo
from .values import clone, json_equal

__all__ = ["ApplyConflict", "ManagedFieldsError", "fields_of", "record_update", "server_side_apply"]

SERVER_OWNED_METADATA = (
    "managedFields",
    "resourceVersion",
    "uid",
    "creationTimestamp",
    "generation",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "selfLink",
)
BEFORE_FIRST_APPLY = "before-first-apply"
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"

_F = field_element
# Paths an entry never keeps (stripmeta.go); the server-owned metadata
# never reaches a set at all.
_STRIPPED = FieldSet.of(
    (_F("apiVersion"),),
    (_F("kind"),),
    (_F("metadata"),),
    (_F("metadata"), _F("name")),
    (_F("metadata"), _F("namespace")),
    (_F("metadata"), _F("clusterName")),
)


def fields_of(obj: Any, type_info: TypeInfo) -> FieldSet:
    """Every field ``obj`` sets, as server-side apply counts them."""
    return _fields_of(obj, type_info.root)


def _ignored(type_info: TypeInfo, subresource: str) -> tuple[str, ...]:
    """Top-level fields a write through ``subresource`` neither sets nor
    owns (the reset fields of kube-apiserver's strategies)."""
    if subresource == "status":
        return ("spec",)
    return ("status",) if type_info.status_subresource else ()


def _view(obj: Any, ignored: tuple[str, ...]) -> dict[str, Any]:
    """``obj`` as ownership sees it: no ignored top-level fields, no
    server-owned metadata."""
    if not isinstance(obj, dict):
        return {}
    view = {k: v for k, v in obj.items() if k not in ignored}
    meta = obj.get("metadata")
    if isinstance(meta, dict):
        view["metadata"] = {k: v for k, v in meta.items() if k not in SERVER_OWNED_METADATA}
    return view


def _take_changes(managers: Managers, changes: Comparison, skip: Identity | None) -> FieldSet:
    """Remove the changed, added and removed fields from every manager but
    ``skip``; drop entries left empty. Returns the changed and added fields."""
    touched = changes.modified.union(changes.added)
    for key in list(managers):
        if key == skip:
            continue
        entry = managers[key]
        rest = entry.fields.difference(touched).difference(changes.removed)
        if rest.is_empty():
            del managers[key]
        elif rest != entry.fields:
            managers[key] = entry.with_fields(rest)
    return touched


def _track_update(managers: Managers, changes: Comparison, entry: ManagerEntry) -> None:
    own = _take_changes(managers, changes, None).difference(_STRIPPED)
    if own.is_empty():
        return
    previous = managers.get(entry.identity)
    fields = own if previous is None else own.union(previous.fields)
    managers[entry.identity] = entry.with_fields(fields)
    cap_update_managers(managers)


def _is_reset(entries: Any) -> bool:
    """``managedFields: []`` (or one empty entry) in a write clears them."""
    return isinstance(entries, list) and (entries == [] or entries == [{}])


def record_update(
    old: dict[str, Any] | None,
    new: dict[str, Any],
    *,
    manager: str,
    operation: str = UPDATE,
    type_info: TypeInfo,
    now: str,
    subresource: str = "",
    api_version: str,
) -> list[dict[str, Any]]:
    """``managedFields`` after ``manager`` wrote ``new`` over ``old``
    (``None`` for a create).

    The base is the entries the write carries, when it carries valid ones
    (a client may set them; ``[]`` resets them), else the stored ones. An
    existing object with no entries stays untracked until its first apply.
    Never raises: an object the rules cannot read keeps its old entries.
    """
    old_meta = (old or {}).get("metadata") or {}
    stored = old_meta.get("managedFields")
    ignored = _ignored(type_info, subresource)
    try:
        changes = compare(_view(old, ignored), _view(new, ignored), type_info.root)
    except ItemError:
        kept: list[dict[str, Any]] = clone(stored or [])
        return kept
    sent = (new.get("metadata") or {}).get("managedFields")
    source = stored if subresource or sent is None else sent
    try:
        managers = {} if _is_reset(source) else decode_managed_fields(source)
    except ManagedFieldsError:
        managers = {}
    if not managers and source is sent and not _is_reset(sent):
        source = stored  # undecodable or empty entries in the write: keep the stored ones
        try:
            managers = decode_managed_fields(stored)
        except ManagedFieldsError:
            managers = {}
    if not managers and old is not None and old_meta.get("uid"):
        return []
    if changes.is_same():
        unchanged: list[dict[str, Any]] = clone(source or [])
        return unchanged
    _track_update(
        managers,
        changes,
        ManagerEntry(manager or "unknown", operation, api_version, subresource, FieldSet(), now),
    )
    return encode_managed_fields(managers)


class ApplyConflict(Exception):
    """Fields an apply would change that other managers own.

    ``conflicts`` pairs each manager's name with the field path
    (``.spec.replicas``); ``causes`` are the Status causes kube-apiserver
    returns, and ``message`` its message ("Apply failed with 1 conflict:
    conflict with "kubectl-client-side-apply" using apps/v1: .spec.replicas").
    """

    def __init__(self, found: list[tuple[ManagerEntry, Path]]) -> None:
        self.conflicts = [(entry.manager, path_string(path)) for entry, path in found]
        self.causes = [
            {
                "reason": "FieldManagerConflict",
                "message": f"conflict with {entry.describe()}",
                "field": path_string(path),
            }
            for entry, path in found
        ]
        self.message = _conflict_message(found)
        super().__init__(self.message)


def _conflict_message(found: list[tuple[ManagerEntry, Path]]) -> str:
    if len(found) == 1:
        entry, path = found[0]
        return f"Apply failed with 1 conflict: conflict with {entry.describe()}: {path_string(path)}"
    lines: list[str] = []
    for key in sorted({identity_json(e.identity): e for e, _ in found}.items()):
        lines.append(f"conflicts with {key[1].describe()}:")
        lines += [f"- {path_string(p)}" for e, p in found if identity_json(e.identity) == key[0]]
    return f"Apply failed with {len(found)} conflicts: " + "\n".join(lines)


def _typing_error(what: str, obj: dict[str, Any], errors: list[str]) -> PatchError:
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        meta = {}
    api_version = str(obj.get("apiVersion") or "")
    group, _, version = api_version.rpartition("/")
    gvk = f"{group}/{version}, Kind={obj.get('kind') or ''}"
    detail = errors[0] if len(errors) == 1 else "errors:\n" + "\n".join(f"  {e}" for e in errors)
    where = f"{meta.get('namespace') or ''}/{meta.get('name') or ''}; {gvk}"
    return PatchError(f"failed to create typed {what} object ({where}): {detail}", code=500)


def _allowed_by_last_applied(live: dict[str, Any], api_version: str, type_info: TypeInfo) -> FieldSet:
    """Fields whose live value is still the one in kubectl's client-side
    last-applied annotation: ``kubectl apply --server-side`` may take them
    from the client-side manager without a conflict (lastappliedmanager.go)."""
    annotations = (live.get("metadata") or {}).get("annotations") or {}
    try:
        last = json.loads(annotations.get(LAST_APPLIED) or "")
    except ValueError:
        return FieldSet()
    if not isinstance(last, dict) or last.get("apiVersion") != api_version:
        return FieldSet()
    try:
        changes = compare(last, live, type_info.root)
        return (
            _fields_of(last, type_info.root)
            .difference(changes.modified)
            .difference(changes.added)
            .difference(changes.removed)
        )
    except ItemError:
        return FieldSet()


def _last_applied_text(applied: dict[str, Any]) -> str:
    """The annotation kubectl keeps: the applied object as JSON, without the
    annotation itself (lastappliedupdater.go)."""
    obj = clone(applied)
    annotations = (obj.get("metadata") or {}).get("annotations")
    if isinstance(annotations, dict):
        annotations.pop(LAST_APPLIED, None)
    return go_json(obj) + "\n"


def server_side_apply(
    live: dict[str, Any] | None,
    applied: dict[str, Any],
    *,
    manager: str,
    force: bool,
    type_info: TypeInfo,
    now: str,
    subresource: str = "",
) -> dict[str, Any]:
    """The object after ``manager`` applies ``applied`` to ``live`` (``None``
    when the apply creates it), with ``metadata.managedFields`` updated.

    Raises :class:`ApplyConflict` on conflicts when not ``force``, and
    :class:`PatchError` for a configuration that cannot be typed (a keyed
    list item without its keys, duplicate items) or carrying managedFields.
    """
    meta = applied.get("metadata")
    if isinstance(meta, dict) and meta.get("managedFields") is not None:
        raise PatchError("metadata.managedFields must be nil", code=400)
    manager = manager or "unknown"
    api_version = str(applied.get("apiVersion") or (live or {}).get("apiVersion") or "")
    root = type_info.root
    ignored = _ignored(type_info, subresource)
    live_obj = live if live is not None else {}
    try:
        managers = decode_managed_fields((live_obj.get("metadata") or {}).get("managedFields"))
    except ManagedFieldsError as e:
        raise PatchError(f"failed to decode managed fields: {e}", code=500) from e
    config = _view(applied, ignored)
    errors = validate_applied(config, root)
    if errors:
        raise _typing_error("patch", applied, errors)
    try:
        if not managers and live is not None:
            # Fields set before anyone applied belong to a placeholder updater.
            first = ManagerEntry(BEFORE_FIRST_APPLY, UPDATE, api_version, subresource, FieldSet(), now)
            _track_update(managers, compare({}, _view(live_obj, ignored), root), first)
        merged = merge(live_obj, config, root)
    except ItemError as e:
        raise _typing_error("live", live_obj, [str(e)]) from e
    me = (manager, APPLY, "", subresource)
    last = managers.get(me)
    config_set = _fields_of(config, root)
    managers[me] = ManagerEntry(
        manager, APPLY, api_version, subresource, config_set, last.time if last else None
    )
    if last is not None and not last.fields.is_empty():
        kept = FieldSet()
        for entry in managers.values():
            kept = kept.union(with_named_fields(entry.fields, root))
        merged = remove_items(merged, with_named_fields(last.fields, root).difference(kept), root)
        merged = {} if merged is MISSING else merged
    changes = compare(_view(live_obj, ignored), _view(merged, ignored), root)
    _check_conflicts(managers, me, changes, force, live_obj, api_version, type_info)
    _take_changes(managers, changes, me)
    own = config_set.difference(_STRIPPED)
    if own.is_empty():
        del managers[me]
    else:
        changed = not json_equal(live_obj, merged)
        managers[me] = ManagerEntry(
            manager, APPLY, api_version, subresource, own, now if changed else managers[me].time
        )
    result: dict[str, Any] = clone(merged)
    drop_applied_nulls(result, config, root)
    result_meta = result.setdefault("metadata", {})
    if manager == "kubectl" and (result_meta.get("annotations") or {}).get(LAST_APPLIED):
        result_meta["annotations"][LAST_APPLIED] = _last_applied_text(applied)
    if managers:
        result_meta["managedFields"] = encode_managed_fields(managers)
    else:
        result_meta.pop("managedFields", None)
    return result


def _check_conflicts(
    managers: Managers,
    me: Identity,
    changes: Comparison,
    force: bool,
    live: dict[str, Any],
    api_version: str,
    type_info: TypeInfo,
) -> None:
    if force:
        return
    touched = changes.modified.union(changes.added)
    found: list[tuple[ManagerEntry, Path]] = []
    for key in sorted(managers, key=identity_json):
        if key != me:
            entry = managers[key]
            found += [(entry, path) for path in entry.fields.intersection(touched).paths()]
    if found and me[0] == "kubectl":
        allowed = _allowed_by_last_applied(live, api_version, type_info)
        found = [(entry, path) for entry, path in found if not allowed.has(path)]
    if found:
        raise ApplyConflict(found)
