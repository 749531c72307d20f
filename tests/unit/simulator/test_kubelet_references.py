"""The simulated kubelet does not start what a real one would not: a pod whose
volume mounts a missing Secret or ConfigMap starts no container (FailedMount), a
container whose env or envFrom reads a missing one (or a missing key) waits with
CreateContainerConfigError and the kubelet's message; once the object appears,
they start. Optional references are not required. (A cluster whose S3 secretRef
named a missing Secret went Ready on the simulator.)"""

from __future__ import annotations

from mo_devkit.localcluster.simulator.decisions.containers import Timing
from mo_devkit.localcluster.simulator.decisions.pod_status import sync_pod
from mo_devkit.localcluster.simulator.decisions.references import Unmet, unmet_references
from mo_devkit.localcluster.simulator.rules import RuleSet

from .factories import pod

T0 = 1_700_000_000.0
TIMING = Timing(start_delay=0.0, ready_delay=0.0, run_duration=0.5, time_scale=0.01)
Obj = dict


def lookup_of(*objects: tuple[str, str, Obj]) -> object:
    found = {(kind, name): obj for kind, name, obj in objects}
    return lambda kind, ns, name: found.get((kind, name))


def env_pod(**ref: object) -> Obj:
    container = {"name": "main", "image": "mo:1", "env": [{"name": "KEY", "valueFrom": ref}]}
    return pod(containers=[container])


def test_env_from_a_missing_secret_or_key_is_unmet_with_the_kubelets_message() -> None:
    p = env_pod(secretKeyRef={"name": "minio", "key": "AWS_ACCESS_KEY_ID"})
    assert unmet_references(p, lookup_of()).env == {"main": 'secret "minio" not found'}  # type: ignore[arg-type]
    other_key = lookup_of(("Secret", "minio", {"data": {"x": ""}}))
    assert unmet_references(p, other_key).env == {  # type: ignore[arg-type]
        "main": "couldn't find key AWS_ACCESS_KEY_ID in Secret default/minio"
    }
    right = lookup_of(("Secret", "minio", {"data": {"AWS_ACCESS_KEY_ID": "eA=="}}))
    assert not unmet_references(p, right)  # type: ignore[arg-type]
    optional = env_pod(secretKeyRef={"name": "minio", "key": "k", "optional": True})
    assert not unmet_references(optional, lookup_of())  # type: ignore[arg-type]


def test_a_volume_of_a_missing_configmap_or_secret_is_unmet() -> None:
    p = pod(volumes=[{"name": "certs", "secret": {"secretName": "s3-ca"}}])
    assert unmet_references(p, lookup_of()).volume == (  # type: ignore[arg-type]
        'MountVolume.SetUp failed for volume "certs" : secret "s3-ca" not found'
    )
    p = pod(volumes=[{"name": "cfg", "projected": {"sources": [{"configMap": {"name": "extra"}}]}}])
    assert 'configmap "extra" not found' in (unmet_references(p, lookup_of()).volume or "")  # type: ignore[arg-type]


def _sync(p: Obj, now: float, unmet: Unmet, tl: object = None) -> tuple[Obj, object]:
    d = sync_pod(
        p,
        timeline=tl,  # type: ignore[arg-type]
        now=now,
        rules=RuleSet(),
        verdict=None,
        timing=TIMING,
        host_ip="172.18.0.2",
        pod_ip="10.244.0.7",
        unmet=unmet,
    )
    return (dict(p, status=d.status) if d.status is not None else p), d.timeline


def test_a_container_without_its_environment_waits_then_starts_once_it_is_there() -> None:
    p = env_pod(secretKeyRef={"name": "minio", "key": "k"})
    missing = Unmet(env={"main": 'secret "minio" not found'})
    p, tl = _sync(p, T0, missing)
    p, tl = _sync(p, T0 + 5, missing, tl)
    (status,) = p["status"]["containerStatuses"]
    assert p["status"]["phase"] == "Pending"
    assert status["state"] == {
        "waiting": {"reason": "CreateContainerConfigError", "message": 'secret "minio" not found'}
    }
    p, tl = _sync(p, T0 + 6, Unmet(), tl)
    p, tl = _sync(p, T0 + 7, Unmet(), tl)
    assert "running" in p["status"]["containerStatuses"][0]["state"], p["status"]


def test_a_pod_whose_volumes_cannot_be_set_up_starts_nothing() -> None:
    p = pod(volumes=[{"name": "certs", "secret": {"secretName": "s3-ca"}}])
    missing = Unmet(volume='MountVolume.SetUp failed for volume "certs" : secret "s3-ca" not found')
    p, tl = _sync(p, T0, missing)
    p, tl = _sync(p, T0 + 60, missing, tl)
    assert p["status"]["phase"] == "Pending"
    assert p["status"]["containerStatuses"][0]["state"] == {"waiting": {"reason": "ContainerCreating"}}
    p, tl = _sync(p, T0 + 61, Unmet(), tl)
    p, tl = _sync(p, T0 + 62, Unmet(), tl)
    assert p["status"]["phase"] == "Running"
