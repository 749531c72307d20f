"""Where an informer gets its objects from: a list (one page at a time) and a
watch from a resourceVersion — client-go's ``ListerWatcher``.

A Protocol so that the informer's logic (relists, resumes, stalls, 410s) is
tested against a scripted fake, while the real one stays a thin adapter over
``ApiClient`` that carries the informer's scope (namespace, selectors).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Protocol

from ..client.client import ApiClient, ListPage
from ..client.resource import Resource, ResourceLike
from ..client.watch import WatchEvent
from ..meta.selectors import SelectorLike, as_selector


class ListerWatcher(Protocol):
    async def list(self, *, limit: int | None, continue_: str | None) -> ListPage:
        """One page; ``continue_`` None starts a new list (a fresh snapshot).
        An expired continue token raises ``ApiError`` 410."""
        ...

    def watch(self, *, resource_version: str, timeout_seconds: int) -> AsyncIterator[WatchEvent]:
        """Events after ``resource_version`` with bookmarks; ends when the
        server closes the watch; raises ``WatchExpired`` on 410 and any other
        exception when the connection fails."""
        ...


class ClientListerWatcher:
    """Lists and watches one resource through the API client, scoped to a
    namespace (None: all) and optional label and field selectors."""

    def __init__(
        self,
        client: ApiClient,
        resource: ResourceLike,
        namespace: str | None = None,
        label_selector: SelectorLike | None = None,
        field_selector: str | None = None,
    ) -> None:
        self.client = client
        self.resource = Resource.of(resource)
        self.namespace = namespace if self.resource.namespaced else None
        self.label_selector = str(as_selector(label_selector)) or None
        self.field_selector = field_selector

    async def list(self, *, limit: int | None, continue_: str | None) -> ListPage:
        return await self.client.list_page(
            self.resource,
            self.namespace,
            label_selector=self.label_selector,
            field_selector=self.field_selector,
            limit=limit,
            continue_=continue_,
        )

    def watch(self, *, resource_version: str, timeout_seconds: int) -> AsyncIterator[WatchEvent]:
        return self.client.watch(
            self.resource,
            self.namespace,
            resource_version=resource_version,
            label_selector=self.label_selector,
            field_selector=self.field_selector,
            timeout_seconds=timeout_seconds,
            allow_bookmarks=True,
        )
