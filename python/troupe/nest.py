"""tf.nest (also tf.contrib.framework.nest): nested structures of lists, tuples, namedtuples and
dicts, as TensorFlow 1.x defines them. A dict's values are taken in the order of its sorted keys
and packed back under the keys of the structure given; strings, tensors, TensorArrays and every
other object are leaves. `expand_composites` is accepted and must be False (composite tensors
are leaves here)."""

import collections as _collections
import collections.abc as _abc

__all__ = ["assert_same_structure", "flatten", "is_nested", "map_structure",
           "pack_sequence_as"]


def is_nested(seq):
    """Whether nest treats `seq` as a structure: a sequence that is not a string (list, tuple,
    namedtuple, range, deque, ...), a mapping (dict, OrderedDict, defaultdict, ...) or a
    mapping view, as TensorFlow's."""
    if isinstance(seq, (str, bytes)):
        return False
    return isinstance(seq, (_abc.Sequence, _abc.Mapping, _abc.MappingView))


is_sequence = is_nested  # TF 1.x's older name


def _no_composites(expand_composites):
    if expand_composites:
        raise NotImplementedError("nest: expand_composites=True is not supported")


def _sorted_keys(mapping):
    try:
        return sorted(mapping)
    except TypeError:
        raise TypeError("nest only supports dicts with sortable keys.")


def _children(seq):
    if isinstance(seq, _abc.Mapping):
        return [seq[key] for key in _sorted_keys(seq)]
    return list(seq)


def _sequence_like(instance, items):
    """A sequence of `instance`'s type holding `items` (for a dict: by its sorted keys)."""
    if isinstance(instance, _abc.Mapping):
        by_key = dict(zip(_sorted_keys(instance), items))
        if isinstance(instance, _collections.defaultdict):
            result = _collections.defaultdict(instance.default_factory)
            for key in instance:
                result[key] = by_key[key]
            return result
        return type(instance)((key, by_key[key]) for key in instance)
    if isinstance(instance, _abc.MappingView) or isinstance(instance, range):
        return list(items)
    if isinstance(instance, tuple) and hasattr(instance, "_fields"):
        return type(instance)(*items)
    return type(instance)(items)


def flatten(structure, expand_composites=False):
    """The leaves of `structure`, depth first; [structure] for a leaf (None included)."""
    _no_composites(expand_composites)
    if not is_nested(structure):
        return [structure]
    return [leaf for child in _children(structure) for leaf in flatten(child)]


def _describe(value):
    return "type=%s str=%s" % (type(value).__name__, value)


def _is_namedtuple(value):
    return isinstance(value, tuple) and hasattr(value, "_fields")


def _structure_error(a, b, check_types):
    """Why `a` and `b` differ, as (error class, message), or None: TensorFlow's checks and
    messages (python/util/util.cc), element by element."""
    if is_nested(a) != is_nested(b):
        seq, other = (a, b) if is_nested(a) else (b, a)
        return ValueError, ("Substructure \"%s\" is a sequence, while substructure \"%s\" is "
                            "not" % (_describe(seq), _describe(other)))
    if not is_nested(a):
        return None
    if check_types:
        if _is_namedtuple(a) and _is_namedtuple(b):
            same = type(a).__name__ == type(b).__name__ and a._fields == b._fields
        else:
            same = (type(a) is type(b) or (isinstance(a, list) and isinstance(b, list)) or
                    (isinstance(a, _abc.Mapping) and isinstance(b, _abc.Mapping)))
        if not same:
            return TypeError, ("The two namedtuples don't have the same sequence type. First "
                               "structure %s has type %s, while second structure %s has type %s"
                               % (_describe(a), type(a).__name__, _describe(b),
                                  type(b).__name__))
        if isinstance(a, _abc.Mapping) and set(a) != set(b):
            return ValueError, ("The two dictionaries don't have the same set of keys. First "
                                "structure has keys %s, while second structure has keys %s"
                                % (_describe(list(a)), _describe(list(b))))
    ca, cb = _children(a), _children(b)
    for x, y in zip(ca, cb):
        error = _structure_error(x, y, check_types)
        if error is not None:
            return error
    if len(ca) != len(cb):
        return ValueError, ("The two structures don't have the same number of elements. First "
                            "structure: %s. Second structure: %s" % (_describe(a), _describe(b)))
    return None


class _Dot:
    def __repr__(self):
        return "."


def assert_same_structure(nest1, nest2, check_types=True, expand_composites=False):
    """ValueError if the two differ in nesting or number of elements (or, with check_types, a
    dict's keys); TypeError (with check_types) if a sequence of one has another type than the
    other's. Lists of any list type match, as mappings of any mapping type do."""
    _no_composites(expand_composites)
    error = _structure_error(nest1, nest2, check_types)
    if error is None:
        return
    kind, message = error
    dots = [map_structure(lambda _: _Dot(), n) for n in (nest1, nest2)]
    raise kind("The two structures don't have the same nested structure.\n\nFirst structure: "
               "%s\n\nSecond structure: %s\n\nMore specifically: %s\nEntire first "
               "structure:\n%s\nEntire second structure:\n%s"
               % (_describe(nest1), _describe(nest2), message, dots[0], dots[1]))


def pack_sequence_as(structure, flat_sequence, expand_composites=False):
    """`flat_sequence` (a list) in the nesting of `structure`."""
    _no_composites(expand_composites)
    if not is_nested(flat_sequence):
        raise TypeError("flat_sequence must be a sequence")
    flat_sequence = list(flat_sequence)
    if not is_nested(structure):
        if len(flat_sequence) != 1:
            raise ValueError("Structure is a scalar but len(flat_sequence) == %d > 1"
                             % len(flat_sequence))
        return flat_sequence[0]
    expected = len(flatten(structure))
    if expected != len(flat_sequence):
        raise ValueError("Could not pack sequence. Structure had %d elements, but "
                         "flat_sequence had %d elements.  Structure: %s, flat_sequence: %s."
                         % (expected, len(flat_sequence), structure, flat_sequence))
    leaves = iter(flat_sequence)

    def pack(s):
        if not is_nested(s):
            return next(leaves)
        return _sequence_like(s, [pack(child) for child in _children(s)])
    return pack(structure)


def map_structure(func, *structure, **kwargs):
    """`func` applied to the leaves of the structures (all of one structure), in that
    structure. Keyword arguments: check_types (default True), expand_composites (False)."""
    if not callable(func):
        raise TypeError("func must be callable, got: %s" % func)
    if not structure:
        raise ValueError("Must provide at least one structure")
    check_types = kwargs.pop("check_types", True)
    _no_composites(kwargs.pop("expand_composites", False))
    if kwargs:
        raise ValueError("Only valid keyword arguments are `check_types` and "
                         "`expand_composites`, not: `%s`" % ("`, `".join(kwargs.keys())))
    for other in structure[1:]:
        assert_same_structure(structure[0], other, check_types=check_types)
    flats = [flatten(s) for s in structure]
    return pack_sequence_as(structure[0], [func(*leaves) for leaves in zip(*flats)])
