"""tf.contrib.seq2seq.sequence_loss: the weighted cross entropy of a sequence of logits, as
TensorFlow 1.x's contrib/seq2seq/python/ops/loss.py computes it."""

from ...framework import Tensor, convert_to_tensor, name_scope
from ...math_ops import count_nonzero, div_no_nan
from ...nn import sparse_softmax_cross_entropy_with_logits
from ...ops import cast, reduce_sum, reshape, shape


def sequence_loss(logits, targets, weights, average_across_timesteps=True,
                  average_across_batch=True, sum_over_timesteps=False, sum_over_batch=False,
                  softmax_loss_function=None, name=None):
    """The cross entropy of logits [batch, steps, classes] against targets [batch, steps] (class
    ids), weighted by weights [batch, steps]: averaged over the steps and/or the batch by the
    weights' sum, or summed there and divided by the number of non-zero weights
    (sum_over_*), as TensorFlow's; a 0 denominator gives 0."""
    logits, targets, weights = (v if isinstance(v, Tensor) else convert_to_tensor(v)
                                for v in (logits, targets, weights))
    if len(logits.get_shape()) != 3:
        raise ValueError("Logits must be a [batch_size x sequence_length x logits] tensor")
    if len(targets.get_shape()) != 2:
        raise ValueError("Targets must be a [batch_size x sequence_length] tensor")
    if len(weights.get_shape()) != 2:
        raise ValueError("Weights must be a [batch_size x sequence_length] tensor")
    if average_across_timesteps and sum_over_timesteps:
        raise ValueError("average_across_timesteps and sum_over_timesteps cannot be set to "
                         "True at same time.")
    if average_across_batch and sum_over_batch:
        raise ValueError("average_across_batch and sum_over_batch cannot be set to True at "
                         "same time.")
    with name_scope(name, "sequence_loss"):
        num_classes = shape(logits)[2]
        logits_flat = reshape(logits, [-1, num_classes])
        targets = reshape(targets, [-1])
        if softmax_loss_function is None:
            crossent = sparse_softmax_cross_entropy_with_logits(labels=targets,
                                                                logits=logits_flat)
        else:
            crossent = softmax_loss_function(labels=targets, logits=logits_flat)
        crossent = crossent * reshape(cast(weights, crossent.dtype), [-1])
        if average_across_timesteps and average_across_batch:
            return div_no_nan(reduce_sum(crossent), cast(reduce_sum(weights), crossent.dtype))
        if sum_over_timesteps and sum_over_batch:
            return div_no_nan(reduce_sum(crossent),
                              cast(count_nonzero(weights), crossent.dtype))
        crossent = reshape(crossent, shape(logits)[0:2])
        if average_across_timesteps or average_across_batch:
            axis = [0] if average_across_batch else [1]
            return div_no_nan(reduce_sum(crossent, axis=axis),
                              cast(reduce_sum(weights, axis=axis), crossent.dtype))
        if sum_over_timesteps or sum_over_batch:
            axis = [0] if sum_over_batch else [1]
            return div_no_nan(reduce_sum(crossent, axis=axis),
                              cast(count_nonzero(weights, axis=axis), crossent.dtype))
        return crossent
