"""Validation of a custom resource against its CRD schema, giving the field
errors kube-apiserver gives (reason, message, path).

This is the schema part of the custom resource strategy's ``Validate``: the
OpenAPI value checks, the embedded-resource checks and the list-type
uniqueness checks, in that order. The root object's own TypeMeta and
ObjectMeta, CEL rules (``x-kubernetes-validations``) and update ratcheting
are not covered here.
"""

from __future__ import annotations

from typing import Any

from .fielderrors import Cause
from .listtype import validate_list_sets_and_maps
from .nodes import Schema
from .objectmeta import validate_embedded_resources
from .openapi import validate_openapi

__all__ = ["Cause", "validate"]


def validate(obj: Any, schema: Schema, *, root_path: str = "") -> list[Cause]:
    """Every schema violation of ``obj``, as Kubernetes reports it.

    ``root_path`` names where ``obj`` sits in the request (``status`` when a
    status subresource validates ``obj["status"]`` against its schema); an
    error about the value itself is reported at ``root_path``, or at
    ``<nil>`` when it is empty, as kube-apiserver does.
    """
    return (
        validate_openapi(obj, schema, root_path)
        + validate_embedded_resources(obj, schema, root_path)
        + validate_list_sets_and_maps(obj, schema, root_path)
    )
