"""MatrixOne's own RPC (``morpc``), as the operator needs it: the real ``MOAdminProvider``.

Layers, each in its own module: ``protobuf`` (the wire format), ``pbmessage`` (messages
declared by field tables), ``logservice_pb``, ``query_pb`` and ``lock_pb`` (the
messages, from MatrixOne's ``.proto`` files), ``frame`` (morpc's frame codec),
``connection`` (one morpc connection, responses matched to requests by ID), ``hakeeper``
(finding and calling the HAKeeper), ``query`` (a CN's load from its query service),
``lockservice`` (the TN lock service a draining CN waits for) and ``provider`` (the
``MOAdmin`` adapter). See ``docs/matrixone-rpc.md`` for the sources and what is unverified.
"""
