"""The health and metrics endpoint (controller-runtime's ``pkg/healthz`` and
its metrics server)."""
