"""The namespaces TensorFlow 1.13-1.15 added beside the top-level names (tf.math, tf.random,
tf.io, tf.initializers, tf.debugging, tf.strings): modules "troupe.<name>" whose entries are
troupe's existing functions under TensorFlow's names there. install() makes them, once the
package's own names exist."""

import sys
import types


def _names(*words):
    return " ".join(words).split()


_MATH = _names(
    "abs acos add add_n argmax argmin asin atan atan2 bincount ceil confusion_matrix cos cosh",
    "count_nonzero cumprod cumsum div_no_nan divide equal erf exp expm1 floor floordiv floormod greater",
    "greater_equal is_finite is_inf is_nan less less_equal log log1p logical_and logical_not",
    "logical_or logical_xor maximum minimum mod multiply negative not_equal pow reciprocal",
    "reduce_all reduce_any reduce_logsumexp reduce_max reduce_mean reduce_min reduce_prod",
    "reduce_sum round rsqrt sigmoid sign sin sinh sqrt square squared_difference subtract",
    "tan tanh truediv unsorted_segment_max unsorted_segment_min unsorted_segment_prod",
    "unsorted_segment_sum unsorted_segment_mean unsorted_segment_sqrt_n segment_sum",
    "segment_mean segment_max segment_min segment_prod")
_MATH_FROM_NN = _names("softplus log_softmax softmax l2_normalize in_top_k top_k",
                       "log_sigmoid")

_IO = _names("parse_example parse_single_example parse_single_sequence_example",
             "FixedLenFeature VarLenFeature FixedLenSequenceFeature SparseFeature decode_csv",
             "decode_raw matching_files")
_IO_FROM_PYTHON_IO = _names("TFRecordWriter tf_record_iterator TFRecordOptions",
                            "TFRecordCompressionType")

# tf.initializers.<name> -> the package's <value>
_INITIALIZERS = {"constant": "constant_initializer", "zeros": "zeros_initializer",
                 "ones": "ones_initializer", "random_uniform": "random_uniform_initializer",
                 "random_normal": "random_normal_initializer",
                 "truncated_normal": "truncated_normal_initializer",
                 "glorot_uniform": "glorot_uniform_initializer",
                 "glorot_normal": "glorot_normal_initializer",
                 "variance_scaling": "variance_scaling_initializer",
                 "orthogonal": "orthogonal_initializer",
                 "global_variables": "global_variables_initializer",
                 "local_variables": "local_variables_initializer",
                 "variables": "variables_initializer"}
_INITIALIZERS_OF_THEIR_OWN = _names("he_normal he_uniform lecun_normal lecun_uniform")

_DEBUGGING = _names("assert_equal assert_greater assert_greater_equal assert_less",
                    "assert_less_equal assert_none_equal assert_non_negative",
                    "assert_non_positive assert_positive assert_negative assert_rank",
                    "assert_type assert_integer assert_scalar check_numerics Assert",
                    "is_finite is_inf is_nan")

# tf.random.<name> -> the package's <value>
_RANDOM = {"normal": "random_normal", "uniform": "random_uniform",
           "truncated_normal": "truncated_normal", "shuffle": "random_shuffle",
           "set_random_seed": "set_random_seed", "get_seed": "get_seed"}

# (tf.strings.split is not string_split: it splits on the whole separator, keeping empty
# tokens.)
_STRINGS = {"to_number": "string_to_number"}


def install(package):
    """Adds the namespaces to `package` (troupe) and to sys.modules."""
    def make(name, doc, entries):
        module = types.ModuleType(package.__name__ + "." + name, doc)
        for alias, value in entries.items():
            setattr(module, alias, value)
        sys.modules[module.__name__] = module
        setattr(package, name, module)

    nn = package.nn

    def categorical(logits, num_samples, dtype=None, seed=None, name=None):
        """tf.random.categorical: samples [batch, num_samples] of the classes of each row of
        logits (tf.multinomial with output_dtype)."""
        from .dtypes import int64
        return package.multinomial(logits, num_samples, seed=seed, name=name,
                                   output_dtype=dtype or int64)

    make("math", "tf.math", dict({n: getattr(package, n) for n in _MATH},
                                 **{n: getattr(nn, n) for n in _MATH_FROM_NN}))
    make("io", "tf.io", dict({n: getattr(package, n) for n in _IO},
                             **{n: getattr(package.python_io, n)
                                for n in _IO_FROM_PYTHON_IO}))
    import importlib
    variables = importlib.import_module(package.__name__ + ".variables")
    make("initializers", "tf.initializers", dict(
        {alias: getattr(package, value) for alias, value in _INITIALIZERS.items()},
        **{n: getattr(variables, n) for n in _INITIALIZERS_OF_THEIR_OWN}))
    make("debugging", "tf.debugging", {n: getattr(package, n) for n in _DEBUGGING})
    make("random", "tf.random", dict(
        {alias: getattr(package, value) for alias, value in _RANDOM.items()},
        categorical=categorical, multinomial=package.multinomial,
        uniform_candidate_sampler=nn.uniform_candidate_sampler,
        log_uniform_candidate_sampler=nn.log_uniform_candidate_sampler,
        fixed_unigram_candidate_sampler=nn.fixed_unigram_candidate_sampler,
        learned_unigram_candidate_sampler=nn.learned_unigram_candidate_sampler,
        all_candidate_sampler=nn.all_candidate_sampler))
    make("strings", "tf.strings",
         {alias: getattr(package, value) for alias, value in _STRINGS.items()})
