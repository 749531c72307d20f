"""Image references, read as the kubelet reads them (the distribution project's
``reference`` grammar, ``docker.io/distribution/reference/regexp.go``).

kube-apiserver stores any non-empty image string; a reference the kubelet cannot
parse leaves the pod waiting with ``InvalidImageName`` forever. Checked at
admission, such an image is refused with the field it is in.
"""

from __future__ import annotations

import re

from ..limits import MAX_REPOSITORY_LENGTH, MAX_TAG_LENGTH

__all__ = ["image_errors", "repository_errors", "tag_errors"]

_ALNUM = r"[a-z0-9]+"
_SEPARATOR = r"(?:[._]|__|[-]+)"
_PATH_COMPONENT = rf"{_ALNUM}(?:{_SEPARATOR}{_ALNUM})*"
_DOMAIN_COMPONENT = r"(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])"
_IPV6 = r"\[(?:[a-fA-F0-9:]+)\]"
_HOST = rf"(?:{_DOMAIN_COMPONENT}(?:\.{_DOMAIN_COMPONENT})*|{_IPV6})"
_DOMAIN = rf"{_HOST}(?::[0-9]+)?"
_NAME = re.compile(rf"(?:{_DOMAIN}/)?{_PATH_COMPONENT}(?:/{_PATH_COMPONENT})*")
_TAG = re.compile(r"[\w][\w.-]{0,127}", re.ASCII)
_DIGEST = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}")

_NAME_FORMAT = (
    "must be a repository such as registry.example.com:5000/matrixorigin/matrixone: path components of "
    "lower case letters and digits, separated by '.', '_', '__' or dashes"
)


def repository_errors(name: str) -> list[str]:
    """What is wrong with an image repository (no tag, no digest)."""
    if len(name) > MAX_REPOSITORY_LENGTH:
        return [f"must be no more than {MAX_REPOSITORY_LENGTH} characters"]
    if not _NAME.fullmatch(name):
        if _NAME.fullmatch(name.lower()):
            return ["repository name must be lowercase"]
        return [_NAME_FORMAT]
    return []


def tag_errors(tag: str) -> list[str]:
    """What is wrong with an image tag."""
    if len(tag) > MAX_TAG_LENGTH:
        return [f"must be no more than {MAX_TAG_LENGTH} characters"]
    if not _TAG.fullmatch(tag):
        return [
            "must be an image tag: letters, digits, '_', '.' and '-', not starting with '.' or '-' "
            "(semantic version build metadata, '+...', belongs in semanticVersion)"
        ]
    return []


def image_errors(image: str) -> list[str]:
    """What is wrong with an image reference ``name[:tag][@digest]``."""
    rest, at, digest = image.partition("@")
    if at and not _DIGEST.fullmatch(digest):
        return ["the digest after '@' must be an algorithm and its hex value, e.g. sha256:0123..."]
    slash = rest.rfind("/")
    colon = rest.rfind(":")
    name, tag = (rest[:colon], rest[colon + 1 :]) if colon > slash else (rest, None)
    errs = repository_errors(name)
    if tag is not None:
        errs += [f"tag {m}" for m in tag_errors(tag)]
    return errs
