"""Rendering MatrixOne's configuration from a set's spec: TOML, start scripts, ConfigMap data.

Pure functions over plain dicts (specs as JSON, with the CRD's field names): the
controllers adapt their objects to these inputs and write the results. Entry points:
``config_map_data`` and ``hashed_name`` for the immutable per-set ConfigMap, and the
``log`` module for the LogSet's bootstrap and gossip ConfigMaps.
"""

from mo_operator.matrixone.config.configmap import HASH_LENGTH, config_map_data, content_hash, hashed_name
from mo_operator.matrixone.config.tomlconfig import ConfigError

__all__ = ["HASH_LENGTH", "ConfigError", "config_map_data", "content_hash", "hashed_name"]
