"""Self-signed certificate authorities and serving certificates, for the
webhook server and the embedded API server."""
