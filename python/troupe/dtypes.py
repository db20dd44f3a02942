"""Data types, as tf.DType: float32, float64, int32, int64, uint8, bool and string."""

import numpy as np


class DType:
    """A tensor element type. Compare with ==; `as_numpy_dtype` is numpy's type."""

    def __init__(self, enum, name, numpy_type):
        self._enum = enum
        self._name = name
        self._numpy_type = numpy_type

    @property
    def name(self):
        return self._name

    @property
    def as_numpy_dtype(self):
        return self._numpy_type

    @property
    def as_datatype_enum(self):
        return self._enum

    @property
    def is_floating(self):
        return self._name in ("float32", "float64")

    @property
    def is_integer(self):
        return self._name in ("int32", "int64", "uint8")

    @property
    def is_bool(self):
        return self._name == "bool"

    @property
    def base_dtype(self):
        return self

    @property
    def size(self):
        """Bytes per element (numpy's itemsize; 8 for string, a reference per element)."""
        return np.dtype(self._numpy_type).itemsize

    @property
    def min(self):
        """The lowest finite value of the type (TypeError for bool and string, as TF's)."""
        return self._limits("minimum").min

    @property
    def max(self):
        """The highest finite value of the type."""
        return self._limits("maximum").max

    def _limits(self, which):
        if self.is_floating:
            return np.finfo(self._numpy_type)
        if self.is_integer:
            return np.iinfo(self._numpy_type)
        raise TypeError("Cannot find %s value of %s." % (which, self))

    def __eq__(self, other):
        try:
            return self is as_dtype(other)
        except TypeError:
            return False

    def __ne__(self, other):
        return not self.__eq__(other)

    def __hash__(self):
        return self._enum

    def __repr__(self):
        return "tf." + self._name

    def __str__(self):
        return "<dtype: %r>" % self._name


# The numbers are troupe's DataType enum (graph/core/types.hpp).
float32 = DType(1, "float32", np.float32)
float64 = DType(2, "float64", np.float64)
int32 = DType(3, "int32", np.int32)
int64 = DType(4, "int64", np.int64)
bool = DType(5, "bool", np.bool_)  # noqa: A001 - TensorFlow's name
string = DType(6, "string", np.object_)
uint8 = DType(7, "uint8", np.uint8)
double = float64

_ALL = (float32, float64, int32, int64, bool, uint8, string)
_BY_ENUM = {d.as_datatype_enum: d for d in _ALL}
_BY_NAME = {d.name: d for d in _ALL}
_BY_NAME["double"] = float64


def as_dtype(value):
    """A DType from a DType, a name ("float32"), a numpy dtype or type, or an enum number."""
    if isinstance(value, DType):
        return value
    if isinstance(value, str):
        if value in _BY_NAME:
            return _BY_NAME[value]
        raise TypeError("Cannot convert value %r to a troupe DType: troupe has %s"
                        % (value, ", ".join(sorted(_BY_NAME))))
    if isinstance(value, int) and not isinstance(value, type(True)) and value in _BY_ENUM:
        return _BY_ENUM[value]
    try:
        np_dtype = np.dtype(value)
    except TypeError:
        raise TypeError("Cannot convert value %r to a troupe DType" % (value,)) from None
    if np_dtype.kind in ("S", "U", "O"):
        return string
    for d in _ALL[:-1]:
        if np_dtype == np.dtype(d.as_numpy_dtype):
            return d
    raise TypeError("Cannot convert value %r to a troupe DType: troupe has no tensors of numpy "
                    "dtype %s (float32, float64, int32, int64, uint8, bool and strings)"
                    % (value, np_dtype))
