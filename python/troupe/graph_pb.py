"""TensorFlow's GraphDef messages (graph.proto, node_def.proto, attr_value.proto), on troupe's
protobuf runtime: what Graph.as_graph_def() returns and tf.train.write_graph writes. A troupe
graph's ops and attributes are TensorFlow's, so TensorFlow's tools read it."""

from .protobuf import Message
from .summary_pb import TensorProto, TensorShapeProto


DATA_TYPE_NAMES = {0: "DT_INVALID", 1: "DT_FLOAT", 2: "DT_DOUBLE", 3: "DT_INT32", 4: "DT_UINT8",
                   7: "DT_STRING", 9: "DT_INT64", 10: "DT_BOOL"}


class AttrValue(Message):
    _ENUMS = {"type": DATA_TYPE_NAMES}

    class ListValue(Message):
        _ENUMS = {"type": DATA_TYPE_NAMES}
        FIELDS = {
            "s": (2, "bytes", "repeated"),
            "i": (3, "int64", "repeated"),
            "f": (4, "float", "repeated"),
            "b": (5, "bool", "repeated"),
            "type": (6, "enum", "repeated"),
            "shape": (7, TensorShapeProto, "repeated"),
            "tensor": (8, TensorProto, "repeated"),
        }

    FIELDS = {
        "list": (1, ListValue, "oneof:value"),
        "s": (2, "bytes", "oneof:value"),
        "i": (3, "int64", "oneof:value"),
        "f": (4, "float", "oneof:value"),
        "b": (5, "bool", "oneof:value"),
        "type": (6, "enum", "oneof:value"),
        "shape": (7, TensorShapeProto, "oneof:value"),
        "tensor": (8, TensorProto, "oneof:value"),
        "placeholder": (9, "string", "oneof:value"),
    }


class NodeDef(Message):
    class AttrEntry(Message):
        FIELDS = {"key": (1, "string", "optional"), "value": (2, AttrValue, "optional")}

    FIELDS = {
        "name": (1, "string", "optional"),
        "op": (2, "string", "optional"),
        "input": (3, "string", "repeated"),
        "device": (4, "string", "optional"),
        "attr": (5, AttrEntry, "repeated"),
    }

    def attr_value(self, key):
        """The AttrValue of attribute `key` (KeyError if it has none)."""
        for entry in self.attr:
            if entry.key == key:
                return entry.value
        raise KeyError(key)


class VersionDef(Message):
    FIELDS = {"producer": (1, "int32", "optional"), "min_consumer": (2, "int32", "optional"),
              "bad_consumers": (3, "int32", "repeated")}


class GraphDef(Message):
    FIELDS = {"node": (1, NodeDef, "repeated"), "versions": (4, VersionDef, "optional"),
              "version": (3, "int32", "optional")}
