"""tf.contrib.training.HParams, as TensorFlow 1.x defines it: named hyperparameters of fixed
types (int, float, bool, str, or lists of one of them), set from code, from a string
"a=1,b=[2,3],c=relu" (parse) or JSON, with TensorFlow's checks and messages."""

import json
import numbers
import re

_PARAM_RE = re.compile(r"""
  (?P<name>[a-zA-Z][\w\.]*)      # name: a letter, then letters, digits, '_' or '.'
  (\[\s*(?P<index>\d+)\s*\])?    # an optional index: name[3]=...
  \s*=\s*
  ((?P<val>[^,\[]*)              # one value, or
   |
   \[(?P<vals>[^\]]*)\])         # a list of them
  ($|,\s*)""", re.VERBOSE)


def _cast(name, param_type, value):
    """value as param_type where that loses nothing TensorFlow cares about; ValueError
    otherwise."""
    fail = ValueError("Could not cast hparam '%s' of type '%s' from value %r"
                      % (name, param_type, value))
    if issubclass(param_type, type(None)):
        return value
    if issubclass(param_type, (str, bytes)) and not isinstance(value, (str, bytes)):
        raise fail
    if issubclass(param_type, bool) != isinstance(value, bool):
        raise fail
    if issubclass(param_type, numbers.Integral) and not isinstance(value, numbers.Integral):
        raise fail
    if issubclass(param_type, numbers.Number) and not isinstance(value, numbers.Number):
        raise fail
    return param_type(value)


def _parse_one(name, param_type, text, whole):
    def fail():
        raise ValueError("Could not parse hparam '%s' of type '%s' with value '%s' in %s"
                         % (name, param_type.__name__, text, whole))
    if param_type is bool:
        if text in ("true", "True"):
            return True
        if text in ("false", "False"):
            return False
        try:
            return bool(int(text))
        except ValueError:
            fail()
    try:
        return param_type(text)
    except ValueError:
        fail()


def parse_values(values, type_map):
    """{name: value} from "a=1,b=[2,3],c[0]=4" (indexed ones as {index: value}), each value
    read as type_map[name]; ValueError for a malformed string or an unknown name."""
    results = {}
    position = 0
    while position < len(values):
        match = _PARAM_RE.match(values, position)
        if not match:
            raise ValueError("Malformed hyperparameter value: %s" % values[position:])
        position = match.end()
        name = match.group("name")
        if name not in type_map:
            raise ValueError("Unknown hyperparameter type for %s" % name)
        param_type = type_map[name]
        if match.group("vals") is not None:
            if match.group("index") is not None:
                raise ValueError("Assignment of a list to a list index: %s" % values)
            items = [v for v in re.split(r"[ ,]", match.group("vals")) if v]
            value = [_parse_one(name, param_type, v, values) for v in items]
        else:
            value = _parse_one(name, param_type, match.group("val").strip(), values)
        if match.group("index") is not None:
            index = int(match.group("index"))
            elements = results.setdefault(name, {})
            if not isinstance(elements, dict) or index in elements:
                raise ValueError("Multiple assignments to variable '%s' in %s" % (name, values))
            elements[index] = value
        elif name in results:
            raise ValueError("Multiple assignments to variable '%s' in %s" % (name, values))
        else:
            results[name] = value
    return results


class HParams:
    def __init__(self, hparam_def=None, model_structure=None, **kwargs):
        if hparam_def is not None:
            raise ValueError("HParams(hparam_def=...) is not supported by troupe (an HParamDef "
                             "protocol buffer): give the hyperparameters as keywords")
        self._hparam_types = {}
        self._model_structure = model_structure
        for name, value in kwargs.items():
            self.add_hparam(name, value)

    def add_hparam(self, name, value):
        """Adds hyperparameter `name` of value's type (a list's element type for a list)."""
        if getattr(self, name, None) is not None:
            raise ValueError("Hyperparameter name is reserved: %s" % name)
        if isinstance(value, (list, tuple)):
            if not value:
                raise ValueError("Multi-valued hyperparameters cannot be empty: %s" % name)
            self._hparam_types[name] = (type(value[0]), True)
        else:
            self._hparam_types[name] = (type(value), False)
        setattr(self, name, value)

    def set_hparam(self, name, value):
        param_type, is_list = self._hparam_types[name]
        if isinstance(value, list):
            if not is_list:
                raise ValueError("Must not pass a list for single-valued parameter: %s" % name)
            setattr(self, name, [_cast(name, param_type, v) for v in value])
        else:
            if is_list:
                raise ValueError("Must pass a list for multi-valued parameter: %s." % name)
            setattr(self, name, _cast(name, param_type, value))

    def del_hparam(self, name):
        if hasattr(self, name):
            delattr(self, name)
            del self._hparam_types[name]

    def parse(self, values):
        """Overrides hyperparameters from "name=value,name2=[v1,v2],..."; returns self."""
        type_map = {name: t for name, (t, _) in self._hparam_types.items()}
        parsed = parse_values(values, type_map)
        for name, value in parsed.items():
            if isinstance(value, dict):  # name[i]=value: elements of a list
                if not self._hparam_types[name][1]:
                    raise ValueError("Must not pass an index for single-valued parameter: %s"
                                     % name)
                current = list(getattr(self, name))
                for index, element in value.items():
                    if index >= len(current):
                        raise ValueError("Index %d out of range for parameter %s of %d values"
                                         % (index, name, len(current)))
                    current[index] = element
                value = current
            self.set_hparam(name, value)
        return self

    def override_from_dict(self, values_dict):
        for name, value in values_dict.items():
            self.set_hparam(name, value)
        return self

    def set_model_structure(self, model_structure):
        self._model_structure = model_structure

    def get_model_structure(self):
        return self._model_structure

    def to_json(self, indent=None, separators=None, sort_keys=False):
        return json.dumps(self.values(), indent=indent, separators=separators,
                          sort_keys=sort_keys)

    def parse_json(self, values_json):
        return self.override_from_dict(json.loads(values_json))

    def values(self):
        return {name: getattr(self, name) for name in self._hparam_types}

    def get(self, key, default=None):
        if key in self._hparam_types:
            if default is not None:
                param_type, is_list = self._hparam_types[key]
                kind = "list<%s>" % param_type if is_list else str(param_type)
                fail = ValueError("Hparam '%s' of type '%s' is incompatible with default=%s"
                                  % (key, kind, default))
                if is_list != isinstance(default, list):
                    raise fail
                try:
                    for v in (default if is_list else [default]):
                        _cast(key, param_type, v)
                except ValueError as e:
                    raise fail from e
            return getattr(self, key)
        return default

    def __contains__(self, key):
        return key in self._hparam_types

    def __str__(self):
        return str(sorted(self.values().items()))

    def __repr__(self):
        return "%s(%s)" % (type(self).__name__, self.__str__())
