"""The informer's store: read-only objects by key, with secondary indexes.

Modelled on client-go's ``ThreadSafeStore`` + ``Indexers``: an index is a
function from an object to the index values it files the object under;
lookups by index return every object filed under a value. Two indexes are
always present — ``namespace`` and ``owner`` (the uid of every
ownerReference), the two questions every controller asks — and more can be
added by name at any time (existing objects are indexed on the spot).

Everything handed out is frozen (see ``frozen.py``): callers share the
objects with every other controller and must ``thaw`` before editing. Only
the informer writes (``upsert``/``remove``); there are no locks because all
access happens on the event loop.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from ..meta.frozen import FrozenDict, freeze
from ..meta.selectors import SelectorLike, as_selector

#: A cached object: read-only, but a ``dict`` for every reading purpose.
CachedObject = FrozenDict
IndexFunc = Callable[[Mapping[str, Any]], Iterable[str]]

NAMESPACE_INDEX = "namespace"
OWNER_INDEX = "owner"


def object_key(obj: Mapping[str, Any]) -> str:
    """``namespace/name``, or ``name`` for cluster-scoped objects (client-go's
    ``MetaNamespaceKeyFunc``)."""
    meta = obj.get("metadata") or {}
    namespace = meta.get("namespace") or ""
    name: str = meta.get("name") or ""
    return f"{namespace}/{name}" if namespace else name


def make_key(namespace: str | None, name: str) -> str:
    return f"{namespace}/{name}" if namespace else name


def index_by_namespace(obj: Mapping[str, Any]) -> Iterable[str]:
    return ((obj.get("metadata") or {}).get("namespace") or "",)


def index_by_owner_uid(obj: Mapping[str, Any]) -> Iterable[str]:
    refs = (obj.get("metadata") or {}).get("ownerReferences") or ()
    return [ref["uid"] for ref in refs if ref.get("uid")]


class Store:
    def __init__(self, indexers: Mapping[str, IndexFunc] | None = None) -> None:
        self._items: dict[str, FrozenDict] = {}
        self._indexers: dict[str, IndexFunc] = {
            NAMESPACE_INDEX: index_by_namespace,
            OWNER_INDEX: index_by_owner_uid,
        }
        # index name -> index value -> keys filed under it
        self._indices: dict[str, dict[str, set[str]]] = {name: {} for name in self._indexers}
        for name, fn in (indexers or {}).items():
            self.add_indexer(name, fn)

    # ---------------------------------------------------------------- reads
    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, key: object) -> bool:
        return key in self._items

    def list_keys(self) -> builtins.list[str]:
        return list(self._items)

    def get(self, namespace: str | None, name: str) -> FrozenDict | None:
        return self._items.get(make_key(namespace, name))

    def get_by_key(self, key: str) -> FrozenDict | None:
        return self._items.get(key)

    def list(
        self, namespace: str | None = None, label_selector: SelectorLike | None = None
    ) -> builtins.list[FrozenDict]:
        """Objects in ``namespace`` (all when None) whose labels match the selector."""
        if namespace is None:
            objs: Iterable[FrozenDict] = self._items.values()
        else:
            objs = self.by_index(NAMESPACE_INDEX, namespace)
        if label_selector is None:
            return list(objs)
        selector = as_selector(label_selector)
        return [o for o in objs if selector.matches_object(o)]

    def by_index(self, index: str, value: str) -> builtins.list[FrozenDict]:
        return [self._items[k] for k in self.index_keys(index, value)]

    def index_keys(self, index: str, value: str) -> builtins.list[str]:
        try:
            keys = self._indices[index].get(value, ())
        except KeyError:
            raise KeyError(f"no index named {index!r}") from None
        return sorted(keys)

    def index_values(self, index: str) -> builtins.list[str]:
        return sorted(self._indices[index])

    # ------------------------------------------------------------- indexers
    def indexer(self, name: str) -> IndexFunc | None:
        return self._indexers.get(name)

    def add_indexer(self, name: str, fn: IndexFunc) -> None:
        if name in self._indexers:
            raise ValueError(f"an index named {name!r} already exists")
        self._indexers[name] = fn
        self._indices[name] = {}
        for key, obj in self._items.items():
            self._file(name, fn, key, obj)

    # --------------------------------------------------------------- writes
    def upsert(self, obj: Mapping[str, Any]) -> tuple[FrozenDict, FrozenDict | None]:
        """Store (a frozen copy of) ``obj``; return it and the object it replaced."""
        frozen: FrozenDict = freeze(obj)
        key = object_key(frozen)
        old = self._items.get(key)
        if old is not None:
            self._unfile_all(key, old)
        self._items[key] = frozen
        for name, fn in self._indexers.items():
            self._file(name, fn, key, frozen)
        return frozen, old

    def remove(self, key: str) -> FrozenDict | None:
        old = self._items.pop(key, None)
        if old is not None:
            self._unfile_all(key, old)
        return old

    def _file(self, name: str, fn: IndexFunc, key: str, obj: FrozenDict) -> None:
        index = self._indices[name]
        for value in fn(obj):
            index.setdefault(value, set()).add(key)

    def _unfile_all(self, key: str, obj: FrozenDict) -> None:
        for name, fn in self._indexers.items():
            index = self._indices[name]
            for value in fn(obj):
                keys = index.get(value)
                if keys is not None:
                    keys.discard(key)
                    if not keys:
                        del index[value]
