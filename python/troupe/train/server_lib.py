"""tf.train.ClusterSpec and tf.train.Server.

ClusterSpec follows TensorFlow's semantics exactly (jobs of dense lists or sparse dicts,
as_dict, job_tasks, num_tasks, task_address, task_indices, equality). A Server is one task of a
cluster: it listens on that task's address, with TLS when TROUPE_TLS_CERT, TROUPE_TLS_KEY and
TROUPE_TLS_CA are set (docs/security.md); without them it refuses to listen unless
TROUPE_INSECURE=1 says to run without TLS, as the `troupe` commands do.
"""

import os

from .. import _troupe
from .. import errors


class ClusterSpec:
    """A cluster: job name -> tasks, each a "host:port" address."""

    def __init__(self, cluster):
        if isinstance(cluster, dict):
            self._cluster_spec = {}
            for job_name, tasks in cluster.items():
                if isinstance(tasks, (list, tuple)):
                    job_tasks = {i: task for i, task in enumerate(tasks)}
                elif isinstance(tasks, dict):
                    job_tasks = {}
                    for i, task in tasks.items():
                        try:
                            job_tasks[int(i)] = task  # "1" as TF_CONFIG's JSON spells it
                        except (TypeError, ValueError):
                            raise TypeError("Task index %r must be an integer" % (i,)) from None
                else:
                    raise TypeError("The tasks for job %r must be a list or a dictionary from "
                                    "integers to strings." % job_name)
                self._cluster_spec[job_name] = job_tasks
            self._check()
        elif isinstance(cluster, ClusterSpec):
            self._cluster_spec = {job: dict(tasks)
                                  for job, tasks in cluster._cluster_spec.items()}
        elif isinstance(cluster, ClusterDef):
            self._cluster_spec = {job.name: dict(job.tasks) for job in cluster.job}
            self._check()
        else:
            raise TypeError("`cluster` must be a dictionary mapping one or more job names to "
                            "lists of network addresses, or a `ClusterDef` protocol buffer")

    def _check(self):
        for job_name, tasks in self._cluster_spec.items():
            if not isinstance(job_name, (str, bytes)):
                raise TypeError("Job name %r must be bytes or unicode" % (job_name,))
            for i, address in tasks.items():
                if not isinstance(i, int) or isinstance(i, bool):
                    raise TypeError("Task index %r must be an integer" % (i,))
                if not isinstance(address, (str, bytes)):
                    raise TypeError("Task address %r must be bytes or unicode" % (address,))

    def __bool__(self):
        return bool(self._cluster_spec)

    __nonzero__ = __bool__

    def __eq__(self, other):
        if isinstance(other, ClusterSpec):
            other = other._cluster_spec
        return self._cluster_spec == other

    def __ne__(self, other):
        return not self.__eq__(other)

    def __str__(self):
        key_values = self.as_dict()
        string_items = [repr(k) + ": " + repr(key_values[k]) for k in sorted(key_values)]
        return "ClusterSpec({" + ", ".join(string_items) + "})"

    __repr__ = __str__

    def as_dict(self):
        """{job: [addresses]} for a job whose indices are 0..n-1, else {job: {index: address}}
        (and {} for a job without tasks)."""
        ret = {}
        for job in self.jobs:
            task_indices = self.task_indices(job)
            if len(task_indices) == 0:
                ret[job] = {}
                continue
            if max(task_indices) + 1 == len(task_indices):
                ret[job] = self.job_tasks(job)
            else:
                ret[job] = {i: self.task_address(job, i) for i in task_indices}
        return ret

    def as_cluster_def(self):
        return ClusterDef([JobDef(job, dict(tasks))
                           for job, tasks in sorted(self._cluster_spec.items())])

    @property
    def jobs(self):
        return list(self._cluster_spec.keys())

    def _job(self, job_name):
        try:
            return self._cluster_spec[job_name]
        except KeyError:
            raise ValueError("No such job in cluster: %r" % job_name) from None

    def num_tasks(self, job_name):
        return len(self._job(job_name))

    def task_indices(self, job_name):
        return list(sorted(self._job(job_name).keys()))

    def task_address(self, job_name, task_index):
        job = self._job(job_name)
        try:
            return job[task_index]
        except KeyError:
            raise ValueError("No task with index %r in job %r" % (task_index, job_name)) from None

    def job_tasks(self, job_name):
        """The job's addresses by index, None where a sparse job has no task."""
        job = self._job(job_name)
        ret = [None for _ in range(max(job.keys()) + 1)] if job else []
        for i, task in job.items():
            ret[i] = task
        return ret

    def _native(self):
        return {job: {i: (a.decode() if isinstance(a, bytes) else a) for i, a in tasks.items()}
                for job, tasks in self._cluster_spec.items()}


class JobDef:
    def __init__(self, name, tasks):
        self.name = name
        self.tasks = tasks


class ClusterDef:
    """The cluster as a list of jobs (TensorFlow's ClusterDef message)."""

    def __init__(self, job=None):
        self.job = list(job or [])

    def __eq__(self, other):
        return isinstance(other, ClusterDef) and \
            [(j.name, j.tasks) for j in self.job] == [(j.name, j.tasks) for j in other.job]


class ServerDef:
    """Which task of which cluster a Server is (TensorFlow's ServerDef message)."""

    def __init__(self, cluster=None, job_name="", task_index=0, protocol="troupe",
                 default_session_config=None):
        self.cluster = cluster if cluster is not None else ClusterDef()
        self.job_name = job_name
        self.task_index = task_index
        self.protocol = protocol
        self.default_session_config = default_session_config


def _server_def(server_or_cluster_def, job_name, task_index, protocol, config):
    if isinstance(server_or_cluster_def, ServerDef):
        sd = server_or_cluster_def
        cluster = ClusterSpec(sd.cluster)
        job_name = job_name or sd.job_name
        task_index = sd.task_index if task_index is None else task_index
        protocol = protocol or sd.protocol
        config = config or sd.default_session_config
    else:
        cluster = ClusterSpec(server_or_cluster_def)
    if job_name is None:
        if len(cluster.jobs) == 1:
            job_name = cluster.jobs[0]
        else:
            raise ValueError("Must specify an explicit `job_name`.")
    if not isinstance(job_name, str):
        raise TypeError("job_name must be a string, got %r" % (job_name,))
    if task_index is None:
        indices = cluster.task_indices(job_name)
        if len(indices) == 1:
            task_index = indices[0]
        else:
            raise ValueError("Must specify an explicit `task_index`.")
    if not isinstance(task_index, int) or isinstance(task_index, bool):
        raise TypeError("task_index must be an int, got %r" % (task_index,))
    cluster.task_address(job_name, task_index)  # ValueError naming a missing job or task
    return ServerDef(cluster.as_cluster_def(), job_name, task_index, protocol or "troupe",
                     config)


def _check_transport_security():
    tls = [v for v in ("TROUPE_TLS_CERT", "TROUPE_TLS_KEY", "TROUPE_TLS_CA") if os.environ.get(v)]
    if tls:
        return  # the runtime checks them (InvalidArgument naming what is wrong)
    if os.environ.get("TROUPE_INSECURE") == "1":
        return
    raise errors.FailedPreconditionError(
        None, None,
        "a Server listens with TLS: set TROUPE_TLS_CERT, TROUPE_TLS_KEY and TROUPE_TLS_CA to "
        "this task's certificate, key and the cluster's CA (docs/security.md), or "
        "TROUPE_INSECURE=1 to run without TLS")


def _health_port():
    """TROUPE_HEALTH_PORT (troupe k8s's manifests set it): the port a task's health endpoint
    listens on, None for none."""
    text = os.environ.get("TROUPE_HEALTH_PORT", "")
    if not text:
        return None
    if not (text.isascii() and text.isdigit()) or int(text) > 65535:
        raise ValueError("TROUPE_HEALTH_PORT=%r is not a port (expected 0..65535, 0 for none)"
                         % text)
    return int(text) or None


class Server:
    """tf.train.Server(server_or_cluster_def, job_name=None, task_index=None, protocol=None,
    config=None, start=True): one task of a cluster, in this process."""

    def __init__(self, server_or_cluster_def, job_name=None, task_index=None, protocol=None,
                 config=None, start=True):
        self._server_def = _server_def(server_or_cluster_def, job_name, task_index, protocol,
                                       config)
        if config is not None and not hasattr(config, "_to_native"):
            raise TypeError("config must be a tf.ConfigProto, got %r" % (config,))
        self._config = config
        self._native = None
        if start:
            self.start()

    def start(self):
        if self._native is not None:
            return
        if not getattr(self, "_loopback_only", False):
            _check_transport_security()
        sd = self._server_def
        from ..session import ConfigProto
        config = (self._config or ConfigProto())._to_native()
        port = None if getattr(self, "_loopback_only", False) else _health_port()
        self._native = _troupe.Server.create(ClusterSpec(sd.cluster)._native(), sd.job_name,
                                             sd.task_index, sd.protocol, config)
        if port:
            # What `troupe node --health_port` serves, for the probes of troupe k8s's manifests.
            try:
                self._health = _troupe.HealthEndpoint.start(port, self._native)
            except Exception:
                self._native.stop()
                self._native = None
                raise
            print("%s: health checks at http://0.0.0.0:%d/healthz and /readyz"
                  % (self._native.task_name, self._health.port), flush=True)

    def join(self):
        """Blocks until the server stops. Ctrl-C stops it and raises KeyboardInterrupt."""
        if self._native is None:
            raise errors.FailedPreconditionError(None, None,
                                                 "join() on a Server that was not started")
        self._native.join()

    def stop(self):
        """Stops the task. Its health endpoint (TROUPE_HEALTH_PORT) answers 503 from now on
        (the readiness probe takes the task out of service) until the Server is collected."""
        if self._native is not None:
            self._native.stop()

    @property
    def server_def(self):
        return self._server_def

    @property
    def target(self):
        """The session target: "troupe://host:port" (reachable from any process)."""
        if self._native is not None:
            return self._native.target
        sd = self._server_def
        return "troupe://" + ClusterSpec(sd.cluster).task_address(sd.job_name, sd.task_index)

    @staticmethod
    def create_local_server(config=None, start=True):
        """A single-task server ("/job:localhost/task:0") listening on a free port of
        127.0.0.1, as TensorFlow's: its target, "troupe://127.0.0.1:<port>", is usable by other
        sessions and processes of this host. It uses the TLS credentials of the environment
        when they are set, and otherwise listens without TLS on loopback only (as TensorFlow's
        does), which needs no TROUPE_INSECURE."""
        server = Server({"localhost": ["127.0.0.1:0"]}, job_name="localhost", task_index=0,
                        config=config, start=False)
        server._loopback_only = True
        if start:
            server.start()
        return server
