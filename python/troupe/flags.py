"""tf.app.flags (also tf.flags): command-line flags as TensorFlow 1.x programs define them.

    flags = tf.app.flags
    flags.DEFINE_string("job_name", "", "One of 'ps', 'worker'")
    flags.DEFINE_integer("task_index", 0, "Index of task within the job")
    FLAGS = flags.FLAGS
    ...
    print(FLAGS.job_name)      # parses sys.argv on first access

As TensorFlow 1.x (whose flags are absl's): `--name=value` or `--name value` (`-name` too),
booleans as `--name`, `--noname` or `--name=true|false|1|0|yes|no`, lists comma-separated,
`--` ends the flags. Reading an attribute before anything parsed parses `sys.argv`, leaving
flags nobody defined alone; `tf.app.run()` parses and passes main() the arguments that are not
defined flags. A value that does not convert, an enum value not allowed, a flag defined twice
or read undefined raise absl's errors (IllegalFlagValueError, DuplicateFlagError,
AttributeError). `--help` (`-h`, `--helpfull`) prints every flag and exits with status 1, as
absl's app.run does. Not supported: `--flagfile`, validators, multi flags.
"""

import sys as _sys


class Error(Exception):
    """The base of the flag errors."""


class IllegalFlagValueError(Error):
    """A flag's value does not convert to its type, or is not allowed."""


class DuplicateFlagError(Error):
    """A flag defined twice."""


class UnrecognizedFlagError(Error):
    """A flag nobody defined, parsed with known_only=False."""


class UnparsedFlagAccessError(Error, AttributeError):
    """Reading a flag of FlagValues that has not parsed (TensorFlow's FLAGS always has)."""


_TRUE = ("true", "t", "1", "yes", "y")
_FALSE = ("false", "f", "0", "no", "n")


class _Flag:
    def __init__(self, name, default, help_text, kind, convert, enum_values=None,
                 short_name=None):
        self.name = name
        self.help = help_text or "(no help available)"
        self.kind = kind
        self.short_name = short_name
        self.enum_values = enum_values
        self._convert = convert
        self.default = None if default is None else self.parse_value(default)
        self.value = self.default
        self.present = 0

    def parse_value(self, text):
        try:
            value = self._convert(text)
        except (TypeError, ValueError) as e:
            raise IllegalFlagValueError("flag --%s=%s: %s" % (self.name, text, e)) from None
        if self.enum_values is not None and value not in self.enum_values:
            raise IllegalFlagValueError("flag --%s=%s: value should be one of <%s>"
                                        % (self.name, text, "|".join(self.enum_values)))
        return value

    def describe(self):
        line = "  --%s: %s" % (self.name, self.help)
        if self.enum_values is not None:
            line += "\n    <%s>" % "|".join(self.enum_values)
        default = self.default
        if isinstance(default, list):
            default = ",".join(str(v) for v in default)
        line += "\n    (default: %r)" % (default,) if isinstance(default, str) else \
            "\n    (default: '%s')" % (default,)
        if self.kind in ("an integer", "a number", "a comma separated list of strings"):
            line += "\n    (%s)" % self.kind
        return line


def _to_bool(value):
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        if value.lower() in _TRUE:
            return True
        if value.lower() in _FALSE:
            return False
    raise ValueError("Non-boolean argument to boolean flag: %r" % (value,))


def _to_int(value):
    if isinstance(value, bool):
        raise TypeError("Expect argument to be a string or int, found %s" % type(value))
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        text = value.strip().lower()
        base = 16 if text.startswith(("0x", "-0x")) else 10
        return int(text, base)
    raise TypeError("Expect argument to be a string or int, found %s" % type(value))


def _to_float(value):
    if isinstance(value, bool):
        raise TypeError("Expect argument to be a string or float, found %s" % type(value))
    if isinstance(value, (int, float, str)):
        return float(value)
    raise TypeError("Expect argument to be a string or float, found %s" % type(value))


def _to_string(value):
    return value if isinstance(value, str) else str(value)


def _to_list(value):
    if isinstance(value, (list, tuple)):
        return [str(v) for v in value]
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()] if value.strip() else []
    raise TypeError("Expect argument to be a string or list, found %s" % type(value))


class FlagValues:
    """The defined flags and their values: FLAGS.name reads one, FLAGS(argv) parses."""

    def __init__(self):
        object.__setattr__(self, "_flags", {})
        object.__setattr__(self, "_parsed", False)

    # --- defining ---
    def _define(self, flag):
        flags = self._flags
        if flag.name in flags:
            raise DuplicateFlagError("The flag '%s' is defined twice." % flag.name)
        flags[flag.name] = flag
        if flag.short_name:
            if flag.short_name in flags:
                raise DuplicateFlagError("The flag '%s' is defined twice." % flag.short_name)
            flags[flag.short_name] = flag

    def __contains__(self, name):
        return name in self._flags

    # --- reading and writing values ---
    def __getattr__(self, name):
        if name == "__flags":  # TensorFlow <= 1.4 programs read FLAGS.__flags: name -> value
            return self.flag_values_dict()
        flags = object.__getattribute__(self, "_flags")
        if name not in flags:
            raise AttributeError(name)
        if not self._parsed:
            self(_sys.argv, known_only=True)
        return flags[name].value

    def __setattr__(self, name, value):
        flag = self._flags.get(name)
        if flag is None:
            raise AttributeError("%s is not a defined flag" % name)
        flag.value = value if value is None else flag.parse_value(value)
        flag.present += 1

    def __delattr__(self, name):
        flag = self._flags.pop(name, None)
        if flag is None:
            raise AttributeError(name)
        if flag.short_name:
            self._flags.pop(flag.short_name, None)

    def __getitem__(self, name):
        return self._flags[name]

    def flag_values_dict(self):
        return {name: flag.value for name, flag in self._flags.items() if name == flag.name}

    def is_parsed(self):
        return self._parsed

    def mark_as_parsed(self):
        object.__setattr__(self, "_parsed", True)

    def unparse_flags(self):
        for flag in self._flags.values():
            flag.value = flag.default
            flag.present = 0
        object.__setattr__(self, "_parsed", False)

    def reset(self):
        """Forgets every flag (tests that define flags again)."""
        self._flags.clear()
        object.__setattr__(self, "_parsed", False)

    # --- parsing ---
    def __call__(self, argv, known_only=False):
        """Parses the flags of `argv` (argv[0] is the program); returns argv[0] and the
        arguments that are not flags (and, with known_only, the flags nobody defined)."""
        if isinstance(argv, str) or not hasattr(argv, "__iter__"):
            raise TypeError("argv should be a tuple/list of strings, not %r" % (argv,))
        argv = list(argv)
        if not argv:
            raise ValueError("argv cannot be an empty list, and must contain the program name "
                             "as the first element.")
        rest = [argv[0]]
        args = argv[1:]
        i = 0
        while i < len(args):
            arg = args[i]
            i += 1
            if arg == "--":
                rest.extend(args[i - 1:] if known_only else args[i:])
                break
            if not arg.startswith("-") or arg == "-":
                rest.append(arg)
                continue
            body = arg[2:] if arg.startswith("--") else arg[1:]
            name, has_value, value = body.partition("=")
            if name in ("help", "h", "?", "helpfull", "helpshort"):
                print(self.help_text())
                _sys.exit(1)
            flag = self._flags.get(name)
            if flag is None and name.startswith("no") and not has_value:
                negated = self._flags.get(name[2:])
                if negated is not None and negated.kind == "a boolean":
                    negated.value = False
                    negated.present += 1
                    continue
            if flag is None:
                if known_only:
                    rest.append(arg)
                    continue
                raise UnrecognizedFlagError("Unknown command line flag '%s'" % name)
            if flag.kind == "a boolean":
                flag.value = flag.parse_value(value) if has_value else True
            else:
                if not has_value:
                    if i >= len(args):
                        raise Error("Missing value for flag %s" % arg)
                    value = args[i]
                    i += 1
                flag.value = flag.parse_value(value)
            flag.present += 1
        object.__setattr__(self, "_parsed", True)
        return rest

    def help_text(self):
        main = _sys.modules.get("__main__")
        doc = (getattr(main, "__doc__", None) or "").strip()
        lines = [doc, ""] if doc else []
        lines.append("flags:")
        seen = set()
        for name in sorted(self._flags):
            flag = self._flags[name]
            if flag.name in seen:
                continue
            seen.add(flag.name)
            lines.append(flag.describe())
        return "\n".join(lines)

    def __str__(self):
        return self.help_text()


FLAGS = FlagValues()


def _define(name, default, help, kind, convert, flag_values, enum_values=None, short_name=None):
    if not isinstance(name, str) or not name:
        raise Error("Flag name must be a non-empty string, got %r" % (name,))
    flag_values._define(_Flag(name, default, help, kind, convert, enum_values, short_name))


def DEFINE_string(name, default, help, flag_values=FLAGS, short_name=None, **unused):
    _define(name, default, help, "a string", _to_string, flag_values, short_name=short_name)


def DEFINE_integer(name, default, help, lower_bound=None, upper_bound=None, flag_values=FLAGS,
                   short_name=None, **unused):
    def convert(value):
        number = _to_int(value)
        if lower_bound is not None and number < lower_bound:
            raise ValueError("%d is not >= %d" % (number, lower_bound))
        if upper_bound is not None and number > upper_bound:
            raise ValueError("%d is not <= %d" % (number, upper_bound))
        return number
    _define(name, default, help, "an integer", convert, flag_values, short_name=short_name)


def DEFINE_float(name, default, help, lower_bound=None, upper_bound=None, flag_values=FLAGS,
                 short_name=None, **unused):
    def convert(value):
        number = _to_float(value)
        if lower_bound is not None and number < lower_bound:
            raise ValueError("%s is not >= %s" % (number, lower_bound))
        if upper_bound is not None and number > upper_bound:
            raise ValueError("%s is not <= %s" % (number, upper_bound))
        return number
    _define(name, default, help, "a number", convert, flag_values, short_name=short_name)


def DEFINE_boolean(name, default, help, flag_values=FLAGS, short_name=None, **unused):
    _define(name, default, help, "a boolean", _to_bool, flag_values, short_name=short_name)


DEFINE_bool = DEFINE_boolean


def DEFINE_list(name, default, help, flag_values=FLAGS, short_name=None, **unused):
    _define(name, default, help, "a comma separated list of strings", _to_list, flag_values,
            short_name=short_name)


def DEFINE_enum(name, default, enum_values, help, flag_values=FLAGS, short_name=None, **unused):
    if not enum_values or not all(isinstance(v, str) for v in enum_values):
        raise ValueError("enum_values for flag %s must be a non-empty list of strings" % name)
    _define(name, default, help, "one of", _to_string, flag_values, list(enum_values),
            short_name=short_name)
