"""Validation kube-apiserver does beyond a kind's OpenAPI schema: the rules
of built-in kinds' content (``kinds``) and of a CustomResourceDefinition
before it is stored (``crd``)."""
