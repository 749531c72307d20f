"""Structural-schema handling for custom resources: validation, defaulting
and pruning, as kube-apiserver's apiextensions code does it."""
