"""Controllers: the work queue, the wiring from informer events to it, the
Actor framework a kind's logic is written in, and when status is written
(controller-runtime's ``pkg/controller`` and ``pkg/reconcile``, client-go's
``util/workqueue``)."""
