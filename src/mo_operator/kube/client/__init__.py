"""The API client: resources, sending one request reliably, watch streams,
HTTP keep-alive and discovery (controller-runtime's ``pkg/client``, client-go's
``rest``, ``watch`` and ``discovery``)."""
