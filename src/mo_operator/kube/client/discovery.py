"""Whether the API server serves the resources a process needs, from its
discovery documents (``/api/v1``, ``/apis/<group>/<version>``).

Informers of a resource the server does not serve (a custom resource whose
CRD is not installed) fail their list with 404 and retry, each on its own
backoff: a warning per informer per retry, none saying why. Waiting here,
before they start, says once what is missing and lets them start the moment
it is served.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from collections.abc import Callable, Iterable

from ..meta.errors import ApiError, Forbidden, NotFound, Unauthorized
from .client import ApiClient
from .resource import Resource

log = logging.getLogger(__name__)


async def unserved(client: ApiClient, resources: Iterable[Resource]) -> list[Resource]:
    """Those of ``resources`` the server's discovery does not list (one request
    per group version)."""
    missing: list[Resource] = []
    by_version = itertools.groupby(sorted(resources, key=lambda r: r.api_version), lambda r: r.api_version)
    for api_version, group in by_version:
        wanted = list(group)
        path = f"/apis/{api_version}" if "/" in api_version else f"/api/{api_version}"
        try:
            document = await client.rest.request("get", "discovery", "GET", path)
        except NotFound:
            missing.extend(wanted)  # the whole group version is unknown
            continue
        served = {entry.get("name") for entry in (document or {}).get("resources") or ()}
        missing.extend(r for r in wanted if r.plural not in served)
    return missing


async def wait_until_served(
    client: ApiClient,
    resources: Iterable[Resource],
    *,
    explain: Callable[[list[Resource]], str],
    poll_seconds: float = 5.0,
    remind_seconds: float = 60.0,
    clock: Callable[[], float] = time.monotonic,
) -> None:
    """Return once the server serves every one of ``resources``.

    While some are missing, logs ``explain(missing)`` as a warning: at once,
    then only when something else goes missing or every ``remind_seconds``
    (not as an install progresses), so a cluster waiting for its CRDs gets
    one clear line a minute, not a stream.
    Discovery that cannot be read (connection trouble, 5xx) is retried,
    reported as rarely; discovery refused (401/403) ends the wait, leaving
    the informers to report what they can and cannot list."""
    wanted = list(resources)
    said: set[str] | None = None
    said_at = float("-inf")
    key: set[str]
    while True:
        try:
            missing = await unserved(client, wanted)
        except (Forbidden, Unauthorized) as e:
            log.warning("cannot read API discovery (%s): starting the informers without checking", e)
            return
        except ApiError as e:
            key, message = {"discovery"}, f"cannot read API discovery ({e}), retrying"
        except ConnectionError as e:
            key, message = {"discovery"}, f"cannot read API discovery ({e}), retrying"
        else:
            if not missing:
                if said is not None:
                    log.info("the API server now serves every resource the informers watch")
                return
            key, message = set(map(str, missing)), explain(missing)
        if said is None or not key <= said or clock() - said_at >= remind_seconds:
            log.warning("%s", message)
            said, said_at = key, clock()
        await asyncio.sleep(poll_seconds)
