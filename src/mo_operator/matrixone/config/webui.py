"""Config of a WebUI: the dashboard backend's TOML (it has no start script).

Upstream points the backend at the cluster's ``tp`` CN group with a fixed initial
credential (``dump``/``111``) written into a ConfigMap. We keep its keys, but the
credential is the cluster's own (``<mo>-credential``), so the TOML holds a secret and
the operator stores it in a Secret, never a ConfigMap.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mo_operator.matrixone import layout, names, ports
from mo_operator.matrixone.config.common import user_over_defaults
from mo_operator.matrixone.config.tomlconfig import dumps, set_in

DB_USER = "dump"
DB_PASSWORD = "111"
"""Upstream's fixed initial credential, used when no other is given."""


def render_toml(
    *, name: str, spec: Mapping[str, Any], username: str = DB_USER, password: str = DB_PASSWORD
) -> str:
    """The backend's ``config.toml``."""
    doc = user_over_defaults(spec, {})
    set_in(doc, ["db", "host"], names.webui_cn_host(name))
    set_in(doc, ["db", "port"], ports.CN_SQL)
    set_in(doc, ["db", "username"], username)
    set_in(doc, ["db", "password"], password)
    set_in(doc, ["log", "level"], "info")
    set_in(doc, ["log", "format"], "console")
    set_in(doc, ["server", "host"], "0.0.0.0")
    set_in(doc, ["server", "port"], ports.WEBUI_BACKEND)
    set_in(doc, ["server", "tokenEffectiveTime"], 2)
    set_in(doc, ["server", "mode"], "playground")
    return dumps(doc)


def config_map_data(
    *, name: str, spec: Mapping[str, Any], username: str = DB_USER, password: str = DB_PASSWORD
) -> dict[str, str]:
    """The WebUI's config files: ``config.toml`` (it holds the credential: store it in a Secret)."""
    return {layout.CONFIG_FILE: render_toml(name=name, spec=spec, username=username, password=password)}
