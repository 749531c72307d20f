"""Defaulting and validating admission webhooks, one module per kind."""
