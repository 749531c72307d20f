"""Cluster IPs and node ports for Services, handed out in order as the
Service REST storage's allocators do (never reused: tests run briefly)."""

from __future__ import annotations

from typing import Any

from .resources import ResourceType

Obj = dict[str, Any]


class ServiceAllocator:
    def __init__(self) -> None:
        self._next = 10
        self._next_port = 30000

    def allocate(self, rt: ResourceType, obj: Obj) -> None:
        """Fills a new Service's clusterIP(s) and missing node ports."""
        if (rt.group, rt.kind) != ("", "Service"):
            return
        spec = obj.setdefault("spec", {})
        if spec.get("type") != "ExternalName" and not spec.get("clusterIP"):
            spec["clusterIP"] = self._next_ip()
        if spec.get("clusterIP"):
            spec.setdefault("clusterIPs", [spec["clusterIP"]])
        if spec.get("type") in ("NodePort", "LoadBalancer"):
            for p in spec.get("ports") or []:
                p.setdefault("nodePort", self._next_node_port())

    def _next_ip(self) -> str:
        n = self._next
        self._next += 1
        return f"10.96.{n // 250}.{n % 250 + 1}"

    def _next_node_port(self) -> int:
        p = self._next_port
        self._next_port += 1
        return p
