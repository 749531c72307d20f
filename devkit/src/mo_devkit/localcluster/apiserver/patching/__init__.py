"""Patch engines of the embedded API server: JSON patch, merge patch,
strategic merge patch and server-side apply with managed fields.

A pure library over JSON dicts, so each engine can be tested against the
Kubernetes behaviour it mirrors without a server:

- ``typeinfo`` (with ``typerules`` and ``builtin_table``): how each list and
  map of a kind merges, from the built-in API types' tags or a CRD schema;
- ``json_patch``, ``merge_patch``, ``strategic_merge``: the three PATCH
  content types;
- ``managed_fields`` (over ``structured``, ``fieldpath`` and ``managers``):
  server-side apply and ``metadata.managedFields`` bookkeeping.
"""
