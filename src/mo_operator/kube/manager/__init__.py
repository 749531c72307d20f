"""The manager: starts the informers, leader election and each controller,
and the glue from the client to the protocols those parts are written against
(controller-runtime's ``pkg/manager`` and ``pkg/cluster``)."""
