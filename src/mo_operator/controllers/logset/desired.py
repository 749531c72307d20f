"""What the LogSet wants to exist: the hashed config, the bootstrap and gossip
ConfigMaps (which change without restarting anything), the headless and discovery
Services, and the StatefulSet ``<ls>-log`` with a ``mo-data`` volume per pod."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from mo_operator.matrixone import layout, names, ports
from mo_operator.matrixone.bootstrap import BootstrapReplica
from mo_operator.matrixone.component import Component
from mo_operator.matrixone.config import log as log_config

from ..common import resources as r
from ..common.desired import stamped
from ..common.meta import child_metadata, name_of, namespace_of, set_labels
from ..common.podset import Desired, hashed_config, template_input
from ..common.podtemplate import canonical_resources, pod_template
from ..common.services import discovery_service, headless_service
from ..common.statefulsets import statefulset, volume_claim_template

Obj = dict[str, Any]

COMPONENT = Component.LOG
HEADLESS_PORTS = (("raft", ports.LOG_RAFT), ("logservice", ports.LOG_SERVICE), ("gossip", ports.LOG_GOSSIP))


def desired(
    obj: Mapping[str, Any],
    spec: Mapping[str, Any],
    members: Sequence[BootstrapReplica],
    selector: Mapping[str, str],
) -> Desired:
    """The LogSet's objects, stamped, in the order they are written: ConfigMaps,
    Services, then the StatefulSet that mounts them."""
    namespace, name = namespace_of(obj), name_of(obj)
    obj_labels = set_labels(COMPONENT, obj)
    config = hashed_config(
        obj,
        COMPONENT,
        obj_labels,
        lambda: log_config.config_map_data(name=name, namespace=namespace, spec=spec),
    )
    bootstrap = config_map(
        obj,
        names.log_bootstrap_config_map_name(name),
        obj_labels,
        log_config.bootstrap_config_map_data(spec=spec, replicas=members),
    )
    replicas = int(spec["replicas"])
    gossip = config_map(
        obj,
        names.log_gossip_config_map_name(name),
        obj_labels,
        log_config.gossip_config_map_data(name=name, namespace=namespace, ordinals=range(replicas)),
    )
    headless = names.headless_service_name(COMPONENT, name)
    template = pod_template(
        template_input(
            obj,
            COMPONENT,
            spec,
            config_map=name_of(config),
            selector=selector,
            shared_storage=spec.get("sharedStorage"),
            obj_labels=obj_labels,
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
    )
    workload = statefulset(
        obj,
        names.workload_name(COMPONENT, name),
        obj_labels,
        selector,
        replicas=replicas,
        service_name=headless,
        template=template,
        volume_claim_templates=_claim_templates(spec, obj_labels),
        pvc_retention=spec.get("pvcRetentionPolicy") or "Retain",
    )
    return [
        (r.CONFIGMAPS, stamped(config)),
        (r.CONFIGMAPS, stamped(bootstrap)),
        (r.CONFIGMAPS, stamped(gossip)),
        (r.SERVICES, stamped(headless_service(obj, headless, obj_labels, selector, HEADLESS_PORTS))),
        (
            r.SERVICES,
            stamped(discovery_service(obj, names.discovery_service_name(name), obj_labels, selector)),
        ),
        (r.STATEFULSETS, stamped(workload)),
    ]


def _claim_templates(spec: Mapping[str, Any], obj_labels: Mapping[str, str]) -> list[Obj]:
    """The ``mo-data`` volume of each store, then the overlay's extra claims."""
    volume = spec["volume"]
    return [
        volume_claim_template(
            layout.DATA_VOLUME,
            canonical_resources({"requests": {"storage": volume["size"]}})["requests"]["storage"],
            volume.get("storageClassName"),
            obj_labels,
        ),
        *((spec.get("overlay") or {}).get("volumeClaims") or ()),
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
