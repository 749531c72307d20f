"""Persistent volumes: the simulated provisioner of the simulator's
StorageClass (both modes), its resizer and the kubelets' part of online
expansion (whenever it plays the kubelets: kube-controller-manager has no
resizer for a class without a CSI driver), and, in full mode, the PV
controller's binding."""

from __future__ import annotations

from mo_operator.kube.meta.times import format_time

from ..core.actions import Action, Create
from ..core.kinds import NODE, POD, PV, PVC, STORAGE_CLASS
from ..core.objects import Obj, key_of, name_of, namespace_of, spec_of
from ..core.pods import is_terminal, node_name_of, pvc_claim_names
from ..decisions.volumes import (
    expand_on_node,
    plan_claim,
    plan_volume,
    provision,
    reclaim,
    resize,
    storage_class,
)
from .base import CONTROLLER_MANAGER, KUBELET, PROVISIONER, Component, Context


class VolumeController(Component):
    """Keys: ("claim", namespace, name) and ("volume", name)."""

    name = "volume-controller"
    manager = CONTROLLER_MANAGER

    def __init__(self, ctx: Context, *, binder: bool, provisioner: bool = True) -> None:
        """``binder``: bind claims to volumes (kube-controller-manager's part);
        ``provisioner``: make and reclaim volumes of the simulator's StorageClass."""
        super().__init__(ctx)
        self.binder = binder
        self.provisioner = provisioner
        self.provisioner_exec = self.ctx.executor(PROVISIONER)
        self.kubelet_exec = self.ctx.executor(KUBELET)

    def setup(self) -> None:
        self.caches[PVC].add_handler(self._on_claim)
        self.caches[PV].add_handler(self._on_volume)
        self.caches[STORAGE_CLASS].add_handler(lambda *_: self.resync())
        self.caches.need(NODE)
        if self.binder or self.provisioner:
            self.caches[POD].add_handler(self._on_pod)

    def _claim(self, claim: Obj) -> None:
        self.enqueue(("claim", *key_of(claim)))

    def _on_claim(self, _etype: str, old: Obj | None, new: Obj | None) -> None:
        claim = new or old or {}
        self._claim(claim)
        if new is None:  # gone: its volume is to be released (binder), then reclaimed (provisioner)
            for pv in self.caches[PV].objects():
                ref = spec_of(pv).get("claimRef") or {}
                if (ref.get("namespace", ""), ref.get("name", "")) == key_of(claim):
                    self.enqueue(("volume", name_of(pv)))

    def _on_volume(self, _etype: str, old: Obj | None, new: Obj | None) -> None:
        pv = new or old or {}
        self.enqueue(("volume", name_of(pv)))
        ref = spec_of(pv).get("claimRef") or {}
        if ref.get("name"):
            self.enqueue(("claim", ref.get("namespace", ""), ref["name"]))

    def _on_pod(self, _etype: str, old: Obj | None, new: Obj | None) -> None:
        """A pod that stops using a claim may release its protection finalizer; one
        that starts running lets a pending file system resize finish."""
        for pod in (old, new):
            if pod is not None:
                for c in pvc_claim_names(pod):
                    self.enqueue(("claim", namespace_of(pod), c))

    def resync(self) -> None:
        for c in self.caches[PVC].objects():
            self._claim(c)
        for v in self.caches[PV].objects():
            self.enqueue(("volume", name_of(v)))

    async def start(self) -> None:
        cfg = self.config
        assert cfg.storage_class is not None
        if self.provisioner:
            sc = storage_class(
                cfg.storage_class, cfg.provisioner, default=cfg.full, binding_mode=cfg.volume_binding_mode
            )
            await self.exec.perform(Create(STORAGE_CLASS, sc, exists_ok=True))
        await super().start()

    def _classes(self) -> dict[str, Obj]:
        return {name_of(c): c for c in self.caches[STORAGE_CLASS].objects()}

    async def sync(self, key: tuple[str, ...]) -> float | None:
        if key[0] == "claim":
            return await self._sync_claim(key[1], key[2])
        return await self._sync_volume(key[1])

    async def _sync_claim(self, namespace: str, name: str) -> float | None:
        claim = self.caches[PVC].get(namespace, name)
        if claim is None:
            return None
        volumes = self.caches[PV].objects()
        classes = self._classes()
        nodes = {name_of(n): n for n in self.caches[NODE].objects()}
        made = provision(claim, volumes, classes, self.config.provisioner, nodes) if self.provisioner else []
        if made and await self.provisioner_exec.run(made):
            return 0.05
        if self.provisioner:
            pv = next((v for v in volumes if name_of(v) == spec_of(claim).get("volumeName")), None)
            now = format_time(self.ctx.clock())
            grown = resize(claim, pv, classes, self.config.provisioner, now)
            if grown and await self.provisioner_exec.run(grown):
                return 0.05
            expanded = expand_on_node(claim, pv, self._mounted(namespace, name))
            if expanded and await self.kubelet_exec.run(expanded):
                return 0.05
        if not self.binder:
            return None
        in_use = any(name in pvc_claim_names(p) and not is_terminal(p) for p in self.pods_in(namespace))
        actions: list[Action] = plan_claim(claim, volumes, classes, in_use)
        return None if await self.write(actions) else 0.05

    def _mounted(self, namespace: str, claim: str) -> bool:
        """A running pod on one of the simulator's nodes mounts the claim (its kubelet
        then finishes a file system resize)."""
        nodes = set(self.ctx.node_names)
        return any(
            claim in pvc_claim_names(p)
            and (p.get("status") or {}).get("phase") == "Running"
            and node_name_of(p) in nodes
            for p in self.pods_in(namespace)
        )

    async def _sync_volume(self, name: str) -> float | None:
        pv = self.caches[PV].get("", name)
        if pv is None:
            return None
        gone = reclaim(pv, self.config.provisioner) if self.provisioner else []
        if gone:
            return None if not await self.provisioner_exec.run(gone) else 0.05
        if not self.binder:
            return None
        claims = {key_of(c): c for c in self.caches[PVC].objects()}
        return None if await self.write(plan_volume(pv, claims)) else 0.05
