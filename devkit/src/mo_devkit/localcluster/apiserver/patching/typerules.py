"""The vocabulary of merge rules: what one field's Go tags and OpenAPI
extensions say about how its value merges.

Two engines read these rules with different eyes. Server-side apply (and
field ownership) follows the OpenAPI list and map types (``+listType``,
``+listMapKey``, ``+structType``/``+mapType``; for CRDs the
``x-kubernetes-*`` extensions). Strategic merge patch follows the older
``patchStrategy``/``patchMergeKey`` struct tags. A field can differ between
the two (a Job's ``status.conditions`` merge by ``type`` in a strategic
patch, yet are atomic to server-side apply), so a rule carries both.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

ListKind = Literal["atomic", "set", "map"]


@dataclass(frozen=True)
class ListType:
    """``x-kubernetes-list-type`` with its ``x-kubernetes-list-map-keys``."""

    kind: ListKind = "atomic"
    keys: tuple[str, ...] = ()


ATOMIC_LIST = ListType()


@dataclass(frozen=True)
class PatchMeta:
    """``patchStrategy`` (comma-separated in Go, a tuple here) and
    ``patchMergeKey`` of a field, as strategic merge patch reads them."""

    strategies: tuple[str, ...] = ()
    merge_key: str = ""

    @property
    def strategy(self) -> str:
        """The strategy other than ``retainKeys`` (``merge``, ``replace`` or "")."""
        return next((s for s in self.strategies if s != "retainKeys"), "")

    @property
    def retain_keys(self) -> bool:
        return "retainKeys" in self.strategies


NO_PATCH_META = PatchMeta()


@dataclass(frozen=True)
class Rule:
    """Everything known about the value at one path.

    ``elements`` marks a map whose keys are data (``map[string]T`` such as
    labels) rather than the fields of a struct; server-side apply owns each
    such key as a member. ``untyped`` marks a free-form value (a
    ``runtime.RawExtension``, or ``x-kubernetes-preserve-unknown-fields``):
    every key below it is data and every list atomic.
    """

    list_type: ListType = ATOMIC_LIST
    key_defaults: tuple[tuple[str, Any], ...] = ()
    atomic: bool = False
    elements: bool = False
    untyped: bool = False
    patch: PatchMeta = field(default=NO_PATCH_META)


def list_map(
    *keys: str,
    smp_key: str | None = "",
    retain_keys: bool = False,
    defaults: tuple[tuple[str, Any], ...] = (),
) -> Rule:
    """A ``listType=map`` list. Its strategic merge key is the first list key
    unless ``smp_key`` names another; ``smp_key=None`` means the field has no
    ``patchStrategy`` tag, so a strategic patch replaces it whole."""
    if smp_key is None:
        patch = NO_PATCH_META
    else:
        strategies = ("merge", "retainKeys") if retain_keys else ("merge",)
        patch = PatchMeta(strategies, smp_key or keys[0])
    return Rule(list_type=ListType("map", keys), key_defaults=defaults, patch=patch)


def list_set(*, smp_merge: bool = False) -> Rule:
    """A ``listType=set`` list of scalars; ``smp_merge`` when it also carries
    ``patchStrategy:"merge"`` (finalizers, podCIDRs)."""
    return Rule(list_type=ListType("set"), patch=PatchMeta(("merge",)) if smp_merge else NO_PATCH_META)


def smp_merge_only(key: str) -> Rule:
    """Atomic to server-side apply, merged by ``key`` in a strategic patch."""
    return Rule(patch=PatchMeta(("merge",), key))


ATOMIC = Rule(atomic=True)
ELEMENTS = Rule(elements=True)
ATOMIC_ELEMENTS = Rule(elements=True, atomic=True)
UNTYPED = Rule(untyped=True)
RETAIN_KEYS = Rule(patch=PatchMeta(("retainKeys",)))
PROTOCOL_TCP = (("protocol", "TCP"),)
