"""The generic controller runtime: client, informers, cache, work queue,
controllers, actors, leader election, webhook server and metrics.

It knows nothing of MatrixOne and never imports the local cluster.
"""
