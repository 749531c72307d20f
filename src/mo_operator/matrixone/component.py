"""The MatrixOne components the operator runs, with the three names each one goes by.

Every other module keys its per-component facts on this enum, so that a name suffix,
a label value and the MatrixOne ``service-type`` can never disagree with each other.
"""

from __future__ import annotations

import enum


class Component(enum.Enum):
    """A MatrixOne component.

    ``kind`` is our API kind (also the ``matrixorigin.io/component`` label value, as
    upstream uses the kind there); ``suffix`` is what upstream appends to the set's name
    to name its workload (``<set>-<suffix>``); ``service_type`` is MatrixOne's own
    ``service-type`` TOML value (empty for the WebUI, which is not a MatrixOne service).
    TN keeps the older names ``DNSet``, ``-dn`` and ``DN``: upstream never renamed them
    and MatrixOne still accepts ``DN`` as an alias of ``TN``.
    """

    LOG = ("LogSet", "log", "LOG")
    TN = ("DNSet", "dn", "DN")
    CN = ("CNSet", "cn", "CN")
    PROXY = ("ProxySet", "proxy", "PROXY")
    WEBUI = ("WebUI", "webui", "")

    def __init__(self, kind: str, suffix: str, service_type: str) -> None:
        self.kind = kind
        self.suffix = suffix
        self.service_type = service_type

    @classmethod
    def from_kind(cls, kind: str) -> Component:
        """The component whose kind (label value) is ``kind``; ``TNSet`` is accepted for TN."""
        if kind == "TNSet":
            return cls.TN
        for component in cls:
            if component.kind == kind:
                return component
        raise ValueError(f"no MatrixOne component has kind {kind!r}")
