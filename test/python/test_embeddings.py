"""Sparse gradients and updates (TensorFlow 1.x's embedding_ops, state_ops.scatter_* and
unique tests, ported): the gradient of a gather is IndexedSlices and optimizers update only its
rows, matching the dense update; scatter ops and unique against numpy, duplicates included;
out-of-range ids are InvalidArgument naming the node and the id; LazyAdam leaves untouched rows
alone; an embedding lookup runs where its table lives."""

import numpy as np
import pytest

import troupe as tf

TABLE = np.arange(24, dtype=np.float64).reshape(8, 3) / 10.0 + 0.5
IDS = np.array([5, 1, 5, 0, 7], np.int32)
WEIGHTS = np.linspace(-1.0, 1.0, 15).reshape(5, 3)


def embedding_loss(table, ids=IDS):
    rows = tf.nn.embedding_lookup(table, ids)
    return tf.reduce_sum(tf.square(rows * WEIGHTS[:len(ids)])) * 0.5


def numpy_gradient(table, ids=IDS):
    dense = np.zeros_like(table)
    np.add.at(dense, ids, table[ids] * WEIGHTS[:len(ids)] ** 2)
    return dense


def test_gather_gradient_is_indexed_slices():
    table = tf.Variable(TABLE, name="table")
    (grad,) = tf.gradients(embedding_loss(table), [table])
    assert isinstance(grad, tf.IndexedSlices)
    assert grad.dtype == tf.float64
    assert grad.values.shape.as_list()[1:] == [3]
    dense = tf.convert_to_tensor(grad)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        values, indices, shape, densified = sess.run(
            [grad.values, grad.indices, grad.dense_shape, dense])
    np.testing.assert_array_equal(indices, IDS)
    np.testing.assert_array_equal(shape, [8, 3])
    np.testing.assert_allclose(values, TABLE[IDS] * WEIGHTS ** 2)
    np.testing.assert_allclose(densified, numpy_gradient(TABLE))


def test_two_lookups_concatenate_and_a_dense_use_densifies():
    table = tf.Variable(TABLE, name="table")
    loss = embedding_loss(table) + embedding_loss(table, np.array([2, 5], np.int32))
    (sparse,) = tf.gradients(loss, [table])
    assert isinstance(sparse, tf.IndexedSlices)
    (dense,) = tf.gradients(loss + tf.reduce_sum(table), [table])
    assert isinstance(dense, tf.Tensor)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        indices, densified = sess.run([sparse.indices, tf.convert_to_tensor(sparse)])
        full = sess.run(dense)
    np.testing.assert_array_equal(sorted(indices), sorted(list(IDS) + [2, 5]))
    expected = numpy_gradient(TABLE) + numpy_gradient(TABLE, np.array([2, 5]))
    np.testing.assert_allclose(densified, expected)
    np.testing.assert_allclose(full, expected + 1.0)


def test_gradient_check_of_the_lookup_against_finite_differences():
    table = tf.Variable(TABLE, name="table")
    loss = embedding_loss(table)
    (grad,) = tf.gradients(loss, [table])
    eps = 1e-6
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        analytic = sess.run(tf.convert_to_tensor(grad))
        for row, col in [(5, 0), (1, 2), (3, 1), (7, 2)]:
            values = []
            for sign in (1, -1):
                shifted = TABLE.copy()
                shifted[row, col] += sign * eps
                sess.run(table.assign(shifted))
                values.append(sess.run(loss))
            numeric = (values[0] - values[1]) / (2 * eps)
            assert abs(analytic[row, col] - numeric) < 1e-6


@pytest.mark.parametrize("name,reference", [
    ("scatter_update", None),
    ("scatter_add", np.add.at),
    ("scatter_sub", np.subtract.at),
    ("scatter_mul", np.multiply.at),
    ("scatter_div", np.divide.at),
    ("scatter_min", np.minimum.at),
    ("scatter_max", np.maximum.at),
])
def test_scatter_ops_against_numpy(name, reference):
    table = tf.Variable(TABLE, name="table")
    ids = np.array([3, 0, 3, 6], np.int64)
    updates = np.linspace(0.5, 2.0, 12).reshape(4, 3)
    out = getattr(tf, name)(table, ids, updates)
    expected = TABLE.copy()
    if reference is None:
        for i, row in enumerate(ids):
            expected[row] = updates[i]
    else:
        reference(expected, ids, updates)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_allclose(sess.run(out), expected)
        np.testing.assert_allclose(sess.run(table), expected)


def test_scatter_on_an_integer_variable_and_empty_ids():
    counts = tf.Variable(np.zeros([4], np.int32), name="counts")
    add = tf.scatter_add(counts, [1, 1, 3], [1, 1, 1])
    nothing = tf.scatter_add(counts, np.zeros([0], np.int32), np.zeros([0], np.int32))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_array_equal(sess.run(add), [0, 2, 0, 1])
        np.testing.assert_array_equal(sess.run(nothing), [0, 2, 0, 1])


def test_out_of_range_ids_are_invalid_argument_naming_node_and_id():
    table = tf.Variable(TABLE, name="table")
    bad_scatter = tf.scatter_add(table, [1, 8], np.ones([2, 3]), name="bad_scatter")
    ids = tf.placeholder(tf.int32, [None])
    rows = tf.nn.embedding_lookup(table, ids)
    train = tf.train.AdagradOptimizer(0.1).minimize(tf.reduce_sum(rows))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"bad_scatter.*indices\[1\] = 8 is not in \[0, 8\)"):
            sess.run(bad_scatter)
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"GatherV2.*= 9"):
            sess.run(train, {ids: [2, 9]})
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"= -1"):
            sess.run(rows, {ids: [-1]})
        np.testing.assert_allclose(sess.run(table), TABLE)
        sess.run(train, {ids: []})  # an empty batch of ids: nothing moves
        np.testing.assert_allclose(sess.run(table), TABLE)


def test_scatter_argument_errors():
    table = tf.Variable(TABLE, name="table")
    with pytest.raises(TypeError, match="ref must be a Variable"):
        tf.scatter_add(tf.constant(TABLE), [0], [[1.0, 1.0, 1.0]])
    with pytest.raises(TypeError, match="indices must be int32 or int64"):
        tf.scatter_add(table, [0.5], [[1.0, 1.0, 1.0]])
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"indices.shape \+ ref.shape\[1:\]"):
        tf.scatter_add(table, [0], [[1.0, 1.0]])


def test_unique():
    y, idx = tf.unique(tf.constant([7, 3, 7, 9, 3, 3]))
    y64, idx64 = tf.unique(tf.constant(["b", "a", "b"]), out_idx=tf.int64)
    assert idx64.dtype == tf.int64
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(y), [7, 3, 9])
        np.testing.assert_array_equal(sess.run(idx), [0, 1, 0, 2, 1, 1])
        assert list(sess.run(y64)) == [b"b", b"a"]
        np.testing.assert_array_equal(sess.run(idx64), [0, 1, 0])
    with pytest.raises(TypeError, match="out_idx"):
        tf.unique([1, 2], out_idx=tf.float32)


def train_table(optimizer, densify, steps, ids_per_step=None):
    table = tf.Variable(TABLE, name="table")
    ids = tf.placeholder(tf.int32, [None])
    rows = tf.nn.embedding_lookup(table, ids)
    weights = tf.placeholder(tf.float64, [None, 3])
    loss = tf.reduce_sum(tf.square(rows * weights)) * 0.5
    grads_and_vars = optimizer.compute_gradients(loss, [table])
    assert isinstance(grads_and_vars[0][0], tf.IndexedSlices)
    if densify:
        grads_and_vars = [(tf.convert_to_tensor(g), v) for g, v in grads_and_vars]
    train = optimizer.apply_gradients(grads_and_vars)
    ids_per_step = ids_per_step or [IDS] * steps
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for step_ids in ids_per_step:
            sess.run(train, {ids: step_ids, weights: WEIGHTS[:len(step_ids)]})
        return sess.run(table)


OPTIMIZERS = {
    "GradientDescent": lambda: tf.train.GradientDescentOptimizer(0.1),
    "Momentum": lambda: tf.train.MomentumOptimizer(0.1, 0.9),
    "Adagrad": lambda: tf.train.AdagradOptimizer(0.1),
    "Adam": lambda: tf.train.AdamOptimizer(0.1),
    "RMSProp": lambda: tf.train.RMSPropOptimizer(0.1),
    "Adadelta": lambda: tf.train.AdadeltaOptimizer(1.0),
    "Ftrl": lambda: tf.train.FtrlOptimizer(0.1, l1_regularization_strength=0.001),
    "ProximalGradientDescent": lambda: tf.train.ProximalGradientDescentOptimizer(0.1),
    "ProximalAdagrad": lambda: tf.train.ProximalAdagradOptimizer(0.1),
}


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_sparse_update_matches_dense_on_touched_rows(name):
    sparse = train_table(OPTIMIZERS[name](), densify=False, steps=1)
    tf.reset_default_graph()
    dense = train_table(OPTIMIZERS[name](), densify=True, steps=1)
    touched = sorted(set(IDS))
    untouched = sorted(set(range(8)) - set(IDS))
    np.testing.assert_allclose(sparse[touched], dense[touched], rtol=1e-12)
    np.testing.assert_array_equal(sparse[untouched], TABLE[untouched])
    assert not np.allclose(sparse[touched], TABLE[touched])


@pytest.mark.parametrize("name", ["GradientDescent", "Adagrad", "Adam"])
def test_sparse_training_equals_dense_over_steps(name):
    # These three leave a row without gradient as it is, so sparse and dense agree everywhere.
    steps = [IDS, np.array([2, 2, 6], np.int32), IDS[:2]]
    sparse = train_table(OPTIMIZERS[name](), densify=False, steps=3, ids_per_step=steps)
    tf.reset_default_graph()
    dense = train_table(OPTIMIZERS[name](), densify=True, steps=3, ids_per_step=steps)
    np.testing.assert_allclose(sparse, dense, rtol=1e-12)


def test_lazy_adam_moves_only_the_rows_of_this_step():
    steps = [np.array([1, 2], np.int32), np.array([2], np.int32)]
    lazy = train_table(tf.contrib.opt.LazyAdamOptimizer(0.1), False, 2, steps)
    tf.reset_default_graph()
    eager = train_table(tf.train.AdamOptimizer(0.1), False, 2, steps)
    tf.reset_default_graph()
    first_only = train_table(tf.contrib.opt.LazyAdamOptimizer(0.1), False, 1, steps[:1])
    # Row 1 had a gradient in step 1 only: LazyAdam leaves it where step 1 put it, Adam's
    # decaying moments move it again.
    np.testing.assert_array_equal(lazy[1], first_only[1])
    assert not np.allclose(eager[1], first_only[1])
    np.testing.assert_array_equal(lazy[0], TABLE[0])


def test_embedding_lookup_is_colocated_with_its_table():
    with tf.device(tf.train.replica_device_setter(ps_tasks=2)):
        first = tf.Variable(TABLE, name="first")
        table = tf.Variable(TABLE, name="table")
        rows = tf.nn.embedding_lookup(table, IDS)
    gathers = [op for op in tf.get_default_graph().get_operations() if op.type == "GatherV2"]
    assert len(gathers) == 1
    assert table.device == "/job:ps/task:1"
    assert gathers[0].get_attr("_class") == ["loc:@table"]
    assert rows.device.startswith("/job:worker")
    assert first.device == "/job:ps/task:0"


def shards_of(table, n, strategy):
    """The shards TensorFlow's partition_strategy puts `table`'s rows in."""
    if strategy == "mod":
        return [table[i::n] for i in range(n)]
    sizes = [len(table) // n + (1 if i < len(table) % n else 0) for i in range(n)]
    bounds = np.cumsum([0] + sizes)
    return [table[bounds[i]:bounds[i + 1]] for i in range(n)]


@pytest.mark.parametrize("strategy", ["mod", "div"])
@pytest.mark.parametrize("num_shards", [2, 3])
@pytest.mark.parametrize("id_dtype", [np.int32, np.int64])
def test_sharded_lookup_equals_the_whole_table(strategy, num_shards, id_dtype):
    table = np.arange(30, dtype=np.float64).reshape(10, 3)
    shards = [tf.Variable(s, name="shard") for s in shards_of(table, num_shards, strategy)]
    ids = np.array([[9, 0, 4], [4, 7, 1]], id_dtype)
    rows = tf.nn.embedding_lookup(shards, ids, partition_strategy=strategy)
    assert rows.shape.as_list() == [2, 3, 3]
    clipped = tf.nn.embedding_lookup(shards, ids, partition_strategy=strategy, max_norm=5.0)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_array_equal(sess.run(rows), table[ids])
        norms = np.linalg.norm(table[ids], axis=-1, keepdims=True)
        np.testing.assert_allclose(sess.run(clipped),
                                   table[ids] * np.minimum(1.0, 5.0 / norms))
        empty = sess.run(tf.nn.embedding_lookup(shards, np.zeros([0], id_dtype),
                                                partition_strategy=strategy))
        assert empty.shape == (0, 3)


def test_sharded_training_equals_the_whole_table():
    steps = [IDS, np.array([2, 2, 6], np.int32), IDS[:2]]
    whole = train_table(tf.train.AdagradOptimizer(0.1), False, 3, steps)
    tf.reset_default_graph()
    shards = [tf.Variable(s, name="shard") for s in shards_of(TABLE, 3, "div")]
    ids = tf.placeholder(tf.int32, [None])
    weights = tf.placeholder(tf.float64, [None, 3])
    rows = tf.nn.embedding_lookup(shards, ids, partition_strategy="div")
    loss = tf.reduce_sum(tf.square(rows * weights)) * 0.5
    optimizer = tf.train.AdagradOptimizer(0.1)
    grads = optimizer.compute_gradients(loss, shards)
    assert all(isinstance(g, tf.IndexedSlices) for g, _ in grads)
    train = optimizer.apply_gradients(grads)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for step_ids in steps:
            sess.run(train, {ids: step_ids, weights: WEIGHTS[:len(step_ids)]})
        np.testing.assert_allclose(np.concatenate(sess.run(shards)), whole, rtol=1e-12)


def test_sharded_lookup_errors():
    shards = [tf.Variable(TABLE[:4], name="a"), tf.Variable(TABLE[4:], name="b")]
    with pytest.raises(ValueError, match="Unrecognized partition_strategy"):
        tf.nn.embedding_lookup(shards, [0], partition_strategy="range")
    with pytest.raises(TypeError, match="ids must be int32 or int64"):
        tf.nn.embedding_lookup(shards, [0.5])
    with pytest.raises(ValueError, match="Need at least one param"):
        tf.nn.embedding_lookup([], [0])
    rows = tf.nn.embedding_lookup(shards, [3, 9], partition_strategy="div")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        # id 9 is past the 8 rows: "div" assigns it to a third shard, which does not exist.
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"DynamicPartition.*partitions\[1\] = 2 is not in \[0, 2\)"):
            sess.run(rows)


def test_dynamic_partition_and_stitch():
    data = np.arange(10.0).reshape(5, 2)
    parts = tf.dynamic_partition(data, [2, 0, 2, 1, 0], 3)
    positions = tf.dynamic_partition(np.arange(5, dtype=np.int32), [2, 0, 2, 1, 0], 3)
    merged = tf.dynamic_stitch(positions, parts)
    with tf.Session() as sess:
        values = sess.run(parts)
        np.testing.assert_array_equal(values[0], data[[1, 4]])
        np.testing.assert_array_equal(values[1], data[[3]])
        np.testing.assert_array_equal(values[2], data[[0, 2]])
        np.testing.assert_array_equal(sess.run(merged), data)
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"partitions\[0\] = 5"):
            sess.run(tf.dynamic_partition(data, [5, 0, 0, 0, 0], 3))
    with pytest.raises(ValueError, match="num_partitions"):
        tf.dynamic_partition(data, [0, 0, 0, 0, 0], 0)
    with pytest.raises(ValueError, match="as many indices as data"):
        tf.dynamic_stitch([[0]], [])


def test_get_variable_with_a_partitioner():
    init = tf.constant_initializer(1.5)
    with tf.variable_scope("model"):
        emb = tf.get_variable("emb", [10, 4], tf.float64, initializer=init,
                              partitioner=tf.fixed_size_partitioner(3))
    assert isinstance(emb, tf.PartitionedVariable)
    assert emb.name == "model/emb"
    assert emb.get_shape().as_list() == [10, 4]
    assert emb._get_partitions() == [3, 1]
    parts = list(emb)
    assert [v.op.name for v in parts] == ["model/emb/part_0", "model/emb/part_1",
                                          "model/emb/part_2"]
    assert [v.shape.as_list() for v in parts] == [[4, 4], [3, 4], [3, 4]]
    assert all(v in tf.trainable_variables() for v in parts)
    with tf.variable_scope("model", reuse=True):
        assert tf.get_variable("emb", [10, 4]) is emb
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_array_equal(sess.run(emb.as_tensor()), np.full((10, 4), 1.5))


def test_variable_scope_partitioner_and_placement_on_ps_tasks():
    with tf.device(tf.train.replica_device_setter(ps_tasks=2)):
        with tf.variable_scope("wide", partitioner=tf.fixed_size_partitioner(3)):
            emb = tf.get_variable("emb", [7, 2])
    assert [v.device for v in emb] == ["/job:ps/task:0", "/job:ps/task:1", "/job:ps/task:0"]


def test_initializers_are_built_beside_their_variables_as_tensorflows():
    """get_variable builds an initializer's ops colocated with the variable, under the
    variable's name ("<scopes>/<name>/Initializer/..."), whatever the name scope and device
    functions: a ps task draws a table's initial value itself instead of receiving it."""
    with tf.device(tf.train.replica_device_setter(ps_tasks=2)):
        with tf.name_scope("ns"), tf.variable_scope("vs"):
            w = tf.get_variable("w", [3, 4])
            emb = tf.get_variable("emb", [10, 4], initializer=tf.random_normal_initializer(),
                                  partitioner=tf.fixed_size_partitioner(2))
    ops = tf.get_default_graph().get_operations()
    for v in [w] + list(emb):
        built = [op for op in ops if op.name.startswith(v.op.name + "/Initializer/")]
        assert built and {op.device for op in built} == {v.device}, v.op.name
        # On the variable's device, not in its colocation group: a random op without a GPU
        # kernel may then run on the CPU of a GPU variable's task.
        assert all(op.colocation_groups() == [b"loc:@" + op.name.encode()] for op in built)
    assert [v.device for v in emb] == ["/job:ps/task:1", "/job:ps/task:0"]
    draws = [op for op in ops if op.type == "RandomStandardNormal"]
    assert [op.name for op in draws] == [
        "vs/emb/part_0/Initializer/random_normal/RandomStandardNormal",
        "vs/emb/part_1/Initializer/random_normal/RandomStandardNormal"]
    with pytest.raises(ValueError):  # an initializer of another dtype, as TensorFlow's
        tf.get_variable("ints", [2], tf.float32,
                        initializer=lambda shape, dtype: tf.zeros(shape, tf.int32))
    with pytest.raises(ValueError, match="shape"):  # TensorFlow would take the value's shape
        tf.get_variable("five", [2], initializer=lambda shape, dtype: tf.zeros([5]))
    # As TensorFlow's init_scope: the initializer depends on nothing the caller waits for.
    counter = tf.Variable(0, name="counter")
    with tf.control_dependencies([tf.assign_add(counter, 1)]):
        later = tf.get_variable("later", [2], initializer=tf.ones_initializer())
    with tf.Session() as sess:
        sess.run(counter.initializer)
        sess.run(later.initializer)
        assert sess.run(counter) == 0 and sess.run(later).tolist() == [1.0, 1.0]


def test_partitioners_follow_tensorflow_rules():
    shape = tf.TensorShape([100, 8])
    assert tf.fixed_size_partitioner(4)(shape=shape, dtype=tf.float32) == [4, 1]
    assert tf.fixed_size_partitioner(2, axis=1)(shape=shape, dtype=tf.float32) == [1, 2]
    assert tf.fixed_size_partitioner(500)(shape=shape, dtype=tf.float32) == [100, 1]
    # 8 floats are 32 bytes a row: 31 rows fit in 1000 bytes, so 4 shards.
    assert tf.variable_axis_size_partitioner(1000)(shape, tf.float32) == [4, 1]
    assert tf.variable_axis_size_partitioner(1000, max_shards=2)(shape, tf.float32) == [2, 1]
    assert tf.variable_axis_size_partitioner(1 << 20)(shape, tf.float32) == [1, 1]
    # 3200 bytes in slices of 1024: ceil(3.1) = 4 shards (at most max_partitions).
    assert tf.min_max_variable_partitioner(4, min_slice_size=1024)(shape, tf.float32) == [4, 1]
    assert tf.min_max_variable_partitioner(8, min_slice_size=1600)(shape, tf.float32) == [2, 1]
    assert tf.min_max_variable_partitioner(2, min_slice_size=1024)(shape, tf.float32) == [2, 1]
    assert tf.min_max_variable_partitioner(4)(shape, tf.float32) == [1, 1]
    with pytest.raises(ValueError, match="num_shards"):
        tf.fixed_size_partitioner(0)
    with pytest.raises(ValueError, match="positive"):
        tf.variable_axis_size_partitioner(0)


def test_partitioned_variable_errors():
    with pytest.raises(ValueError, match="must be fully defined"):
        tf.get_variable("a", partitioner=tf.fixed_size_partitioner(2))
    with pytest.raises(ValueError, match="along one dimension"):
        tf.get_variable("b", [4, 4], partitioner=lambda shape, dtype: [2, 2])
    with pytest.raises(ValueError, match="one int >= 1 per dimension"):
        tf.get_variable("c", [4, 4], partitioner=lambda shape, dtype: [2])
    with pytest.raises(ValueError, match="rank at least 1"):
        tf.get_variable("d", [], partitioner=tf.fixed_size_partitioner(2))


def build_sharded_model(num_shards):
    table = np.arange(40, dtype=np.float32).reshape(10, 4)
    emb = tf.get_variable("emb", [10, 4], tf.float32, initializer=tf.constant_initializer(0.0),
                          partitioner=tf.fixed_size_partitioner(num_shards))
    ids = tf.constant([9, 0, 4, 5, 3], tf.int64)
    rows = tf.nn.embedding_lookup(emb, ids, partition_strategy="div")
    assign = [v.assign(table[offset:offset + v.shape.as_list()[0]])
              for v, offset in zip(emb, np.cumsum([0] + [v.shape.as_list()[0] for v in emb]))]
    return table, emb, rows, assign, ids


def test_a_checkpoint_of_two_shards_restores_into_three(tmp_path):
    table, emb, rows, assign, ids = build_sharded_model(2)
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(assign)
        before = sess.run(rows)
        path = saver.save(sess, str(tmp_path / "model"), global_step=1)
    with np.load(path + ".npz") as arrays:  # one logical variable, as TensorFlow saves it
        assert sorted(arrays.files) == ["emb"]
        np.testing.assert_array_equal(arrays["emb"], table)
    for shards in (3, 1):
        tf.reset_default_graph()
        _, emb3, rows3, _, _ = build_sharded_model(shards)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            tf.train.Saver().restore(sess, path)
            np.testing.assert_array_equal(sess.run(rows3), before)
            np.testing.assert_array_equal(sess.run(emb3.as_tensor()), table)
    tf.reset_default_graph()
    emb_wide = tf.get_variable("emb", [10, 5], partitioner=tf.fixed_size_partitioner(2))
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"emb.*\[10,4\]"):
            tf.train.Saver().restore(sess, path)
    tf.reset_default_graph()
    _, emb, _, _, _ = build_sharded_model(2)
    tf.train.Saver({"renamed": emb})  # a dict maps the whole variable to one name


def test_training_a_partitioned_table():
    table, emb, rows, assign, ids = build_sharded_model(3)
    loss = tf.reduce_sum(tf.square(rows))
    optimizer = tf.train.GradientDescentOptimizer(0.1)
    grads = optimizer.compute_gradients(loss)
    assert len(grads) == 3 and all(isinstance(g, tf.IndexedSlices) for g, _ in grads)
    train = optimizer.apply_gradients(grads)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(assign)
        sess.run(train)
        expected = table.copy()
        expected[[9, 0, 4, 5, 3]] *= 0.8
        np.testing.assert_allclose(sess.run(emb.as_tensor()), expected, rtol=1e-6)


def numpy_lookup_sparse(table, rows, weights, combiner):
    """TensorFlow's embedding_ops_test reference: per batch row, the weighted sum of its ids'
    embeddings, divided by the weights' sum (mean) or the root of their squares' (sqrtn)."""
    batch = max(r for r, _ in rows) + 1
    out = np.zeros((batch, table.shape[1]))
    for b in range(batch):
        entries = [(i, w) for (r, i), w in zip(rows, weights) if r == b]
        if not entries:
            continue
        total = sum(w * table[i] for i, w in entries)
        if combiner == "mean":
            total = total / sum(w for _, w in entries)
        elif combiner == "sqrtn":
            total = total / np.sqrt(sum(w * w for _, w in entries))
        out[b] = total
    return out


@pytest.mark.parametrize("combiner", ["sum", "mean", "sqrtn"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("num_shards", [1, 3])
def test_embedding_lookup_sparse_against_numpy(combiner, weighted, num_shards):
    # Rows 0, 1 and 3 have ids (row 2 none); id 5 appears twice.
    rows = [(0, 5), (0, 1), (1, 5), (3, 7), (3, 0), (3, 2)]
    weights = [0.5, 2.0, 1.0, 3.0, 0.25, 1.5] if weighted else [1.0] * len(rows)
    indices = [[r, k] for k, (r, _) in enumerate(rows)]
    sp_ids = tf.sparse_placeholder(tf.int64)
    sp_weights = tf.SparseTensor(indices, np.array(weights), [4, 6]) if weighted else None
    if num_shards == 1:
        params = tf.Variable(TABLE, name="table")
    else:
        params = [tf.Variable(s, name="shard") for s in shards_of(TABLE, num_shards, "mod")]
    out = tf.nn.embedding_lookup_sparse(params, sp_ids, sp_weights, combiner=combiner)
    (grad,) = tf.gradients(tf.reduce_sum(out), [params] if num_shards == 1 else params[:1])
    assert isinstance(grad, tf.IndexedSlices)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        value = tf.SparseTensorValue(indices, [i for _, i in rows], [4, 6])
        np.testing.assert_allclose(sess.run(out, {sp_ids: value}),
                                   numpy_lookup_sparse(TABLE, rows, weights, combiner))
        fetched = sess.run(sp_ids, {sp_ids: value})
        assert isinstance(fetched, tf.SparseTensorValue)
        np.testing.assert_array_equal(fetched.values, [i for _, i in rows])


def test_embedding_lookup_sparse_errors():
    table = tf.Variable(TABLE, name="table")
    sp_ids = tf.sparse_placeholder(tf.int64)
    with pytest.raises(ValueError, match="combiner must be one of"):
        tf.nn.embedding_lookup_sparse(table, sp_ids, None, combiner="max")
    with pytest.raises(TypeError, match="sp_ids must be SparseTensor"):
        tf.nn.embedding_lookup_sparse(table, [1, 2], None)
    with pytest.raises(TypeError, match="sp_weights must be either None or SparseTensor"):
        tf.nn.embedding_lookup_sparse(table, sp_ids, [1.0])
    out = tf.nn.embedding_lookup_sparse(table, sp_ids, None)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        with pytest.raises(TypeError, match="SparseTensorValue"):
            sess.run(out, {sp_ids: [1, 2]})
        with pytest.raises(tf.errors.InvalidArgumentError, match="GatherV2"):
            sess.run(out, {sp_ids: tf.SparseTensorValue([[0, 0]], [99], [1, 1])})


def test_saver_of_a_variable_list_saves_shards_whole(tmp_path):
    _, emb, _, assign, _ = build_sharded_model(3)
    optimizer = tf.train.AdagradOptimizer(0.1)
    optimizer.minimize(tf.reduce_sum(tf.nn.embedding_lookup(emb, [1, 2], "div")))
    saver = tf.train.Saver(tf.global_variables())
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        path = saver.save(sess, str(tmp_path / "model"))
    with np.load(path + ".npz") as arrays:
        assert sorted(arrays.files) == ["emb", "emb/Adagrad"]


def test_clipping_keeps_indexed_slices_sparse():
    table = tf.Variable(TABLE, name="table")
    (grad,) = tf.gradients(embedding_loss(table), [table])
    dense = tf.constant(np.full((2, 2), 3.0))
    clipped, norm = tf.clip_by_global_norm([grad, dense], 1.0)
    assert isinstance(clipped[0], tf.IndexedSlices) and isinstance(clipped[1], tf.Tensor)
    by_norm = tf.clip_by_norm(grad, 0.5)
    assert isinstance(by_norm, tf.IndexedSlices)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        values = sess.run(grad.values)
        expected_norm = np.sqrt(np.sum(values ** 2) + 4 * 9.0)  # values, duplicates not summed
        np.testing.assert_allclose(sess.run(norm), expected_norm)
        np.testing.assert_allclose(sess.run(clipped[0].values), values / expected_norm)
        np.testing.assert_allclose(np.linalg.norm(sess.run(by_norm.values)), 0.5)


def test_scatter_update_of_a_scalar_and_scope_regularizer():
    table = tf.Variable(TABLE, name="table")
    update = tf.scatter_update(table, [0, 2], 0.0)
    with tf.variable_scope("reg", regularizer=lambda v: tf.reduce_sum(v) * 0.0):
        tf.get_variable("w", [2, 2])
        tf.get_variable("sharded", [4, 2], partitioner=tf.fixed_size_partitioner(2))
    assert len(tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)) == 3
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        expected = TABLE.copy()
        expected[[0, 2]] = 0.0
        np.testing.assert_array_equal(sess.run(update), expected)


# TensorFlow 1.x's sparse_to_dense_op_py_test and sparse_tensor_to_dense: int32 and int64
# indices, a shared value, vectors and matrices, the default, and the validation messages.
def test_sparse_to_dense_and_sparse_tensor_to_dense():
    with tf.Session() as sess:
        assert sess.run(tf.sparse_to_dense([1, 3], [5], 1.0, 0.0)).tolist() == \
            [0.0, 1.0, 0.0, 1.0, 0.0]
        assert sess.run(tf.sparse_to_dense(np.int32([1, 3]), np.int32([5]), [1, 2], -1)) \
            .tolist() == [-1, 1, -1, 2, -1]
        assert sess.run(tf.sparse_to_dense([[0, 1], [1, 2]], [2, 3], ["a", "b"], "")) \
            .tolist() == [[b"", b"a", b""], [b"", b"", b"b"]]
        assert sess.run(tf.sparse_to_dense(2, [4], 7)).tolist() == [0, 0, 7, 0]
        sp = tf.SparseTensor([[0, 0], [1, 2]], [4.0, 5.0], [2, 3])
        assert sess.run(tf.sparse_tensor_to_dense(sp, default_value=-1.0)).tolist() == \
            [[4.0, -1.0, -1.0], [-1.0, -1.0, 5.0]]
        for indices, message in [([[0, 1], [0, 1]], r"indices\[1\] = \[0,1\] is repeated"),
                                 ([[1, 0], [0, 1]], r"indices\[1\] = \[0,1\] is out of order"),
                                 ([[0, 3]], r"indices\[0\] = \[0,3\] is out of bounds: need "
                                            r"0 <= index < \[2,3\]")]:
            with pytest.raises(tf.errors.InvalidArgumentError, match=message):
                sess.run(tf.sparse_to_dense(indices, [2, 3], 1.0))
        # Unvalidated, repeated indices are written in order.
        assert sess.run(tf.sparse_to_dense([[0, 1], [0, 1]], [1, 2], [1.0, 2.0],
                                           validate_indices=False)).tolist() == [[0.0, 2.0]]
    with pytest.raises(TypeError, match="Input must be a SparseTensor"):
        tf.sparse_tensor_to_dense(tf.constant([1]))


def test_sparse_to_dense_refuses_a_shape_whose_size_overflows():
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="output_shape"):
            sess.run(tf.sparse_to_dense([[5, 0]], [2 ** 62 + 1, 4], 1.0))
        with pytest.raises(tf.errors.InvalidArgumentError, match="output_shape"):
            sess.run(tf.sparse_to_dense([1], [-3], 1.0))


def test_contrib_embed_sequence_as_tensorflow_names_and_reuses_it():
    with tf.Graph().as_default():
        ids = tf.constant([[1, 2, 1], [0, 3, 3]], dtype=tf.int64)
        init = tf.constant_initializer(np.arange(8.0).reshape(4, 2))
        embedded = tf.contrib.layers.embed_sequence(ids, vocab_size=4, embed_dim=2,
                                                    initializer=init)
        again = tf.contrib.layers.embed_sequence(ids, unique=True, scope="EmbedSequence",
                                                 reuse=True)
        assert [v.name for v in tf.get_collection(tf.GraphKeys.MODEL_VARIABLES)] == \
            ["EmbedSequence/embeddings:0"]
        assert embedded.shape.as_list() == [2, 3, 2]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            got, got_unique = sess.run([embedded, again])
        table = np.arange(8.0).reshape(4, 2)
        np.testing.assert_array_equal(got, table[[[1, 2, 1], [0, 3, 3]]])
        np.testing.assert_array_equal(got_unique, got)
        with pytest.raises(ValueError, match="Must specify vocab size and embedding dimension"):
            tf.contrib.layers.embed_sequence(ids)


def test_embed_sequence_unique_keeps_the_static_shape():
    with tf.Graph().as_default():
        ids = tf.placeholder(tf.int64, [None, 5])
        out = tf.contrib.layers.embed_sequence(ids, vocab_size=10, embed_dim=4, unique=True)
        assert out.shape.as_list() == [None, 5, 4]
