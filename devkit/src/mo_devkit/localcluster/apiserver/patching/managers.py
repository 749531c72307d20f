"""The entries of ``metadata.managedFields``: decoding, encoding, ordering
and capping them as kube-apiserver does
(k8s.io/apimachinery ``pkg/util/managedfields/internal``: managedfields.go,
capmanagers.go, conflict.go).

An entry is identified by its manager name, operation, subresource and,
for ``Update`` entries only, API version: an applier keeps one entry
whatever version it applies with, an updater gets one per version.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass, field, replace
from typing import Any

from ..schema.goformat import go_json, go_quote
from .fieldpath import FieldSet, from_fields_v1
from .values import clone

APPLY, UPDATE = "Apply", "Update"
MAX_UPDATE_MANAGERS = 10
ANCIENT_CHANGES = "ancient-changes"

Identity = tuple[str, str, str, str]


class ManagedFieldsError(ValueError):
    """``metadata.managedFields`` that cannot be decoded."""


@dataclass(frozen=True)
class ManagerEntry:
    manager: str
    operation: str
    api_version: str
    subresource: str
    fields: FieldSet
    time: str | None = None
    # The fieldsV1 this entry was decoded from, reused while ``fields`` is
    # unchanged: encoding is the costly half of every write.
    encoded: dict[str, Any] | None = field(default=None, compare=False, repr=False)

    def with_fields(self, fields: FieldSet, **changes: Any) -> ManagerEntry:
        return replace(self, fields=fields, encoded=None, **changes)

    @property
    def identity(self) -> Identity:
        version = "" if self.operation == APPLY else self.api_version
        return (self.manager, self.operation, version, self.subresource)

    def describe(self) -> str:
        """How conflict messages name this manager (``printManager``):
        ``"kubectl-client-side-apply" using apps/v1`` for an updater."""
        text = go_quote(self.manager)
        if self.subresource:
            text += f" with subresource {go_quote(self.subresource)}"
        if self.operation == UPDATE:
            text += f" using {self.api_version}"
        return text


def identity_json(identity: Identity) -> str:
    """The identity as kube-apiserver spells it (JSON of the entry without
    fields and time); conflicts are grouped in this order."""
    manager, operation, version, subresource = identity
    parts = [f'"manager":{go_json(manager)}'] if manager else []
    parts.append(f'"operation":{go_json(operation)}')
    if version:
        parts.append(f'"apiVersion":{go_json(version)}')
    if subresource:
        parts.append(f'"subresource":{go_json(subresource)}')
    return "{" + ",".join(parts) + "}"


Managers = dict[Identity, ManagerEntry]


def decode_managed_fields(entries: Any) -> Managers:
    if entries is None:
        return {}
    if not isinstance(entries, list):
        raise ManagedFieldsError("managedFields must be a list")
    managers: Managers = {}
    for i, raw in enumerate(entries):
        if not isinstance(raw, dict):
            raise ManagedFieldsError(f"managed fields entry {i} must be an object")
        operation = raw.get("operation")
        if operation not in (APPLY, UPDATE):
            raise ManagedFieldsError("operation must be `Apply` or `Update`")
        if not raw.get("apiVersion"):
            raise ManagedFieldsError("apiVersion must not be empty")
        fields_type = raw.get("fieldsType")
        if fields_type != "FieldsV1":
            if not fields_type:
                raise ManagedFieldsError(f"missing fieldsType in managed fields entry {i}")
            raise ManagedFieldsError(
                f"invalid fieldsType {go_quote(str(fields_type))} in managed fields entry {i}"
            )
        raw_fields = raw.get("fieldsV1") or {}
        try:
            fields = from_fields_v1(raw_fields)
        except (ValueError, TypeError) as e:
            raise ManagedFieldsError(f"error decoding set: {e}") from e
        entry = ManagerEntry(
            manager=str(raw.get("manager") or ""),
            operation=operation,
            api_version=str(raw["apiVersion"]),
            subresource=str(raw.get("subresource") or ""),
            fields=fields,
            time=raw.get("time"),
            encoded=raw_fields,
        )
        managers[entry.identity] = entry
    return managers


def _seconds(time: str | None) -> int:
    if not time:
        return 0
    try:
        return int(datetime.datetime.fromisoformat(time.replace("Z", "+00:00")).timestamp())
    except ValueError:
        return 0


def encode_managed_fields(managers: Managers) -> list[dict[str, Any]]:
    """The ``managedFields`` list: Apply entries before Update ones, then
    oldest first, then by manager, version and subresource."""
    ordered = sorted(
        managers.values(),
        key=lambda e: (e.operation, _seconds(e.time), e.manager, e.api_version, e.subresource),
    )
    out = []
    for e in ordered:
        entry: dict[str, Any] = {"manager": e.manager} if e.manager else {}
        entry["operation"] = e.operation
        entry["apiVersion"] = e.api_version
        if e.time:
            entry["time"] = e.time
        entry["fieldsType"] = "FieldsV1"
        entry["fieldsV1"] = clone(e.encoded) if e.encoded is not None else e.fields.to_fields_v1()
        if e.subresource:
            entry["subresource"] = e.subresource
        out.append(entry)
    return out


def cap_update_managers(managers: Managers) -> None:
    """Fold the oldest updaters into one ``ancient-changes`` entry per API
    version once there are more than ten (capmanagers.go)."""
    updaters = [k for k, e in managers.items() if e.operation != APPLY]
    if len(updaters) <= MAX_UPDATE_MANAGERS:
        return
    updaters.sort(key=lambda k: (_seconds(managers[k].time), identity_json(k)))
    first_of_version: dict[str, Identity] = {}
    remaining = len(updaters)
    for key in updaters:
        if remaining <= MAX_UPDATE_MANAGERS:
            break
        entry = managers[key]
        version = entry.api_version
        if version not in first_of_version:
            first_of_version[version] = key
            continue
        bucket = (ANCIENT_CHANGES, UPDATE, version, "")
        if bucket not in managers:
            first = managers.pop(first_of_version[version])
            managers[bucket] = ManagerEntry(ANCIENT_CHANGES, UPDATE, version, "", first.fields, first.time)
        held = managers[bucket]
        managers[bucket] = held.with_fields(entry.fields.union(held.fields), time=entry.time)
        del managers[key]
        remaining -= 1
