"""The endpoints controller: one Endpoints object per Service with a selector."""

from __future__ import annotations

from ..core.kinds import ENDPOINTS, POD, SERVICE
from ..core.objects import Obj, key_of, labels_of, namespace_of, spec_of
from ..core.selectors import map_selector_matches
from ..decisions.endpoints import plan_endpoints
from .base import CONTROLLER_MANAGER, Component, index_by_namespace


class EndpointsController(Component):
    name = "endpoints-controller"
    manager = CONTROLLER_MANAGER

    def setup(self) -> None:
        index_by_namespace(self.caches[SERVICE])
        self.caches[SERVICE].add_handler(lambda _t, old, new: self.enqueue(key_of(new or old or {})))
        self.caches[ENDPOINTS].add_handler(lambda _t, old, new: self.enqueue(key_of(new or old or {})))
        self.caches[POD].add_handler(self._on_pod)

    def _on_pod(self, _etype: str, old: Obj | None, new: Obj | None) -> None:
        for pod in (old, new):
            if pod is None:
                continue
            for svc in self.caches[SERVICE].by_index("namespace", namespace_of(pod)):
                selector = spec_of(svc).get("selector")
                if selector is not None and map_selector_matches(selector, labels_of(pod)):
                    self.enqueue(key_of(svc))

    def resync(self) -> None:
        for svc in self.caches[SERVICE].objects():
            self.enqueue(key_of(svc))

    async def sync(self, key: tuple[str, str]) -> float | None:
        """A missing Service takes its Endpoints with it, as ``syncService`` does."""
        actions = plan_endpoints(
            self.caches[SERVICE].get(*key), self.caches[ENDPOINTS].get(*key), self.pods_in(key[0])
        )
        return None if await self.write(actions) else 0.05
