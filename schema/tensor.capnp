# Tensor and shape on the wire: what a tensor looks like when it leaves a process.
# The byte layout is documented in docs/wire.md.
@0xc3ede0eb4c71b8f6;

using Cxx = import "/capnp/c++.capnp";
$Cxx.namespace("troupe::wire");

# Element types. Numbers match troupe::DataType (graph/core/types.hpp).
enum DataType {
  invalid @0;
  float32 @1;
  float64 @2;
  int32 @3;
  int64 @4;
  bool @5;
  string @6;
  uint8 @7;
}

# A shape that may be partly unknown (used by placeholders and shape inference).
# dims holds -1 for an unknown dimension; unknownRank means nothing is known.
struct TensorShape {
  dims @0 :List(Int64);
  unknownRank @1 :Bool;
}

# A tensor value. Numeric data is little-endian, row-major, and split into chunks of at most
# 256 MiB (a Data blob holds less than 512 MiB); most tensors have exactly one chunk, which a
# reader uses in place. String tensors carry one Data entry per element instead.
struct Tensor {
  dtype @0 :DataType;
  shape @1 :List(Int64);
  chunks @2 :List(Data);
  strings @3 :List(Data);
}
