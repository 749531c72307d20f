"""What the LogSet wants to exist: the hashed config, the bootstrap and gossip
ConfigMaps (which change without restarting anything), the headless and discovery
Services, and the StatefulSet ``<ls>-log`` with a ``mo-data`` volume per pod."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from mo_operator.api.base import dump
from mo_operator.api.logset import LogSetSpec
from mo_operator.matrixone import layout, names, ports, reserved
from mo_operator.matrixone.bootstrap import BootstrapReplica
from mo_operator.matrixone.component import Component
from mo_operator.matrixone.config import log as log_config
from mo_operator.matrixone.reserved import Numbering

from ..framework import resources as r
from ..framework.desired import stamped
from ..framework.meta import child_metadata, name_of, namespace_of, set_labels
from ..specs.podtemplate import canonical_size
from ..specs.services import discovery_service, headless_service
from ..specs.statefulsets import overlay_claims, statefulset, volume_claim_template
from ..steps.podset import Desired
from ..steps.podset_input import SetInput, hashed_config

Obj = dict[str, Any]

COMPONENT = Component.LOG
HEADLESS_PORTS = (("raft", ports.LOG_RAFT), ("logservice", ports.LOG_SERVICE), ("gossip", ports.LOG_GOSSIP))


def desired(
    obj: Mapping[str, Any],
    spec: LogSetSpec,
    members: Sequence[BootstrapReplica],
    selector: Mapping[str, str],
    numbering: Numbering | None = None,
    *,
    hold: bool = False,
) -> Desired:
    """The LogSet's objects, stamped, in the order they are written: ConfigMaps,
    Services, then the StatefulSet that mounts them. Its stores are the ``numbering``'s
    live ordinals (0.. when None): the StatefulSet runs those from its start, the
    LogSet the detached ones below (see matrixone/reserved.py, detached.py); ``hold``
    keeps the StatefulSet from rolling (its partition past every pod)."""
    given = _input(obj, spec, selector)
    name, obj_labels = given.name, given.labels
    numbering = numbering or reserved.numbering((), spec.replicas)
    bootstrap, gossip = _member_configs(given, members, numbering.live)
    headless = names.headless_service_name(COMPONENT, name)
    workload = statefulset(
        obj,
        names.workload_name(COMPONENT, name),
        obj_labels,
        selector,
        replicas=numbering.statefulset_replicas,
        service_name=headless,
        template=_template(given, bootstrap, gossip, headless),
        volume_claim_templates=_claim_templates(spec, obj_labels),
        pvc_retention=spec.pvc_retention_policy or "Retain",
        first_ordinal=numbering.start,
        partition=numbering.statefulset_replicas if hold else 0,
    )
    return [
        (r.CONFIGMAPS, stamped(given.config)),
        (r.CONFIGMAPS, stamped(bootstrap)),
        (r.CONFIGMAPS, stamped(gossip)),
        (r.SERVICES, stamped(headless_service(obj, headless, obj_labels, selector, HEADLESS_PORTS))),
        (
            r.SERVICES,
            stamped(discovery_service(obj, names.discovery_service_name(name), obj_labels, selector)),
        ),
        (r.STATEFULSETS, stamped(workload)),
    ]


def _input(obj: Mapping[str, Any], spec: LogSetSpec, selector: Mapping[str, str]) -> SetInput[LogSetSpec]:
    """The log service's config is its own (no log service to render against); its
    pods reach the shared storage its spec names."""
    namespace, name = namespace_of(obj), name_of(obj)
    obj_labels = set_labels(COMPONENT, obj)
    config = hashed_config(
        obj,
        COMPONENT,
        obj_labels,
        lambda: log_config.config_map_data(name=name, namespace=namespace, spec=dump(spec)),
    )
    return SetInput(obj, COMPONENT, spec, obj_labels, selector, config, spec.shared_storage)


def _member_configs(
    given: SetInput[LogSetSpec], members: Sequence[BootstrapReplica], live: Sequence[int]
) -> tuple[Obj, Obj]:
    """The bootstrap ConfigMap (the recorded HAKeeper membership) and the gossip one
    (every store's address); both change without restarting a store."""
    obj, spec, name = given.obj, given.spec, given.name
    bootstrap = config_map(
        obj,
        names.log_bootstrap_config_map_name(name),
        given.labels,
        log_config.bootstrap_config_map_data(spec=_bootstrap_fields(spec), replicas=members),
    )
    gossip = config_map(
        obj,
        names.log_gossip_config_map_name(name),
        given.labels,
        log_config.gossip_config_map_data(
            name=name,
            namespace=namespace_of(obj),
            ordinals=live,
        ),
    )
    return bootstrap, gossip


def _template(given: SetInput[LogSetSpec], bootstrap: Obj, gossip: Obj, headless: str) -> Obj:
    """A log store's pod: the bootstrap and gossip ConfigMaps and its data volume mounted."""
    return given.pod_template(
        extra_volumes=[
            {"name": layout.BOOTSTRAP_VOLUME, "configMap": {"name": name_of(bootstrap)}},
            {"name": layout.GOSSIP_VOLUME, "configMap": {"name": name_of(gossip)}},
        ],
        extra_mounts=[
            {"name": layout.BOOTSTRAP_VOLUME, "mountPath": layout.BOOTSTRAP_PATH},
            {"name": layout.GOSSIP_VOLUME, "mountPath": layout.GOSSIP_PATH},
            {"name": layout.DATA_VOLUME, "mountPath": layout.DATA_PATH},
        ],
        headless_service=headless,
    )


def _bootstrap_fields(spec: LogSetSpec) -> dict[str, Any]:
    """What the bootstrap config is rendered from: ``initialConfig`` and ``config``, as JSON."""
    fields: dict[str, Any] = {}
    if spec.initial_config is not None:
        fields["initialConfig"] = dump(spec.initial_config)
    if spec.config is not None:
        fields["config"] = spec.config
    return fields


def _claim_templates(spec: LogSetSpec, obj_labels: Mapping[str, str]) -> list[Obj]:
    """The ``mo-data`` volume of each store, then the overlay's extra claims."""
    volume = spec.volume
    return [
        volume_claim_template(
            layout.DATA_VOLUME, canonical_size(volume.size), volume.storage_class_name, obj_labels
        ),
        *overlay_claims(spec),
    ]


def config_map(
    owner: Mapping[str, Any], name: str, obj_labels: Mapping[str, str], data: Mapping[str, str]
) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": child_metadata(owner, name, obj_labels),
        "data": dict(data),
    }
