"""TensorFlow 1.x's surface: the same names as the troupe package."""

import sys as _sys

import troupe as _troupe

for _name in dir(_troupe):
    if not _name.startswith("_"):
        setattr(_sys.modules[__name__], _name, getattr(_troupe, _name))
