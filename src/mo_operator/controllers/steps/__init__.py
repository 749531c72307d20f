"""The reconcile steps the controllers share: the set skeleton (``podset``), finding
the log service (``deps``), growing volumes (``volumes`` decides, ``expansion``
acts), the conditions every set reports (``status``, ``progress``), how a set says
that MatrixOne fails (``rpchealth``) and the LogSet's side of a BucketClaim
(``bucketclaims``). Steps use builders and the framework."""
