"""The Go operator's configuration directory, read so that its ConfigMap keeps
working: upstream mounts ConfigMap ``<name>-cm`` at ``/etc/mo-operator-cfg``, one
file per key, each file's text the YAML value of that key (``common/operatorcfg.go``).

``defaultArgs`` (``logService``, ``dn``, ``cn``, ``proxy``: lists of
``mo-service`` arguments) is honoured: the defaulting webhook gives a set without
``serviceArgs`` these. The other keys are read and logged, each saying what it
changes here, so a migrated ConfigMap does not silently mean less than it did.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

import yaml

__all__ = [
    "COMPONENTS",
    "DEFAULT_ARGS",
    "UPSTREAM_GATES",
    "OperatorConfigError",
    "UpstreamOperatorConfig",
    "load_operator_config",
    "parse_operator_config",
]

log = logging.getLogger(__name__)

COMPONENTS = ("logService", "dn", "cn", "proxy")
"""Upstream's ``DefaultArgs`` fields, the component names our defaulting uses too."""

UPSTREAM_GATES = frozenset({"s3Reclaim", "proxySupport", "backupRestore", "cnLabel", "cnPool"})
"""The Go operator's feature gates (``api/features/features.go``)."""
_GATES_HERE = (
    "every controller and rule runs here whatever the gate (S3 reclaim, proxies, "
    "backup and restore, CN labels and pools are always on), so it changes nothing"
)
_OTHER_KEYS = {
    "brConfig": "not read: use --backup-image",
    "bucketCleanJob": "not read: use --cleanup-image",
    "onlyWatchReleasedNS": "not read: use --namespace to manage only some namespaces",
}


class OperatorConfigError(Exception):
    """The configuration directory cannot be used; the message names the key and why."""


DEFAULT_ARGS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {component: ("-debug-http=:6060",) for component in COMPONENTS}
)
"""The Go operator's chart's ``defaultArgs`` (MatrixOne's debug HTTP server), which
the operator gives when it is run with no configuration directory, as the chart
and the plain manifests give them in theirs."""


@dataclass(frozen=True)
class UpstreamOperatorConfig:
    """The configuration; with no directory given, the Go operator's chart's defaults.
    A directory gives what it says: a ``defaultArgs`` it lacks gives none, as upstream."""

    default_args: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: dict(DEFAULT_ARGS))
    feature_gates: Mapping[str, bool] = field(default_factory=dict)


def _default_args(value: Any) -> dict[str, tuple[str, ...]]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise OperatorConfigError("defaultArgs: must be a mapping of component to a list of arguments")
    out: dict[str, tuple[str, ...]] = {}
    for component, args in value.items():
        if component not in COMPONENTS:
            raise OperatorConfigError(
                f"defaultArgs.{component}: unknown component, expected one of {', '.join(COMPONENTS)}"
            )
        if args is None:
            continue
        if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
            raise OperatorConfigError(f"defaultArgs.{component}: must be a list of strings")
        out[component] = tuple(args)
    return out


def _feature_gates(value: Any) -> dict[str, bool]:
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(v, bool) for v in value.values()):
        raise OperatorConfigError("featureGates: must be a mapping of gate name to true or false")
    return {str(k): v for k, v in value.items()}


def parse_operator_config(values: Mapping[str, Any]) -> UpstreamOperatorConfig:
    """The configuration from its keys' values; unknown keys are logged, not refused
    (upstream's YAML decoding ignores them too)."""
    config = UpstreamOperatorConfig(
        default_args=_default_args(values.get("defaultArgs")),
        feature_gates=_feature_gates(values.get("featureGates")),
    )
    for component, args in config.default_args.items():
        log.info("default serviceArgs of %s: %s", component, " ".join(args))
    for gate, enabled in config.feature_gates.items():
        why = _GATES_HERE if gate in UPSTREAM_GATES else "not a gate of the Go operator, ignored"
        log.info("feature gate %s=%s: %s", gate, str(enabled).lower(), why)
    for key in sorted(set(values) - {"defaultArgs", "featureGates"}):
        log.warning("operator config key %s: %s", key, _OTHER_KEYS.get(key, "unknown key, ignored"))
    return config


def load_operator_config(directory: Path) -> UpstreamOperatorConfig:
    """Read upstream's layout: every regular file of ``directory`` is one key, its
    text that key's YAML value. Names starting with ``.`` are skipped: a mounted
    ConfigMap also holds ``..data`` and its timestamped directory."""
    if not directory.is_dir():
        raise OperatorConfigError(f"{directory}: not a directory")
    values: dict[str, Any] = {}
    for path in sorted(directory.iterdir()):
        if path.name.startswith(".") or not path.is_file():
            continue
        try:
            values[path.name] = yaml.safe_load(path.read_text())
        except (OSError, UnicodeDecodeError, yaml.YAMLError) as e:
            raise OperatorConfigError(f"{path.name}: cannot be read as YAML: {e}") from e
    return parse_operator_config(values)
