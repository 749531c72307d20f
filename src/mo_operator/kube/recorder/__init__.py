"""Kubernetes Events about our objects, aggregated and rate limited as
client-go's ``tools/record`` does (controller-runtime's ``pkg/recorder``)."""
