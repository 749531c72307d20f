"""Pure decision functions: each takes a snapshot of objects (plain dicts) and
returns what the real Kubernetes component would write. No I/O here, so every
rule is unit-testable without a server."""
