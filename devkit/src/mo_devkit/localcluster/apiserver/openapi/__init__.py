"""The OpenAPI v2 and v3 documents kubectl and client tools read: the
document builders, the models of built-in kinds, and the resource paths."""
