"""The controllers' glue to the runtime: what every controller reaches (``env``:
client, caches, MatrixOne, settings, clock), how a plan of writes is made and
written (``writes``, ``desired``: zero writes for an object already as desired,
``unseen``: our own writes the cache has not shown yet), the API resources by name
(``resources``), the spec as admitted (``admission``), the Secrets and ConfigMaps a
spec names (``references``), what the cache keeps (``cache_transforms``) and the
metadata of the objects we create (``meta``). It imports no builder and no step."""
