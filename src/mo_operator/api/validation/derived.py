"""The names the operator derives from the names users give, checked at admission.

Every object the operator makes is named after its owner (``matrixone/names.py``):
a set's Services, StatefulSet and pods, a cluster's sets, a pool's CNSets, a job's
Job; and the owner's name is the value of labels on them. Kubernetes holds each of
those names to its own rule: a Service's name is a DNS-1035 label (a letter first,
no dots, at most 63 characters); a pod's name is its hostname, a DNS-1123 label;
a label value has at most 63 characters, which also bounds a StatefulSet's name
(its pods carry ``controller-revision-hash: <name>-<hash>``) and a Job's
(``job-name: <name>``). A name that passes its owner's own rule (a DNS-1123
subdomain of up to 253 characters) can break a derived one, and the API server
then refuses the operator's write on every retry. So each kind's name is checked
here against every name derived from it, and the error names the field, the limit
and the object that needs it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum
from typing import Any, Final

from .errors import FieldError, child, index
from .names import byte_len

__all__ = [
    "DERIVED",
    "MAX_DERIVED_LENGTH",
    "derived_name_errors",
    "group_name_errors",
    "name_limit",
]

MAX_DERIVED_LENGTH: Final = 63
"""A Service name, a pod's hostname, a label value: at most 63 characters."""

_HASH: Final = "0123456789"
"""A ControllerRevision's hash (kube-controller-manager's are at most 10 characters)."""
_ORDINAL: Final = "9999"
"""The longest pod ordinal of a set of at most 1,000 pods, with room for a roll's surge."""
_REVISION: Final = "0123456789"
"""A pool's template revision (``controllers/pool/cnpool.py``, ``REVISION_LENGTH``)."""

_DNS1035 = re.compile(r"[a-z]([-a-z0-9]*[a-z0-9])?")
_DNS1123_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")


class Rule(Enum):
    SERVICE = "a Service name (a DNS-1035 label)"
    HOSTNAME = "a pod's hostname (a DNS-1123 label)"
    LABEL = "a label value"


@dataclass(frozen=True)
class Derived:
    """One name derived from the owner's: ``template`` with ``{}`` for it."""

    what: str
    template: str
    rule: Rule

    @property
    def room(self) -> int:
        """The longest owner name this derived name takes."""
        return MAX_DERIVED_LENGTH - len(self.template.format(""))


def _set(suffix: str, *services: str, stateful: bool) -> tuple[Derived, ...]:
    """A component set's derived names: its Services, its pods, its workload's revision
    label (StatefulSets), and the instance label every object it makes carries."""
    workload = f"{{}}-{suffix}"
    out = [Derived("Service", f"{workload}{s}", Rule.SERVICE) for s in services]
    out.append(Derived("pod", f"{workload}-{_ORDINAL}", Rule.HOSTNAME))
    if stateful:
        out.append(Derived("pods' label controller-revision-hash", f"{workload}-{_HASH}", Rule.LABEL))
    out.append(Derived("label matrixorigin.io/instance", "{}", Rule.LABEL))
    return tuple(out)


def _of_pool_set(derived: Derived) -> Derived:
    """A CNSet name rule, for the CNSet ``<pool>-<revision>`` a pool makes."""
    return Derived(derived.what, derived.template.replace("{}", f"{{}}-{_REVISION}"), derived.rule)


DERIVED: Final[dict[str, tuple[Derived, ...]]] = {
    "LogSet": _set("log", "-headless", "-discovery", "-metric", stateful=True),
    "DNSet": _set("dn", "-headless", "-metric", stateful=True),
    "TNSet": _set("dn", "-headless", "-metric", stateful=True),
    "CNSet": _set("cn", "", "-headless", "-metric", stateful=False),
    "ProxySet": (
        Derived("Service", "{}-proxy", Rule.SERVICE),
        Derived("Service", "{}-proxy-metric", Rule.SERVICE),
        Derived("label matrixorigin.io/instance", "{}", Rule.LABEL),
    ),
    "WebUI": (
        Derived("Service", "{}-webui", Rule.SERVICE),
        Derived("label matrixorigin.io/instance", "{}", Rule.LABEL),
    ),
    "CNPool": (
        *(_of_pool_set(d) for d in _set("cn", "", "-headless", "-metric", stateful=False)),
        Derived("label matrixorigin.io/managed-by", "CNPool-{}", Rule.LABEL),
    ),
    "CNClaimSet": (Derived("claims' label matrixorigin.io/claimset", "{}", Rule.LABEL),),
    "BackupJob": (Derived("Job's label job-name", "{}", Rule.LABEL),),
    "RestoreJob": (Derived("Job's label job-name", "{}", Rule.LABEL),),
    # a run's BackupJob is <schedule>-<minutes since the epoch> (8 digits until 2160), and
    # the Job deleting its Backup's data that name and -rm
    "BackupSchedule": (Derived("deletion Job's label job-name", "{}-00000000-rm", Rule.LABEL),),
    "BucketClaim": (Derived("cleanup Job's label job-name", "job-{}", Rule.LABEL),),
}
"""Per kind, every name derived from an object's name that Kubernetes bounds. A
MatrixOneCluster's name has upstream's own, tighter bound (``cluster.py``: 46
characters, a DNS-1035 label), which its sets, its label and its RestoreJob fit;
its CN groups' names are checked by :func:`group_name_errors`."""


def name_limit(kind: str) -> int | None:
    """The longest name a ``kind`` may have for every derived name to fit (None: no bound)."""
    rules = DERIVED.get(kind)
    return min(d.room for d in rules) if rules else None


def _clip(name: str) -> str:
    return name if len(name) <= 80 else name[:80] + "..."


def _errors(kind: str, name: str, path: str, *, owner: str, extra: int = 0) -> list[FieldError]:
    """The errors of ``name`` at ``path``, which makes the ``kind`` named ``owner``:
    itself, or with ``extra`` characters before it (a cluster's name and a dash, in
    its CN groups' sets)."""
    rules = DERIVED.get(kind)
    if not rules or not name:
        return []
    errs = []
    binding = min(rules, key=lambda d: d.room)
    limit = binding.room - extra
    if byte_len(name) > limit:
        derived = _clip(binding.template.format(owner))
        errs.append(
            FieldError(
                path,
                f'Invalid value: "{_clip(name)}": must be no more than {limit} characters: it names the '
                f'{kind}\'s {binding.what} "{derived}", and {binding.rule.value} has at most '
                f"{MAX_DERIVED_LENGTH}",
            )
        )
    service = next((d for d in rules if d.rule is Rule.SERVICE), None)
    host = next((d for d in rules if d.rule is Rule.HOSTNAME), None)
    needing = service or host
    strict = service is not None and extra == 0
    if needing is not None and not (_DNS1035 if strict else _DNS1123_LABEL).fullmatch(name):
        shape = "start with a lower case letter, " if strict else ""
        errs.append(
            FieldError(
                path,
                f'Invalid value: "{_clip(name)}": must {shape}contain only lower case alphanumeric '
                f"characters or '-' (no dots) and end with an alphanumeric character: it names the "
                f'{kind}\'s {needing.what} "{_clip(needing.template.format(owner))}", which must be '
                f"{needing.rule.value}",
            )
        )
    return errs


def derived_name_errors(kind: str, metadata: Any) -> list[FieldError]:
    """What is wrong with an object's name for the names derived from it."""
    if not isinstance(metadata, dict):
        return []
    name = metadata.get("name") or metadata.get("generateName") or ""
    if not isinstance(name, str):
        return []
    return _errors(kind, name, "metadata.name", owner=name)


def group_name_errors(cluster: str, groups: list[dict[str, Any]], path: str) -> list[FieldError]:
    """Each CN group becomes the CNSet ``<cluster>-<group>``: the group's name is held
    to the CNSet's rules, less the cluster's name."""
    errs = []
    for i, group in enumerate(groups):
        name = group.get("name")
        if isinstance(name, str):
            errs += _errors(
                "CNSet",
                name,
                child(index(path, i), "name"),
                owner=f"{cluster}-{name}",
                extra=len(cluster) + 1,
            )
    return errs
