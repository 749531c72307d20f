"""The runtime's Prometheus metrics and their registry (controller-runtime's
``pkg/metrics``)."""
