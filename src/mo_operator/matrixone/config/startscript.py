"""The ``start.sh`` each MatrixOne container runs: per-instance config, then ``mo-service``.

One ConfigMap serves every pod of a set, but each MatrixOne instance needs its own UUID
and addresses. The script derives them from the pod's name and IP (downward API env,
see layout.py), inserts them under the right ``[section]`` of a copy of the rendered
TOML, and execs ``/mo-service -cfg <copy>`` with the container's args. The UUID
schemes must equal identity.py's. Scripts contain no user input except the validated
proxy ``waitPluginAddr``, so a spec cannot inject shell.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from mo_operator.matrixone import layout, ports
from mo_operator.matrixone.component import Component
from mo_operator.matrixone.config.tomlconfig import ConfigError

_PROLOGUE = """#!/bin/sh
# Rendered by mo-operator: completes the config with this instance's identity and
# addresses, derived from the pod's name and IP, then runs MatrixOne.
set -eu

POD_NAME="${POD_NAME:-$HOSTNAME}"
"""

_HEADLESS_ADDR = 'ADDR="${POD_NAME}.${HEADLESS_SERVICE_NAME}.${NAMESPACE}.svc"\n'
_PROXY_ADDR = 'ADDR="${POD_NAME}.${NAMESPACE}.svc"\n'

_UUID_FROM_ADDR = (
    'UUID=$(echo "${ADDR}" | sha256sum | od -x | head -1 | awk \'{OFS="-"; print $2$3,$4,$5,$6,$7$8$9}\')\n'
)

_WAIT_FOR_DNS = """# A pod's DNS record may appear after it starts; log and TN stores advertise it and
# fail if it does not resolve, so wait for it (30s at most).
waited=0
until nslookup "${ADDR}" >/dev/null 2>&1; do
  if [ "${waited}" -ge 30 ]; then
    echo "timed out waiting for ${ADDR} to resolve" >&2
    exit 1
  fi
  echo "waiting for ${ADDR} to resolve" >&2
  sleep 1
  waited=$((waited + 1))
done
"""

_PLUGIN_ADDR = re.compile(r"([A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?):([0-9]{1,5})")


def _uuid_from_ordinal(digit: str) -> str:
    return (
        'ORDINAL="${POD_NAME##*-}"\n'
        'if [ -z "${HOSTNAME_UUID+set}" ]; then\n'
        f"  UUID=$(printf '00000000-0000-0000-0000-{digit}%011x' \"${{ORDINAL}}\")\n"
        "else\n"
        f"  {_UUID_FROM_ADDR}"
        "fi\n"
    )


def _section_pattern(section: str) -> str:
    return "^\\[" + section.replace(".", "\\.") + "\\]$"


def _copy_config(component: Component) -> str:
    source = f"{layout.config_dir(component)}/{layout.config_file(component)}"
    return f'conf=$(mktemp)\ncp "{source}" "${{conf}}"\n'


def _insert(section: str, lines: Sequence[str], var: str) -> str:
    """Shell that inserts ``lines`` right after the ``[section]`` header of ``$conf``.

    The renderers guarantee the header exists (the operator always sets a plain key in
    each such table) and remove the inserted keys from the TOML, so no key is doubled.
    """
    body = "\n".join(lines)
    return (
        f"{var}=$(mktemp)\n"
        f'cat <<EOF > "${{{var}}}"\n{body}\nEOF\n'
        f'sed -i "/{_section_pattern(section)}/r ${{{var}}}" "${{conf}}"\n'
    )


def _exec(memory_fs: bool) -> str:
    if memory_fs:
        # memoryFsSize: run the binary from a tmpfs so it is never paged out from disk.
        run = (
            f'MO_BIN="${{{layout.ENV_MO_BIN_PATH}}}/mo-service"\n'
            f'mkdir -p "${{{layout.ENV_MO_BIN_PATH}}}"\n'
            f'cp {layout.MO_SERVICE_BINARY} "${{MO_BIN}}"\n'
        )
    else:
        run = f"MO_BIN={layout.MO_SERVICE_BINARY}\n"
    return run + 'echo "${MO_BIN} -cfg ${conf} $*"\nexec "${MO_BIN}" -cfg "${conf}" "$@"\n'


def log_script(*, v2_keys: bool, memory_fs: bool) -> str:
    """The log store's script; ``v2_keys`` (MatrixOne >= 2.0) advertises host + ports.

    Before 2.0 the store advertises full addresses (raft/logservice on its DNS name,
    gossip on its IP plus a DNS-name ``gossip-address-v2``). Gossip seeds and the
    bootstrap settings come from their own ConfigMaps so that changing them (scaling,
    failover) does not roll the log pods.
    """
    if v2_keys:
        instance = [
            'uuid = "${UUID}"',
            'service-host = "${ADDR}"',
            f"raft-port = {ports.LOG_RAFT}",
            f"logservice-port = {ports.LOG_SERVICE}",
            f"gossip-port = {ports.LOG_GOSSIP}",
        ]
    else:
        instance = [
            'uuid = "${UUID}"',
            f'raft-address = "${{ADDR}}:{ports.LOG_RAFT}"',
            f'logservice-address = "${{ADDR}}:{ports.LOG_SERVICE}"',
            f'gossip-address = "${{POD_IP}}:{ports.LOG_GOSSIP}"',
            f'gossip-address-v2 = "${{ADDR}}:{ports.LOG_GOSSIP}"',
        ]
    pattern = _section_pattern("logservice")
    gossip = f"{layout.GOSSIP_PATH}/{layout.GOSSIP_FILE}"
    bootstrap = f"{layout.BOOTSTRAP_PATH}/{layout.BOOTSTRAP_FILE}"
    return (
        _PROLOGUE
        + _HEADLESS_ADDR
        + _uuid_from_ordinal("0")
        + _copy_config(Component.LOG)
        + _insert("logservice", instance, "instance")
        + "# gossip seeds go into [logservice]; the bootstrap table is appended\n"
        + f'seeds=$(mktemp)\nsed \'/{pattern}/d\' "{gossip}" > "${{seeds}}"\n'
        + f'sed -i "/{pattern}/r ${{seeds}}" "${{conf}}"\n'
        + f'sed \'/{pattern}/d\' "{bootstrap}" >> "${{conf}}"\n'
        + _WAIT_FOR_DNS
        + _exec(memory_fs)
    )


def tn_script(*, section: str, memory_fs: bool) -> str:
    """The TN store's script; ``section`` is ``dn`` or ``tn``, whichever the config uses."""
    return (
        _PROLOGUE
        + _HEADLESS_ADDR
        + _uuid_from_ordinal("1")
        + _copy_config(Component.TN)
        + _insert(
            section,
            [
                'uuid = "${UUID}"',
                f'service-address = "${{ADDR}}:{ports.TN_SERVICE}"',
                'service-host = "${ADDR}"',
            ],
            "instance",
        )
        + _insert(
            f"{section}.lockservice", [f'service-address = "${{ADDR}}:{ports.TN_LOCK_SERVICE}"'], "lock"
        )
        + _insert(
            f"{section}.LogtailServer", [f'service-address = "${{ADDR}}:{ports.TN_LOGTAIL}"'], "logtail"
        )
        + _WAIT_FOR_DNS
        + _exec(memory_fs)
    )


def cn_script(*, memory_fs: bool) -> str:
    """The CN's script: UUID from its DNS name, addresses on its pod IP."""
    return (
        _PROLOGUE
        + _HEADLESS_ADDR
        + _UUID_FROM_ADDR
        + _copy_config(Component.CN)
        + _insert(
            "cn",
            [
                'uuid = "${UUID}"',
                f'listen-address = "0.0.0.0:{ports.CN_RPC}"',
                f'service-address = "${{POD_IP}}:{ports.CN_RPC}"',
                f'sql-address = "${{POD_IP}}:{ports.CN_SQL}"',
                'service-host = "${POD_IP}"',
            ],
            "instance",
        )
        + _insert("cn.lockservice", [f'service-address = "${{POD_IP}}:{ports.CN_LOCK_SERVICE}"'], "lock")
        + _exec(memory_fs)
    )


def proxy_script(*, wait_plugin_addr: str | None, memory_fs: bool) -> str:
    """The proxy's script; with ``wait_plugin_addr`` (``host:port``) it first waits for that port."""
    wait = ""
    if wait_plugin_addr is not None:
        match = _PLUGIN_ADDR.fullmatch(wait_plugin_addr)
        if match is None or int(match.group(3)) > 65535:
            raise ConfigError(f"waitPluginAddr must be host:port, got {wait_plugin_addr!r}")
        target = f"{match.group(1)}/{match.group(3)}"
        wait = (
            f'while ! timeout 2 bash -c "</dev/tcp/{target}"; do\n'
            f'  echo "waiting for plugin {wait_plugin_addr}"\n'
            "  sleep 1\n"
            "done\n"
        )
    return (
        _PROLOGUE
        + _PROXY_ADDR
        + _UUID_FROM_ADDR
        + _copy_config(Component.PROXY)
        + _insert("proxy", ['uuid = "${UUID}"'], "instance")
        + wait
        + _exec(memory_fs)
    )
