"""tf.contrib.seq2seq.tile_batch: each batch entry of a (structure of) tensor(s) repeated
`multiplier` times in a row, [batch, ...] -> [batch * multiplier, ...], as TensorFlow 1.15's
(what a beam search of width `multiplier` needs of the encoder's outputs and state)."""

from ... import nest
from ...array_ops import concat, expand_dims, tile
from ...framework import TensorShape, convert_to_tensor, name_scope
from ...ops import reshape, shape


def _tile_one(t, multiplier):
    t = convert_to_tensor(t, name="t")
    if t.shape.ndims is None or t.shape.ndims < 1:
        raise ValueError("t must have statically known rank")
    tiling = [1] * (t.shape.ndims + 1)
    tiling[1] = multiplier
    static_batch = t.shape.as_list()[0]
    tiled = tile(expand_dims(t, 1), tiling)
    tiled = reshape(tiled, concat(([shape(t)[0] * multiplier], shape(t)[1:]), 0))
    tiled.set_shape(TensorShape([static_batch * multiplier if static_batch is not None
                                 else None] + t.shape.as_list()[1:]))
    return tiled


def tile_batch(t, multiplier, name=None):
    with name_scope(name, "tile_batch"):
        return nest.map_structure(lambda t_: _tile_one(t_, multiplier), t)
