"""Differential tests: the same requests against the embedded API server and a
real kube-apiserver, whose normalised transcripts must be equal."""
