"""A small protocol buffer runtime for TensorFlow's messages that Python programs build and read
(tf.Summary, tf.Event, tf.SessionLog, ...): no protobuf library needed.

A message class lists its fields, `FIELDS = {name: (number, type, label)}`; type is a scalar
kind ("double", "float", "int32", "int64", "uint32", "uint64", "bool", "enum", "string",
"bytes") or a Message subclass; label is "optional", "repeated" or "oneof:<group>". They behave
as protobuf's Python messages do for what TensorFlow programs use: keyword construction,
attribute access with defaults, sub-messages that exist on access and become present when set,
repeated fields as lists (`summary.value.add(tag=..., simple_value=...)` for messages), oneof
groups (`WhichOneof`), map<string, Message> fields (label "map"), `HasField`,
`SerializeToString` (proto3: scalars at zero are left out,
numbers of repeated scalars packed), `FromString`/`ParseFromString` (unknown fields skipped),
`==`, `CopyFrom`, and a text form for str().
"""

import struct

_PACKABLE = {"double", "float", "int32", "int64", "uint32", "uint64", "bool", "enum"}
_DEFAULTS = {"double": 0.0, "float": 0.0, "int32": 0, "int64": 0, "uint32": 0, "uint64": 0,
             "bool": False, "enum": 0, "string": "", "bytes": b""}


class DecodeError(Exception):
    """Bytes that are not a message of the class they are parsed as."""


def _check_scalar(kind, value, where):
    if kind in ("double", "float"):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError("%r has type %s, but expected one of: int, float (%s)"
                            % (value, type(value).__name__, where))
        return float(value)
    if kind in ("int32", "int64", "uint32", "uint64", "enum"):
        if isinstance(value, bool) or not isinstance(value, int):
            if hasattr(value, "__index__"):
                return int(value)
            raise TypeError("%r has type %s, but expected one of: int (%s)"
                            % (value, type(value).__name__, where))
        return value
    if kind == "bool":
        return bool(value)
    if kind == "string":
        if isinstance(value, bytes):
            value = value.decode("utf-8")
        if not isinstance(value, str):
            raise TypeError("%r has type %s, but expected one of: bytes, unicode (%s)"
                            % (value, type(value).__name__, where))
        return value
    if kind == "bytes":
        if isinstance(value, str):
            value = value.encode("utf-8")
        if not isinstance(value, (bytes, bytearray)):
            raise TypeError("%r has type %s, but expected one of: bytes (%s)"
                            % (value, type(value).__name__, where))
        return bytes(value)
    raise TypeError("unknown field kind %s" % kind)


class RepeatedField(list):
    """A repeated field: a list whose items are checked (scalars) or made (messages)."""

    def __init__(self, kind, where, on_change):
        super().__init__()
        self._kind = kind
        self._where = where
        self._on_change = on_change

    def _item(self, value):
        if isinstance(self._kind, type):
            if isinstance(value, dict):
                value = self._kind(**value)
            if not isinstance(value, self._kind):
                raise TypeError("%s: expected %s, got %r" % (self._where, self._kind.__name__,
                                                             value))
            return value
        return _check_scalar(self._kind, value, self._where)

    def add(self, **fields):
        if not isinstance(self._kind, type):
            raise AttributeError("add() is for repeated message fields (%s)" % self._where)
        item = self._kind(**fields)
        super().append(item)
        self._on_change()
        return item

    def append(self, value):
        super().append(self._item(value))
        self._on_change()

    def extend(self, values):
        for v in values:
            self.append(v)

    def __setitem__(self, index, value):
        super().__setitem__(index, self._item(value))


class MessageMap(dict):
    """A map<string, Message> field: `m[key]` makes the entry on first access, as protobuf's
    message maps do; items set must be messages of the value class."""

    def __init__(self, kind, where, on_change):
        super().__init__()
        self._kind = kind
        self._where = where
        self._on_change = on_change

    def _check_key(self, key):
        if not isinstance(key, str):
            raise TypeError("%r has type %s, but expected one of: str (%s key)"
                            % (key, type(key).__name__, self._where))

    def __missing__(self, key):
        self._check_key(key)
        value = self._kind()
        dict.__setitem__(self, key, value)
        self._on_change()
        return value

    def __setitem__(self, key, value):
        raise ValueError("May not set values directly, call %s[%r].CopyFrom(...)"
                         % (self._where, key))

    def get_or_create(self, key):
        return self[key]

    def update(self, other=(), **more):
        items = list(other.items() if hasattr(other, "items") else other) + list(more.items())
        for key, value in items:
            if isinstance(value, dict):
                value = self._kind(**value)
            if not isinstance(value, self._kind):
                raise TypeError("%s: expected %s values, got %s"
                                % (self._where, self._kind.__name__, type(value).__name__))
            self[key].CopyFrom(value)


class Message:
    FIELDS = {}
    _ENUMS = {}

    def __init__(self, **fields):
        object.__setattr__(self, "_values", {})
        object.__setattr__(self, "_present", set())
        object.__setattr__(self, "_parent", None)
        for name, value in fields.items():
            if name not in self.FIELDS:
                raise ValueError('Protocol message %s has no "%s" field.'
                                 % (type(self).__name__, name))
            label = self.FIELDS[name][2]
            if label == "repeated":
                getattr(self, name).extend(value)
            elif label == "map":
                getattr(self, name).update(value)
            elif isinstance(self.FIELDS[name][1], type):
                kind = self.FIELDS[name][1]
                if isinstance(value, dict):
                    value = kind(**value)
                if not isinstance(value, kind):
                    raise TypeError("Parameter to MergeFrom() must be instance of same class: "
                                    "expected %s got %s." % (kind.__name__, type(value).__name__))
                getattr(self, name).MergeFrom(value)
                self._mark(name)
            else:
                setattr(self, name, value)

    # --- presence ---
    def _mark(self, name):
        label = self.FIELDS[name][2]
        if label.startswith("oneof:"):
            for other, (_, _, other_label) in self.FIELDS.items():
                if other != name and other_label == label:
                    self._values.pop(other, None)
                    self._present.discard(other)
        self._present.add(name)
        if self._parent is not None:
            parent, field = self._parent
            parent._mark(field)

    def __getattr__(self, name):
        fields = type(self).FIELDS
        if name not in fields:
            raise AttributeError("%s has no field %s" % (type(self).__name__, name))
        values = self._values
        if name in values:
            return values[name]
        _, kind, label = fields[name]
        if label == "map":
            value = MessageMap(kind, "%s.%s" % (type(self).__name__, name),
                               lambda: self._mark(name))
            values[name] = value
            return value
        if label == "repeated":
            value = RepeatedField(kind, "%s.%s" % (type(self).__name__, name),
                                  lambda: self._mark(name))
            values[name] = value
            return value
        if isinstance(kind, type):
            value = kind()
            object.__setattr__(value, "_parent", (self, name))
            values[name] = value
            return value
        return _DEFAULTS[kind]

    def __setattr__(self, name, value):
        if name not in self.FIELDS:
            raise AttributeError('Assignment not allowed (no field "%s" in protocol message %s '
                                 'object).' % (name, type(self).__name__))
        _, kind, label = self.FIELDS[name]
        if label == "repeated" or isinstance(kind, type):
            raise AttributeError("Assignment not allowed to field \"%s\" in protocol message "
                                 "object." % name)
        self._values[name] = _check_scalar(kind, value, "%s.%s" % (type(self).__name__, name))
        self._mark(name)

    def HasField(self, name):
        if name not in self.FIELDS:
            raise ValueError('Protocol message %s has no field %s.' % (type(self).__name__, name))
        if self.FIELDS[name][2] in ("repeated", "map"):
            raise ValueError('Protocol message has no singular "%s" field.' % name)
        return name in self._present

    def WhichOneof(self, group):
        for name, (_, _, label) in self.FIELDS.items():
            if label == "oneof:" + group and name in self._present:
                return name
        if not any(label == "oneof:" + group for _, _, label in self.FIELDS.values()):
            raise ValueError('Protocol message has no oneof "%s" field.' % group)
        return None

    def Clear(self):
        self._values.clear()
        self._present.clear()

    def ClearField(self, name):
        self._values.pop(name, None)
        self._present.discard(name)

    def ListFields(self):
        return [(name, getattr(self, name)) for name in self.FIELDS if self._has_value(name)]

    def _has_value(self, name):
        _, kind, label = self.FIELDS[name]
        if label in ("repeated", "map"):
            return len(self._values.get(name, ())) > 0
        if label.startswith("oneof:") or isinstance(kind, type):
            return name in self._present
        return self._values.get(name, _DEFAULTS[kind]) != _DEFAULTS[kind]

    # --- copying and comparing ---
    def CopyFrom(self, other):
        if other is self:
            return
        self._values.clear()
        self._present.clear()
        self.MergeFrom(other)

    def MergeFrom(self, other):
        if type(other) is not type(self):
            raise TypeError("Parameter to MergeFrom() must be instance of same class: expected "
                            "%s got %s." % (type(self).__name__, type(other).__name__))
        for name, value in other.ListFields():
            _, kind, label = self.FIELDS[name]
            if label == "map":
                target = getattr(self, name)
                for key, item in value.items():
                    target[key].MergeFrom(item)
            elif label == "repeated":
                target = getattr(self, name)
                for item in value:
                    if isinstance(kind, type):
                        copy = kind()
                        copy.MergeFrom(item)
                        target.append(copy)
                    else:
                        target.append(item)
            elif isinstance(kind, type):
                getattr(self, name).MergeFrom(value)
                self._mark(name)
            else:
                setattr(self, name, value)

    def __eq__(self, other):
        return type(other) is type(self) and self.ListFields() == other.ListFields()

    def __ne__(self, other):
        return not self == other

    __hash__ = None

    # --- the wire format ---
    def SerializeToString(self, deterministic=None):
        out = bytearray()
        for name, (number, kind, label) in self.FIELDS.items():
            if not self._has_value(name):
                continue
            value = getattr(self, name)
            if label == "map":  # entries: key = 1, value = 2, in key order (deterministic)
                for key in sorted(value):
                    entry = bytearray()
                    _put_field(entry, 1, "string", key)
                    _put_field(entry, 2, kind, value[key])
                    _put_field(out, number, "bytes", bytes(entry))
            elif label == "repeated":
                if kind in _PACKABLE:
                    packed = bytearray()
                    for item in value:
                        _put_scalar(packed, kind, item)
                    _put_key(out, number, 2)
                    _put_varint(out, len(packed))
                    out += packed
                else:
                    for item in value:
                        _put_field(out, number, kind, item)
            else:
                _put_field(out, number, kind, value)
        return bytes(out)

    def ByteSize(self):
        return len(self.SerializeToString())

    @classmethod
    def FromString(cls, data):
        message = cls()
        message.ParseFromString(data)
        return message

    def ParseFromString(self, data):
        self._values.clear()
        self._present.clear()
        self.MergeFromString(data)
        return len(data)

    def MergeFromString(self, data):
        data = bytes(data)
        by_number = {number: (name, kind, label)
                     for name, (number, kind, label) in self.FIELDS.items()}
        pos = 0
        while pos < len(data):
            key, pos = _get_varint(data, pos)
            number, wire = key >> 3, key & 7
            if number == 0:
                raise DecodeError("%s: field number 0" % type(self).__name__)
            if number not in by_number:
                pos = _skip(data, pos, wire)
                continue
            name, kind, label = by_number[number]
            if label == "map":
                if wire != 2:
                    raise DecodeError("field %s: wire type %d" % (name, wire))
                length, pos = _get_varint(data, pos)
                if pos + length > len(data):
                    raise DecodeError("truncated field %s" % name)
                key, item = _map_entry(data[pos:pos + length], kind, name)
                pos += length
                getattr(self, name)[key].CopyFrom(item)
                continue
            if label == "repeated" and kind in _PACKABLE and wire == 2:
                length, pos = _get_varint(data, pos)
                end = pos + length
                if end > len(data):
                    raise DecodeError("truncated packed field %s" % name)
                target = getattr(self, name)
                while pos < end:
                    value, pos = _get_scalar(data, pos, kind)
                    target.append(value)
                continue
            if isinstance(kind, type):
                if wire != 2:
                    raise DecodeError("field %s: wire type %d" % (name, wire))
                length, pos = _get_varint(data, pos)
                if pos + length > len(data):
                    raise DecodeError("truncated field %s" % name)
                sub = kind()
                sub.MergeFromString(data[pos:pos + length])
                pos += length
                if label == "repeated":
                    getattr(self, name).append(sub)
                else:
                    getattr(self, name).MergeFrom(sub)
                    self._mark(name)
                continue
            if kind in ("string", "bytes"):
                if wire != 2:
                    raise DecodeError("field %s: wire type %d" % (name, wire))
                length, pos = _get_varint(data, pos)
                if pos + length > len(data):
                    raise DecodeError("truncated field %s" % name)
                raw = data[pos:pos + length]
                pos += length
                value = raw.decode("utf-8", "replace") if kind == "string" else raw
            else:
                value, pos = _get_scalar(data, pos, kind)
            if label == "repeated":
                getattr(self, name).append(value)
            else:
                setattr(self, name, value)

    # --- text ---
    def __str__(self):
        return self._text(0)

    def __repr__(self):
        return self._text(0)

    def _text(self, indent):
        lines = []
        pad = "  " * indent
        for name, value in self.ListFields():
            _, kind, label = self.FIELDS[name]
            if label == "map":
                for key in sorted(value):
                    lines.append('%s%s {\n%s  key: "%s"\n%s  value {\n%s%s  }\n%s}\n'
                                 % (pad, name, pad, key, pad, value[key]._text(indent + 2),
                                    pad, pad))
                continue
            items = value if label == "repeated" else [value]
            for item in items:
                if isinstance(item, Message):
                    lines.append("%s%s {\n%s%s}\n" % (pad, name, item._text(indent + 1), pad))
                elif isinstance(item, str):
                    lines.append('%s%s: "%s"\n' % (pad, name, item.encode("unicode_escape")
                                                   .decode("ascii").replace('"', '\\"')))
                elif isinstance(item, bytes):
                    lines.append('%s%s: "%s"\n' % (pad, name, "".join(
                        chr(b) if 32 <= b < 127 and chr(b) not in '"\\' else "\\%03o" % b
                        for b in item)))
                elif isinstance(item, bool):
                    lines.append("%s%s: %s\n" % (pad, name, "true" if item else "false"))
                elif kind == "enum" and self._ENUMS.get(name):
                    lines.append("%s%s: %s\n" % (pad, name,
                                                 self._ENUMS[name].get(item, str(item))))
                else:
                    lines.append("%s%s: %r\n" % (pad, name, item))
        return "".join(lines)


def _map_entry(data, kind, name):
    """The (key, value) of one serialized map<string, kind> entry."""
    key, value, pos = "", kind(), 0
    while pos < len(data):
        tag, pos = _get_varint(data, pos)
        number, wire = tag >> 3, tag & 7
        if number in (1, 2) and wire == 2:
            length, pos = _get_varint(data, pos)
            if pos + length > len(data):
                raise DecodeError("truncated entry of %s" % name)
            raw = data[pos:pos + length]
            pos += length
            if number == 1:
                key = raw.decode("utf-8", "replace")
            else:
                value.MergeFromString(raw)
        else:
            pos = _skip(data, pos, wire)
    return key, value


# --- encoding helpers ---

def _put_varint(out, value):
    value &= (1 << 64) - 1
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)


def _put_key(out, number, wire):
    _put_varint(out, (number << 3) | wire)


def _put_scalar(out, kind, value):
    if kind == "double":
        out += struct.pack("<d", value)
    elif kind == "float":
        out += struct.pack("<f", value)
    else:
        _put_varint(out, int(value))


_WIRE = {"double": 1, "float": 5}


def _put_field(out, number, kind, value):
    if isinstance(kind, type):
        data = value.SerializeToString()
        _put_key(out, number, 2)
        _put_varint(out, len(data))
        out += data
    elif kind in ("string", "bytes"):
        data = value.encode("utf-8") if isinstance(value, str) else value
        _put_key(out, number, 2)
        _put_varint(out, len(data))
        out += data
    else:
        _put_key(out, number, _WIRE.get(kind, 0))
        _put_scalar(out, kind, value)


def _get_varint(data, pos):
    result = shift = 0
    while True:
        if pos >= len(data):
            raise DecodeError("truncated varint")
        b = data[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7
        if shift >= 70:
            raise DecodeError("varint too long")


def _get_scalar(data, pos, kind):
    if kind == "double":
        if pos + 8 > len(data):
            raise DecodeError("truncated double")
        return struct.unpack_from("<d", data, pos)[0], pos + 8
    if kind == "float":
        if pos + 4 > len(data):
            raise DecodeError("truncated float")
        return struct.unpack_from("<f", data, pos)[0], pos + 4
    value, pos = _get_varint(data, pos)
    if kind in ("int32", "int64", "enum") and value >= 1 << 63:
        value -= 1 << 64
    if kind == "bool":
        value = bool(value)
    return value, pos


def _skip(data, pos, wire):
    if wire == 0:
        return _get_varint(data, pos)[1]
    if wire == 1:
        return pos + 8
    if wire == 5:
        return pos + 4
    if wire == 2:
        length, pos = _get_varint(data, pos)
        return pos + length
    raise DecodeError("unsupported wire type %d" % wire)
