"""tf.contrib.opt: LazyAdamOptimizer."""

from ..train.optimizer import AdamOptimizer


class LazyAdamOptimizer(AdamOptimizer):
    """Adam whose sparse updates (the gradient of an embedding lookup) touch only the rows in
    the gradient: their moments and values move, every other row's stay as they are. Dense
    gradients are updated as AdamOptimizer's."""

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8,
                 use_locking=False, name="Adam"):
        super().__init__(learning_rate, beta1, beta2, epsilon, use_locking, name)
        self._native.set_lazy(True)
