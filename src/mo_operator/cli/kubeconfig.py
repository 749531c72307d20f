"""Loading a kubeconfig as kubectl finds it (a file named, else ``$KUBECONFIG``,
``~/.kube/config``, then the pod's service account), with what is wrong said in
one line: a missing file, one that is not a kubeconfig, an unknown context."""

from __future__ import annotations

import yaml
from lightkube.config.kubeconfig import KubeConfig, SingleConfig
from lightkube.core.exceptions import ConfigError

from .errors import CliError


def load_kubeconfig(path: str | None, context: str | None = None) -> SingleConfig:
    """The cluster and credentials of ``context`` (default: the current one) in the
    kubeconfig at ``path``, or in the default one."""
    where = path or "the default kubeconfig ($KUBECONFIG, ~/.kube/config or in-cluster)"
    try:
        config = KubeConfig.from_file(path) if path else KubeConfig.from_env()
        single = config.get(context_name=context)
    except ConfigError as e:
        raise CliError(f"kubeconfig: {e}") from None
    except yaml.YAMLError as e:
        detail = " ".join(str(e).split())
        raise CliError(f"kubeconfig {where} is not YAML: {detail}") from None
    except (AttributeError, KeyError, TypeError, ValueError) as e:
        raise CliError(
            f"kubeconfig {where} is not a kubeconfig: its clusters, contexts or users are missing or"
            f" malformed ({type(e).__name__}: {e})"
        ) from None
    except OSError as e:
        raise CliError(f"kubeconfig {where}: {e.strerror or e}") from None
    if single is None:
        raise CliError(f"kubeconfig {where}: no context to use")
    return single
