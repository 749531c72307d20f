"""The objects every CN pod of a set shares: its hashed config, the headless Service
its pods resolve each other by and the client Service SQL clients connect to."""

from __future__ import annotations

from mo_operator.matrixone import names, ports
from mo_operator.matrixone.component import Component

from ..framework import resources as r
from ..framework.desired import stamped
from ..specs.services import client_service, headless_service
from ..steps.podset import Desired as Objects
from .observed import Desired

COMPONENT = Component.CN
HEADLESS_PORTS = (("service", ports.CN_SQL), ("rpc", ports.CN_RPC), ("lock-service", ports.CN_LOCK_SERVICE))


def shared_objects(want: Desired) -> Objects:
    """The config and the Services, stamped, in the order they are written."""
    obj, name = want.obj, want.name
    headless = headless_service(
        obj, names.headless_service_name(COMPONENT, name), want.obj_labels, want.selector, HEADLESS_PORTS
    )
    client = client_service(
        obj,
        names.client_service_name(COMPONENT, name),
        want.obj_labels,
        want.selector,
        ports.CN_SERVICE_PORT_NAME,
        ports.CN_SQL,
        service_type=want.spec.service_type,
        node_port=want.spec.node_port,
        annotations=want.spec.service_annotations,
    )
    return [
        (r.CONFIGMAPS, stamped(want.config)),
        (r.SERVICES, stamped(headless)),
        (r.SERVICES, stamped(client)),
    ]
