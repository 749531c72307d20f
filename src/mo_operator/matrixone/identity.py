"""Store UUIDs, computed the way the start scripts compute them inside the pod.

HAKeeper knows stores only by UUID; the operator must map a pod to its store (to see
whether it registered, to drain or delete it) without asking the pod. So the UUID is a
pure function of the pod's name, here in Python and in start.sh (config/startscript.py)
in shell, and tests pin the two to the same values. Schemes follow upstream:
log ``…-0<ordinal %011x>``, TN ``…-1<ordinal %011x>``, CN and proxy (and log/TN with
``HOSTNAME_UUID``) a hash of the DNS name.
"""

from __future__ import annotations

import hashlib

from mo_operator.matrixone import names
from mo_operator.matrixone.component import Component


def log_store_uuid(ordinal: int) -> str:
    """UUID of log store ``ordinal``: ``00000000-0000-0000-0000-0<ordinal as 11 hex digits>``."""
    return f"00000000-0000-0000-0000-0{ordinal:011x}"


def tn_store_uuid(ordinal: int) -> str:
    """UUID of TN store ``ordinal``: ``00000000-0000-0000-0000-1<ordinal as 11 hex digits>``."""
    return f"00000000-0000-0000-0000-1{ordinal:011x}"


def dns_store_uuid(address: str) -> str:
    """The UUID ``echo $ADDR | sha256sum | od -x | head -1 | awk …`` prints for ``address``.

    ``od -x`` reads the first 16 characters of the hex digest as eight little-endian
    16-bit words; ``awk`` joins them 2-1-1-1-3. Upstream's ``GetCNPodUUID`` does the same
    in Go; both hash the address followed by the newline ``echo`` adds.
    """
    digest = hashlib.sha256(f"{address}\n".encode()).hexdigest()
    words = [f"{ord(digest[i + 1]):02x}{ord(digest[i]):02x}" for i in range(0, 16, 2)]
    return f"{words[0]}{words[1]}-{words[2]}-{words[3]}-{words[4]}-{words[5]}{words[6]}{words[7]}"


def cn_store_uuid(pod: str, cnset_name: str, namespace: str) -> str:
    """UUID of the CN in pod ``pod`` of CNSet ``cnset_name`` (hash of its headless FQDN)."""
    headless = names.headless_service_name(Component.CN, cnset_name)
    return dns_store_uuid(names.pod_fqdn(pod, headless, namespace))


def proxy_uuid(pod: str, namespace: str) -> str:
    """UUID of a proxy: hash of ``<pod>.<ns>.svc`` (proxies have no headless Service)."""
    return dns_store_uuid(f"{pod}.{namespace}.svc")
