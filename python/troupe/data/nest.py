"""Nested structures of a dataset's elements, as tf.data (tf.contrib.framework.nest) treats
them: a tuple or namedtuple, or a dict (flattened in sorted key order), of other structures;
anything else is one component. Lists are not structures: they are converted to tensors, as
in TensorFlow 1.x's tf.data."""


def is_sequence(value):
    return isinstance(value, (tuple, dict))


def flatten(structure):
    if isinstance(structure, dict):
        return [leaf for key in sorted(structure) for leaf in flatten(structure[key])]
    if isinstance(structure, tuple):
        return [leaf for item in structure for leaf in flatten(item)]
    return [structure]


def pack_sequence_as(structure, flat):
    """`flat` (a list) arranged as `structure`."""
    flat = list(flat)
    packed, used = _pack(structure, flat, 0)
    if used != len(flat):
        raise ValueError("Structure had %d elements, but flat_sequence had %d elements."
                         % (used, len(flat)))
    return packed


def _pack(structure, flat, start):
    if isinstance(structure, dict):
        values = {}
        for key in sorted(structure):
            values[key], start = _pack(structure[key], flat, start)
        return type(structure)((k, values[k]) for k in structure), start
    if isinstance(structure, tuple):
        items = []
        for item in structure:
            value, start = _pack(item, flat, start)
            items.append(value)
        if hasattr(structure, "_fields"):  # a namedtuple
            return type(structure)(*items), start
        return tuple(items), start
    if start >= len(flat):
        raise ValueError("flat_sequence had %d elements, fewer than the structure" % len(flat))
    return flat[start], start + 1


def map_structure(fn, *structures):
    flats = [flatten(s) for s in structures]
    for other in flats[1:]:
        if len(other) != len(flats[0]):
            raise ValueError("The two structures don't have the same number of elements: "
                             "%d and %d" % (len(flats[0]), len(other)))
    return pack_sequence_as(structures[0], [fn(*leaves) for leaves in zip(*flats)])


def assert_same_structure(a, b):
    def shape_of(s):
        if isinstance(s, dict):
            return ("dict", tuple((k, shape_of(s[k])) for k in sorted(s)))
        if isinstance(s, tuple):
            return ("tuple", tuple(shape_of(x) for x in s))
        return None
    if shape_of(a) != shape_of(b):
        raise TypeError("The two structures don't have the same nested structure: %r and %r"
                        % (a, b))
