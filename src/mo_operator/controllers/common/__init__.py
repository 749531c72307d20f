"""What the MatrixOne controllers share: desired-object comparison, pod
templates, Services, hashed ConfigMaps, dependency lookups, rollout state."""
