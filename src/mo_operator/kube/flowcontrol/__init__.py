"""Backoff and token-bucket rate limiting, shared by the client, the work
queue and the event recorder (client-go's ``util/flowcontrol``)."""
