"""Leader election on a Lease, with the write fence's deadline
(controller-runtime's ``pkg/leaderelection``)."""
