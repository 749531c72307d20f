"""``kubectl mo``: the operator seen and driven from kubectl, as CloudNativePG's
``kubectl cnpg`` is. The distribution installs the ``kubectl-mo`` script, which
kubectl finds on PATH as the plugin ``mo``.

It reads and writes only through the API, what the operator records there and
the fields and annotations it acts on (``matrixorigin.io/skip-sync``, the pod
template annotations of each component's ``overlay``), so it works against any
operator of this API, and needs no access to the operator itself."""
