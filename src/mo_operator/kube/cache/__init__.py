"""Shared informers and their store: list and watch, the indexed cache of
frozen objects, and the check that a reconcile reads only the caches it
declared (controller-runtime's ``pkg/cache``, client-go's ``tools/cache``)."""
