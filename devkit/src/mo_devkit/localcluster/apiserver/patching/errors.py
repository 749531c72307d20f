"""The one error the patch engines raise for a patch that cannot apply."""

from __future__ import annotations


class PatchError(Exception):
    """A patch that cannot be applied to the object.

    ``code`` is the HTTP status kube-apiserver answers with for this failure:
    422 for a JSON patch that does not apply, 400 for a malformed patch
    document, 500 where kube-apiserver surfaces an internal error (a
    strategic patch naming no merge key, an apply configuration it cannot
    type).
    """

    def __init__(self, message: str, code: int = 422) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
