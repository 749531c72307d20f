"""What the operator's cache keeps of the kinds it only reads part of.

The cache is most of the operator's memory, and pods are most of the cache:
their containers, tolerations and scheduling fields are large, and no
controller reads them back. Pods are created (CN pods), or made by
StatefulSets and Deployments from templates we apply, and never compared
with a desired pod: a CN pod's template is compared by its template-hash
label. What controllers do read of a pod is its metadata, its status and,
of its spec, only the fields below; a controller that starts reading another
pod spec field adds it here (``tests/unit/controllers/test_cache_transforms.py``
checks the controllers' sources for reads of any other).
"""

from __future__ import annotations

from collections.abc import Mapping

from mo_operator.kube.informer import Transform, keep_spec_fields
from mo_operator.kube.resource import Resource

from . import resources as r

POD_SPEC_READ = ("volumes", "nodeName", "hostname", "subdomain")
"""Pod spec fields controllers read: mounted ConfigMaps, Secrets and claims; where it runs; its DNS name."""

CACHE_TRANSFORMS: Mapping[Resource, Transform] = {r.PODS: keep_spec_fields(POD_SPEC_READ)}
"""Per resource, the transform its informers apply before caching (others: the default)."""
