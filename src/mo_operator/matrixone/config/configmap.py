"""Immutable, content-named ConfigMaps: one entry point for every component's data, and the name.

Our design differs from upstream's current mode on purpose: every config change makes
a new ConfigMap whose name carries a hash of its content (upstream's legacy mode,
``<name>-<hash>``). The pod spec then names the exact config it runs, a change rolls the
pods like any template change, and a rollback finds its old ConfigMap by name.

The hash is the first 10 hex digits of SHA-256 over the data as canonical JSON (keys
sorted, no whitespace, UTF-8). Upstream used 7 hex digits of xxhash64 over Go's JSON;
the names differ from upstream's, which is fine: the content differs too.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any, Final

from mo_operator.matrixone.component import Component
from mo_operator.matrixone.config import cn, log, proxy, tn, webui
from mo_operator.matrixone.config.memo import copy_data, memoized
from mo_operator.matrixone.config.tomlconfig import ConfigError
from mo_operator.matrixone.discovery import HAKeeperEndpoint

HASH_LENGTH: Final = 10


def content_hash(data: Mapping[str, str]) -> str:
    """The content hash of ConfigMap ``data`` (10 hex digits); equal data, equal hash."""
    canonical = json.dumps(dict(data), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    # surrogatepass: a lone surrogate (a JSON escape no API server stores) still hashes
    return hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()[:HASH_LENGTH]


def hashed_name(base: str, data: Mapping[str, str]) -> str:
    """``<base>-<content hash>``, e.g. ``mo-log-config-3f2a9c01be``."""
    return f"{base}-{content_hash(data)}"


@memoized(copy_data)
def config_map_data(
    component: Component,
    *,
    name: str,
    namespace: str,
    spec: Mapping[str, Any],
    shared_storage: Mapping[str, Any] | None = None,
    hakeeper: HAKeeperEndpoint | None = None,
) -> dict[str, str]:
    """The data of a set's immutable ConfigMap (its TOML and, except for the WebUI, start.sh).

    ``name``/``namespace``/``spec`` are the set's (the spec as JSON, CRD field names).
    TN, CN and proxy also need their LogSet's ``spec.sharedStorage`` and where its
    HAKeeper is; until the LogSet reports a discovery address this raises ConfigError,
    as upstream refuses to render without it. Deterministic: same input, same bytes.
    """
    if component is Component.LOG:
        return log.config_map_data(name=name, namespace=namespace, spec=spec)
    if component is Component.WEBUI:
        return webui.config_map_data(name=name, spec=spec)
    if shared_storage is None:
        raise ConfigError(f"{component.kind} config needs its LogSet's sharedStorage")
    if hakeeper is None or not hakeeper.discovery_address:
        raise ConfigError(f"{component.kind} config needs the LogSet's HAKeeper discovery address")
    if component is Component.TN:
        return tn.config_map_data(spec=spec, shared_storage=shared_storage, hakeeper=hakeeper)
    if component is Component.CN:
        return cn.config_map_data(spec=spec, shared_storage=shared_storage, hakeeper=hakeeper)
    return proxy.config_map_data(spec=spec, shared_storage=shared_storage, hakeeper=hakeeper)
