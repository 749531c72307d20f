"""Kubernetes protobuf request bodies: the wire format, the schema table
generated from the Go types, and the decoder to JSON objects."""
