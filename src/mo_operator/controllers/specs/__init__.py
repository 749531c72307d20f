"""The builders of the Kubernetes objects a MatrixOne set is made of (CloudNativePG's
``pkg/specs``): pod templates (``podtemplate``), StatefulSets, Deployments and how far
their rolls got (``statefulsets``, ``deployments``), Services, hashed ConfigMaps,
PodDisruptionBudgets (``disruption``), the Prometheus scrape settings
(``prometheus``) and readings of pods (``pods``). Builders use the framework (their
sync functions plan writes) and no step."""
