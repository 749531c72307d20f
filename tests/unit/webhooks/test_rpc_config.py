"""A config that makes HAKeeper or a CN's query service compress its morpc answers
(``[logservice.rpc]`` / ``[cn.rpc]`` ``enable-compress = true``) is refused wherever
such a config is written, naming the field and the key: the operator's admin client
speaks uncompressed morpc and would read none of the answers. Settings that serve no
call of ours (TN, proxy, another component's table) are admitted."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from api.conftest import example

from mo_operator.api.defaulting import default
from mo_operator.api.validation import validate_create, validate_update

from .conftest import Served

Obj = dict[str, Any]

LOG_COMPRESS = "[logservice.rpc]\nenable-compress = true\n"
CN_COMPRESS = "[cn.rpc]\nenable-compress = true\n"
WHY = "is not supported: the operator's admin client speaks uncompressed morpc"


def _set(path: list[str | int]) -> Callable[[Obj, str], None]:
    def change(obj: Obj, config: str) -> None:
        target: Any = obj
        for step in path:
            target = target[step]
        target["config"] = config

    return change


REFUSED = [
    ("logset", ["spec"], LOG_COMPRESS, "spec.config", "logservice"),
    ("logset", ["spec"], "[LogService.RPC]\nEnable-Compress = true\n", "spec.config", "logservice"),
    ("logset", ["spec"], "logservice.rpc.enable-compress = true\n", "spec.config", "logservice"),
    ("cnset", ["spec"], CN_COMPRESS, "spec.config", "cn"),
    ("cnset", ["spec"], "[cn]\nrpc = { enable-compress = true }\n", "spec.config", "cn"),
    ("cnpool", ["spec", "template"], CN_COMPRESS, "spec.template.config", "cn"),
    ("matrixonecluster", ["spec", "logService"], LOG_COMPRESS, "spec.logService.config", "logservice"),
    ("matrixonecluster", ["spec", "cnGroups", 0], CN_COMPRESS, "spec.cnGroups[0].config", "cn"),
]


@pytest.mark.parametrize(("name", "where", "config", "field", "section"), REFUSED)
async def test_compressed_rpc_is_refused_naming_field_and_key(
    served: Served, name: str, where: list[str | int], config: str, field: str, section: str
) -> None:
    obj = example(name)
    kind = obj["kind"]
    obj = default(kind, obj)
    _set(where)(obj, config)
    response = await served.validate(kind, "CREATE", obj)
    assert response["allowed"] is False
    message = response["status"]["message"]
    assert f"{field}: [{section}.rpc] enable-compress = true {WHY}" in message, message


@pytest.mark.parametrize(
    ("name", "where", "config"),
    [
        ("logset", ["spec"], "[logservice.rpc]\nenable-compress = false\nmax-message-size = '10MiB'\n"),
        ("logset", ["spec"], CN_COMPRESS),
        ("cnset", ["spec"], LOG_COMPRESS),
        ("dnset", ["spec"], "[tn.rpc]\nenable-compress = true\n"),
        ("proxyset", ["spec"], "[proxy.rpc]\nenable-compress = true\n"),
        ("cnset", ["spec"], "[hakeeper-client]\nenable-compress = true\n"),
    ],
)
async def test_settings_that_serve_no_call_of_ours_are_admitted(
    served: Served, name: str, where: list[str | int], config: str
) -> None:
    obj = example(name)
    kind = obj["kind"]
    obj = default(kind, obj)
    _set(where)(obj, config)
    response = await served.validate(kind, "CREATE", obj)
    assert response["allowed"] is True, response


def test_a_stored_object_that_compresses_stays_editable() -> None:
    """Stored before the rule: an update that keeps the setting is not refused for it."""
    old = default("LogSet", example("logset"))
    old["spec"]["config"] = LOG_COMPRESS
    assert validate_create("LogSet", old)
    new = {**old, "metadata": {**old["metadata"], "labels": {"x": "y"}}}
    assert validate_update("LogSet", old, new) == []
