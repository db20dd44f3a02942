"""TensorFlow's summary and event messages (tf.Summary, tf.Event, tf.SessionLog, ...), with the
field numbers of TensorFlow's summary.proto, event.proto, tensor.proto and tensor_shape.proto,
on troupe's protobuf runtime (protobuf.py)."""

from .protobuf import Message


class TensorShapeProto(Message):
    class Dim(Message):
        FIELDS = {"size": (1, "int64", "optional"), "name": (2, "string", "optional")}

    FIELDS = {"dim": (2, Dim, "repeated"), "unknown_rank": (3, "bool", "optional")}


class TensorProto(Message):
    _ENUMS = {"dtype": {0: "DT_INVALID", 1: "DT_FLOAT", 2: "DT_DOUBLE", 3: "DT_INT32",
                        4: "DT_UINT8", 7: "DT_STRING", 9: "DT_INT64", 10: "DT_BOOL"}}
    FIELDS = {
        "dtype": (1, "enum", "optional"),
        "tensor_shape": (2, TensorShapeProto, "optional"),
        "version_number": (3, "int32", "optional"),
        "tensor_content": (4, "bytes", "optional"),
        "float_val": (5, "float", "repeated"),
        "double_val": (6, "double", "repeated"),
        "int_val": (7, "int32", "repeated"),
        "string_val": (8, "bytes", "repeated"),
        "int64_val": (10, "int64", "repeated"),
        "bool_val": (11, "bool", "repeated"),
    }


class HistogramProto(Message):
    FIELDS = {
        "min": (1, "double", "optional"),
        "max": (2, "double", "optional"),
        "num": (3, "double", "optional"),
        "sum": (4, "double", "optional"),
        "sum_squares": (5, "double", "optional"),
        "bucket_limit": (6, "double", "repeated"),
        "bucket": (7, "double", "repeated"),
    }


class SummaryMetadata(Message):
    class PluginData(Message):
        FIELDS = {"plugin_name": (1, "string", "optional"), "content": (2, "bytes", "optional")}

    FIELDS = {
        "plugin_data": (1, PluginData, "optional"),
        "display_name": (2, "string", "optional"),
        "summary_description": (3, "string", "optional"),
    }


class SummaryDescription(Message):
    FIELDS = {"type_hint": (1, "string", "optional")}


class Summary(Message):
    class Image(Message):
        FIELDS = {
            "height": (1, "int32", "optional"),
            "width": (2, "int32", "optional"),
            "colorspace": (3, "int32", "optional"),
            "encoded_image_string": (4, "bytes", "optional"),
        }

    class Audio(Message):
        FIELDS = {
            "sample_rate": (1, "float", "optional"),
            "num_channels": (2, "int64", "optional"),
            "length_frames": (3, "int64", "optional"),
            "encoded_audio_string": (4, "bytes", "optional"),
            "content_type": (5, "string", "optional"),
        }

    class Value(Message):
        pass

    FIELDS = {}


Summary.Value.FIELDS = {
    "node_name": (7, "string", "optional"),
    "tag": (1, "string", "optional"),
    "metadata": (9, SummaryMetadata, "optional"),
    "simple_value": (2, "float", "oneof:value"),
    "obsolete_old_style_histogram": (3, "bytes", "oneof:value"),
    "image": (4, Summary.Image, "oneof:value"),
    "histo": (5, HistogramProto, "oneof:value"),
    "audio": (6, Summary.Audio, "oneof:value"),
    "tensor": (8, TensorProto, "oneof:value"),
}
Summary.FIELDS = {"value": (1, Summary.Value, "repeated")}


class LogMessage(Message):
    UNKNOWN, DEBUGGING, INFO, WARN, ERROR, FATAL = 0, 10, 20, 30, 40, 50
    FIELDS = {"level": (1, "enum", "optional"), "message": (2, "string", "optional")}


class SessionLog(Message):
    STATUS_UNSPECIFIED, START, STOP, CHECKPOINT = 0, 1, 2, 3
    FIELDS = {
        "status": (1, "enum", "optional"),
        "checkpoint_path": (2, "string", "optional"),
        "msg": (3, "string", "optional"),
    }
    _ENUMS = {"status": {0: "STATUS_UNSPECIFIED", 1: "START", 2: "STOP", 3: "CHECKPOINT"}}


class TaggedRunMetadata(Message):
    FIELDS = {"tag": (1, "string", "optional"), "run_metadata": (2, "bytes", "optional")}


class Event(Message):
    FIELDS = {
        "wall_time": (1, "double", "optional"),
        "step": (2, "int64", "optional"),
        "file_version": (3, "string", "oneof:what"),
        "graph_def": (4, "bytes", "oneof:what"),
        "summary": (5, Summary, "oneof:what"),
        "log_message": (6, LogMessage, "oneof:what"),
        "session_log": (7, SessionLog, "oneof:what"),
        "tagged_run_metadata": (8, TaggedRunMetadata, "oneof:what"),
        "meta_graph_def": (9, "bytes", "oneof:what"),
    }
