"""tf.train.ClusterSpec: the cases of TensorFlow's server_lib_test.py (ClusterSpecTest),
re-expressed for troupe."""

import pytest

import troupe as tf


def test_proto_dict_def_equivalences():
    cluster_spec = tf.train.ClusterSpec({"ps": ["ps0:2222", "ps1:2222"],
                                         "worker": ["worker0:2222", "worker1:2222",
                                                    "worker2:2222"]})
    cluster_def = cluster_spec.as_cluster_def()
    assert cluster_spec.as_dict() == tf.train.ClusterSpec(cluster_def).as_dict()
    assert cluster_spec.as_dict() == tf.train.ClusterSpec(cluster_spec).as_dict()
    assert cluster_spec.as_dict() == tf.train.ClusterSpec(cluster_spec.as_dict()).as_dict()
    assert [j.name for j in cluster_def.job] == ["ps", "worker"]
    assert cluster_def.job[0].tasks == {0: "ps0:2222", 1: "ps1:2222"}


def test_cluster_spec_accessors():
    original = {"ps": ["ps0:2222", "ps1:2222"],
                "worker": ["worker0:2222", "worker1:2222", "worker2:2222"],
                "sparse": {0: "sparse0:2222", 3: "sparse3:2222"}}
    cluster_spec = tf.train.ClusterSpec(original)
    assert original == cluster_spec.as_dict()
    assert cluster_spec.num_tasks("ps") == 2
    assert cluster_spec.num_tasks("worker") == 3
    assert cluster_spec.num_tasks("sparse") == 2
    with pytest.raises(ValueError, match="No such job in cluster"):
        cluster_spec.num_tasks("unknown")
    assert cluster_spec.task_address("ps", 0) == "ps0:2222"
    assert cluster_spec.task_address("sparse", 0) == "sparse0:2222"
    with pytest.raises(ValueError, match="No such job in cluster"):
        cluster_spec.task_address("unknown", 0)
    with pytest.raises(ValueError, match="No task with index 2 in job 'sparse'"):
        cluster_spec.task_address("sparse", 2)
    assert cluster_spec.job_tasks("ps") == ["ps0:2222", "ps1:2222"]
    assert cluster_spec.job_tasks("worker") == ["worker0:2222", "worker1:2222", "worker2:2222"]
    assert cluster_spec.job_tasks("sparse") == ["sparse0:2222", None, None, "sparse3:2222"]
    with pytest.raises(ValueError, match="No such job in cluster"):
        cluster_spec.job_tasks("unknown")
    assert cluster_spec.task_indices("ps") == [0, 1]
    assert cluster_spec.task_indices("worker") == [0, 1, 2]
    assert cluster_spec.task_indices("sparse") == [0, 3]
    with pytest.raises(ValueError, match="No such job in cluster"):
        cluster_spec.task_indices("unknown")
    assert sorted(cluster_spec.jobs) == ["ps", "sparse", "worker"]


def test_num_tasks_and_empty_jobs():
    cluster_spec = tf.train.ClusterSpec({"empty": [], "one": ["one0:2222"]})
    assert cluster_spec.num_tasks("empty") == 0
    assert cluster_spec.as_dict() == {"empty": {}, "one": ["one0:2222"]}
    assert cluster_spec.job_tasks("empty") == []


def test_sparse_job_as_dict_keeps_indices():
    cluster_spec = tf.train.ClusterSpec({"sparse": {1: "a:1", 3: "b:2"}})
    assert cluster_spec.as_dict() == {"sparse": {1: "a:1", 3: "b:2"}}
    # A sparse job whose indices happen to be 0..n-1 reads back as a list.
    assert tf.train.ClusterSpec({"j": {1: "b:1", 0: "a:1"}}).as_dict() == {"j": ["a:1", "b:1"]}


def test_eq():
    cluster_spec_1 = tf.train.ClusterSpec({"job": ["host:2222"]})
    cluster_spec_2 = tf.train.ClusterSpec({"job": ["host:2222"]})
    cluster_spec_3 = tf.train.ClusterSpec({"job": {0: "host:2222"}})
    assert cluster_spec_1 == cluster_spec_2
    assert cluster_spec_1 == cluster_spec_3
    assert not cluster_spec_1 != cluster_spec_3


def test_ne():
    cluster_spec_1 = tf.train.ClusterSpec({"job": ["host:2223"]})
    cluster_spec_2 = tf.train.ClusterSpec({"job": ["host:2222"]})
    cluster_spec_3 = tf.train.ClusterSpec({"job": ["host:2222"], "job2": ["host:2222"]})
    cluster_spec_4 = tf.train.ClusterSpec({"job": {1: "host:2222"}})
    assert cluster_spec_1 != cluster_spec_2
    assert cluster_spec_2 != cluster_spec_3
    assert cluster_spec_2 != cluster_spec_4


def test_str():
    cluster_spec = tf.train.ClusterSpec({"worker": ["w0:2222"], "ps": {1: "p1:2222"}})
    assert str(cluster_spec) == "ClusterSpec({'ps': {1: 'p1:2222'}, 'worker': ['w0:2222']})"


def test_empty_cluster_spec_is_false():
    assert not tf.train.ClusterSpec({})


def test_non_empty_cluster_spec_is_true():
    assert tf.train.ClusterSpec({"job": ["host:2222"]})


def test_unexpected_input():
    with pytest.raises(TypeError, match="must be a dictionary mapping one or more job names"):
        tf.train.ClusterSpec(["host:2222"])
    with pytest.raises(TypeError, match="must be a list or a dictionary"):
        tf.train.ClusterSpec({"job": "host:2222"})
    # Indices as TF_CONFIG's JSON spells them are converted, as TensorFlow does.
    assert tf.train.ClusterSpec({"job": {"1": "h:1"}}).task_address("job", 1) == "h:1"
    with pytest.raises(TypeError, match="Task index 'a' must be an integer"):
        tf.train.ClusterSpec({"job": {"a": "host:2222"}})
    with pytest.raises(TypeError, match="Task address 2222 must be bytes or unicode"):
        tf.train.ClusterSpec({"job": [2222]})
    with pytest.raises(TypeError, match="Job name 3 must be bytes or unicode"):
        tf.train.ClusterSpec({3: ["host:2222"]})


def test_tf_config_cluster_resolver(monkeypatch):
    monkeypatch.setenv("TF_CONFIG", '{"cluster": {"ps": ["a:1"], "worker": ["b:1", "c:1"]}, '
                                    '"task": {"type": "worker", "index": 1}}')
    resolver = tf.distribute.cluster_resolver.TFConfigClusterResolver()
    assert resolver.cluster_spec() == tf.train.ClusterSpec({"ps": ["a:1"],
                                                            "worker": ["b:1", "c:1"]})
    assert (resolver.task_type, resolver.task_id) == ("worker", 1)
    assert resolver.master() == "troupe://c:1"
    monkeypatch.setenv("TF_CONFIG", "{not json")
    with pytest.raises(ValueError, match="TF_CONFIG is not valid JSON"):
        resolver.cluster_spec()
