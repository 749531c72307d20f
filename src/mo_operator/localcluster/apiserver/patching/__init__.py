"""Patch engines of the embedded API server: JSON patch, merge patch,
strategic merge patch and server-side apply with managed fields."""
