"""tf.data.experimental: the names TensorFlow 1.13+ moved there that troupe has — AUTOTUNE and
the fused transformations TF1 input code applies with Dataset.apply: map_and_batch,
shuffle_and_repeat, parallel_interleave. troupe runs each as the plain transformations it
fuses, in the same order (the result is the same elements; only TensorFlow's speed-up of
fusing them is not there); and unbatch."""

from .dataset_ops import AUTOTUNE  # noqa: F401


def map_and_batch(map_func, batch_size, num_parallel_batches=None, drop_remainder=False,
                  num_parallel_calls=None):
    """dataset.map(map_func).batch(batch_size, drop_remainder)."""
    if num_parallel_batches is not None and num_parallel_calls is not None:
        raise ValueError("The `num_parallel_batches` and `num_parallel_calls` arguments are "
                         "mutually exclusive.")

    def apply(dataset):
        return dataset.map(map_func, num_parallel_calls).batch(batch_size,
                                                                drop_remainder=drop_remainder)
    return apply


def shuffle_and_repeat(buffer_size, count=None, seed=None):
    """dataset.shuffle(buffer_size, seed).repeat(count): a new order for every pass."""
    def apply(dataset):
        return dataset.shuffle(buffer_size, seed=seed,
                               reshuffle_each_iteration=True).repeat(count)
    return apply


def parallel_interleave(map_func, cycle_length, block_length=1, sloppy=False,
                        buffer_output_elements=None, prefetch_input_elements=None):
    """dataset.interleave(map_func, cycle_length, block_length), its `cycle_length` datasets
    read at once, each on a thread of its own, in TensorFlow's deterministic order whatever
    `sloppy` says; the buffer sizes are troupe's (64 elements per dataset)."""
    def apply(dataset):
        return dataset.interleave(map_func, cycle_length=cycle_length,
                                  block_length=block_length, num_parallel_calls=cycle_length)
    return apply


def unbatch():
    """dataset.unbatch(): the rows of each element."""
    def apply(dataset):
        return dataset.unbatch()
    return apply
