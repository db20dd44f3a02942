"""tf.distribute.cluster_resolver.TFConfigClusterResolver: the cluster and this task from the
TF_CONFIG environment variable, as TensorFlow reads it ({"cluster": {...}, "task": {"type": ...,
"index": ...}}), which `troupe launch` and the Kubernetes manifests set."""

import json
import os

from ..train.server_lib import ClusterSpec


class TFConfigClusterResolver:
    def __init__(self, task_type=None, task_id=None, rpc_layer=None, environment=None):
        self._task_type = task_type
        self._task_id = task_id
        self._rpc_layer = rpc_layer
        self._environment = environment

    def _config(self):
        text = os.environ.get("TF_CONFIG", "")
        if not text:
            return {}
        try:
            config = json.loads(text)
        except ValueError as e:
            raise ValueError("TF_CONFIG is not valid JSON: %s" % e) from None
        if not isinstance(config, dict):
            raise ValueError("TF_CONFIG must be a JSON object, got %r" % (config,))
        return config

    def cluster_spec(self):
        return ClusterSpec(self._config().get("cluster", {}))

    @property
    def task_type(self):
        if self._task_type is not None:
            return self._task_type
        return self._config().get("task", {}).get("type")

    @property
    def task_id(self):
        if self._task_id is not None:
            return self._task_id
        index = self._config().get("task", {}).get("index")
        return None if index is None else int(index)

    @property
    def environment(self):
        return self._environment or self._config().get("environment", "")

    def master(self, task_type=None, task_id=None, rpc_layer=None):
        task_type = self.task_type if task_type is None else task_type
        task_id = self.task_id if task_id is None else task_id
        if task_type is None or task_id is None:
            return ""
        address = self.cluster_spec().task_address(task_type, task_id)
        return "troupe://" + address
