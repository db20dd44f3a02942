"""tf.train.Example and its messages (Features, Feature, BytesList, FloatList, Int64List,
SequenceExample, FeatureList, FeatureLists), with the field numbers of TensorFlow's
example/example.proto and example/feature.proto, on troupe's protobuf runtime
(protobuf.py). ParseExample (devices/cpu/example_proto.hpp) decodes what they encode."""

from .protobuf import Message


class BytesList(Message):
    FIELDS = {"value": (1, "bytes", "repeated")}


class FloatList(Message):
    FIELDS = {"value": (1, "float", "repeated")}


class Int64List(Message):
    FIELDS = {"value": (1, "int64", "repeated")}


class Feature(Message):
    FIELDS = {"bytes_list": (1, BytesList, "oneof:kind"),
              "float_list": (2, FloatList, "oneof:kind"),
              "int64_list": (3, Int64List, "oneof:kind")}


class Features(Message):
    FIELDS = {"feature": (1, Feature, "map")}


class FeatureList(Message):
    FIELDS = {"feature": (1, Feature, "repeated")}


class FeatureLists(Message):
    FIELDS = {"feature_list": (1, FeatureList, "map")}


class Example(Message):
    FIELDS = {"features": (1, Features, "optional")}


class SequenceExample(Message):
    FIELDS = {"context": (1, Features, "optional"),
              "feature_lists": (2, FeatureLists, "optional")}
