"""What still runs on a CN, asked of its query service, as the Go operator asks it.

Sources: matrixorigin/matrixone-operator 2301e3b54137033a4ffd8ad8d6598948583f76af
``pkg/querycli/query.go`` (the three requests) and ``pkg/controllers/cnstore/controller.go``
(``getSessionCount``, ``getPipelineCount``, ``getReplicaCount``); matrixorigin/matrixone
7c27538f5a3d5aab816c845b5fd0ab0ef07eb69e ``pkg/cnservice/server_query.go`` (the CN's
handlers) and ``pkg/common/morpc/method_based.go`` (unknown methods answer
``ErrNotSupported``).

- sessions: ``ShowProcessList`` with ``SysTenant: true`` lists every tenant's sessions.
  MatrixOne >= 1.1.2 marks sessions that came through the proxy (``FromProxy``); those are
  the user sessions that draining moves. Before, upstream counts sessions whose account is
  neither empty nor ``sys``.
- pipelines: ``GetPipelineInfo`` → ``Count`` (MatrixOne >= 1.1.2).
- replicas: ``GetReplicaCount`` → ``Count`` (sharding, MatrixOne >= 2.0).

Upstream picks by the CNSet's MatrixOne version; the admin interface does not pass it, so
we ask instead: a CN that answers ``GetPipelineInfo`` with ``ErrNotSupported`` predates
1.1.2, which is also when ``FromProxy`` appeared (upstream gates both features on the
same versions), and a CN without ``GetReplicaCount`` has no sharding replicas.
"""

from __future__ import annotations

from mo_operator.matrixone.admin import CNLoad
from mo_operator.matrixone.rpc.connection import Dialer, MorpcConnection, open_connection
from mo_operator.matrixone.rpc.errors import NotSupported
from mo_operator.matrixone.rpc.exchange import exchange
from mo_operator.matrixone.rpc.frame import APPROXIMATE_HEADER, DEFAULT_MAX_BODY
from mo_operator.matrixone.rpc.metrics import connecting
from mo_operator.matrixone.rpc.query_pb import (
    CmdMethod,
    GetPipelineInfoRequest,
    GetPipelineInfoResponse,
    Request,
    Response,
    Session,
    ShowProcessListRequest,
)


async def query(conn: MorpcConnection, request: Request, deadline: float) -> Response:
    """Send ``request`` to a query service; raise the error its answer carries."""
    return await exchange(
        conn,
        request,
        deadline,
        Response.decode,
        CmdMethod(request.cmd_method).name,
        "query.Response",
    )


def user_sessions(sessions: tuple[Session, ...], *, session_source: bool) -> int:
    """How many sessions draining must wait for (``getSessionCount``)."""
    if session_source:
        return sum(1 for s in sessions if s.from_proxy)
    return sum(1 for s in sessions if s.account not in ("", "sys"))


async def cn_load(
    query_address: str,
    deadline: float,
    *,
    connect_timeout: float = 2.0,
    max_frame: int = DEFAULT_MAX_BODY + APPROXIMATE_HEADER,
    dialer: Dialer = open_connection,
) -> CNLoad:
    """The sessions, pipelines and replicas on the CN whose query service is at ``query_address``.

    One short-lived connection per call: a CN is asked only while it drains, and CNs come
    and go, so keeping connections to them would only keep sockets to dead pods.
    """
    with connecting(CmdMethod.GetPipelineInfo.name, deadline):
        conn = await MorpcConnection.open(
            query_address,
            payload_message=False,
            connect_timeout=connect_timeout,
            max_frame=max_frame,
            dialer=dialer,
        )
    try:
        try:
            asked = Request(
                cmd_method=CmdMethod.GetPipelineInfo, get_pipeline_info_request=GetPipelineInfoRequest()
            )
            pipelines = await query(conn, asked, deadline)
            answer = pipelines.get_pipeline_info_response or GetPipelineInfoResponse()
            pipeline_count, modern = answer.count, True
        except NotSupported:
            pipeline_count, modern = 0, False
        listed = await query(
            conn,
            Request(
                cmd_method=CmdMethod.ShowProcessList,
                show_process_list_request=ShowProcessListRequest(sys_tenant=True),
            ),
            deadline,
        )
        shown = listed.show_process_list_response
        sessions = shown.sessions if shown is not None else ()
        try:
            replicas = await query(conn, Request(cmd_method=CmdMethod.GetReplicaCount), deadline)
            replica_count = replicas.get_replica_count.count
        except NotSupported:
            replica_count = 0
    finally:
        conn.abort()
    return CNLoad(
        sessions=user_sessions(sessions, session_source=modern),
        pipelines=max(0, pipeline_count),
        replicas=max(0, replica_count),
    )
