// tf.data's ops: definitions (names, inputs and attributes as TensorFlow's, a dataset being a
// reference where TensorFlow has a variant) and builders.
#include "troupe/graph/ops/dataset_ops.hpp"

#include "troupe/graph/ops/standard_ops.hpp"
#include "troupe/graph/shape_inference.hpp"

namespace troupe {
namespace {

// Inputs [first, num_inputs) are scalars, where their rank is known.
Status scalar_inputs_from(InferenceContext& c, int first) {
  for (int i = first; i < c.num_inputs(); ++i) {
    if (c.input(i).rank_known() && c.input(i).rank() != 0) {
      return c.invalid("input {} must be a scalar, got shape {}", i, c.input(i).to_string());
    }
  }
  return Status::OK();
}

// A dataset op's output: the reference. Checks the scalar arguments from input `first`.
auto dataset_shape_fn(int first_scalar) {
  return [first_scalar](InferenceContext& c) -> Status {
    TROUPE_RETURN_IF_ERROR(scalar_inputs_from(c, first_scalar));
    c.set_output(0, PartialShape::scalar());
    return Status::OK();
  };
}

// Filenames are a scalar or a vector of strings.
Status filenames_shape_fn(InferenceContext& c) {
  if (c.input(0).rank_known() && c.input(0).rank() > 1) {
    return c.invalid("filenames must be a scalar or a vector, got shape {}",
                     c.input(0).to_string());
  }
  return dataset_shape_fn(1)(c);
}

// IteratorGetNext: the declared element shapes, or unknown.
Status element_shape_fn(InferenceContext& c) {
  const auto& types = c.attr<std::vector<DataType>>("output_types");
  const auto& shapes = c.attr<std::vector<PartialShape>>("output_shapes");
  if (!shapes.empty() && shapes.size() != types.size()) {
    return c.invalid("{} output_shapes for {} output_types", shapes.size(), types.size());
  }
  for (int i = 0; i < c.num_outputs(); ++i)
    c.set_output(i, shapes.empty() ? PartialShape::unknown() : shapes[i]);
  return Status::OK();
}

// Iterator and OneShotIterator: the element they yield must be declared.
Status iterator_shape_fn(InferenceContext& c) {
  const auto& types = c.attr<std::vector<DataType>>("output_types");
  const auto& shapes = c.attr<std::vector<PartialShape>>("output_shapes");
  if (types.empty()) return c.invalid("output_types is empty");
  if (!shapes.empty() && shapes.size() != types.size()) {
    return c.invalid("{} output_shapes for {} output_types", shapes.size(), types.size());
  }
  c.set_output(0, PartialShape::scalar());
  return Status::OK();
}

// The attributes every dataset op declares (TensorFlow's; empty shapes: not declared).
OpDefBuilder dataset_op(const char* name) {
  return OpDefBuilder(name)
      .output("handle: Ref(string)")
      .attr("output_types: list(type) = []")
      .attr("output_shapes: list(shape) = []");
}

}  // namespace

void register_dataset_ops(OpRegistry& r) {
  must_register(r, dataset_op("TensorSliceDataset")
                       .input("components: Toutput_types")
                       .attr("Toutput_types: list(type)")
                       .shape_fn([](InferenceContext& c) -> Status {
                         for (int i = 0; i < c.num_inputs(); ++i) {
                           if (c.input(i).rank_known() && c.input(i).rank() == 0) {
                             return c.invalid(
                                 "component {} is a scalar: slicing needs at "
                                 "least one dimension",
                                 i);
                           }
                         }
                         c.set_output(0, PartialShape::scalar());
                         return Status::OK();
                       }));
  must_register(r, dataset_op("TensorDataset")
                       .input("components: Toutput_types")
                       .attr("Toutput_types: list(type)")
                       .shape_fn(shapes::scalar));
  must_register(r, dataset_op("RangeDataset")
                       .input("start: int64")
                       .input("stop: int64")
                       .input("step: int64")
                       .shape_fn(dataset_shape_fn(0)));
  must_register(r, dataset_op("TFRecordDataset")
                       .input("filenames: string")
                       .input("compression_type: string")
                       .input("buffer_size: int64")
                       .shape_fn(filenames_shape_fn));
  must_register(r, dataset_op("TextLineDataset")
                       .input("filenames: string")
                       .input("compression_type: string")
                       .input("buffer_size: int64")
                       .shape_fn(filenames_shape_fn));
  must_register(r, dataset_op("FixedLengthRecordDataset")
                       .input("filenames: string")
                       .input("header_bytes: int64")
                       .input("record_bytes: int64")
                       .input("footer_bytes: int64")
                       .input("buffer_size: int64")
                       .shape_fn(filenames_shape_fn));
  must_register(r, dataset_op("BatchDatasetV2")
                       .input("input_dataset: Ref(string)")
                       .input("batch_size: int64")
                       .input("drop_remainder: bool")
                       .shape_fn(dataset_shape_fn(1)));
  for (const char* name : {"RepeatDataset", "TakeDataset", "SkipDataset"}) {
    must_register(r, dataset_op(name)
                         .input("input_dataset: Ref(string)")
                         .input("count: int64")
                         .shape_fn(dataset_shape_fn(1)));
  }
  must_register(r, dataset_op("ShardDataset")
                       .input("input_dataset: Ref(string)")
                       .input("num_shards: int64")
                       .input("index: int64")
                       .shape_fn(dataset_shape_fn(1)));
  must_register(r, dataset_op("ShuffleDataset")
                       .input("input_dataset: Ref(string)")
                       .input("buffer_size: int64")
                       .input("seed: int64")
                       .input("seed2: int64")
                       .attr("reshuffle_each_iteration: bool = true")
                       .shape_fn(dataset_shape_fn(1)));
  must_register(r, dataset_op("CacheDataset")
                       .input("input_dataset: Ref(string)")
                       .input("filename: string")
                       .shape_fn(dataset_shape_fn(1)));
  must_register(r, dataset_op("PaddedBatchDatasetV2")
                       .input("input_dataset: Ref(string)")
                       .input("batch_size: int64")
                       .input("padded_shapes: N * int64")
                       .input("padding_values: Toutput_types")
                       .input("drop_remainder: bool")
                       .attr("Toutput_types: list(type)")
                       .attr("N: int >= 1")
                       .shape_fn(shapes::scalar));
  must_register(r, dataset_op("PrefetchDataset")
                       .input("input_dataset: Ref(string)")
                       .input("buffer_size: int64")
                       .shape_fn(dataset_shape_fn(1)));
  // TensorFlow's ZipDataset takes N datasets; troupe's takes two (tf.data zips more as a
  // chain: the components of an element are those of its inputs, in order).
  must_register(r, dataset_op("ZipDataset")
                       .input("input_dataset: Ref(string)")
                       .input("other_dataset: Ref(string)")
                       .shape_fn(shapes::scalar));
  must_register(r, dataset_op("ConcatenateDataset")
                       .input("input_dataset: Ref(string)")
                       .input("another_dataset: Ref(string)")
                       .shape_fn(shapes::scalar));
  must_register(r, dataset_op("MapDataset")
                       .input("input_dataset: Ref(string)")
                       .input("other_arguments: Targuments")
                       .attr("f: string")
                       .attr("Targuments: list(type) = []")
                       .attr("num_parallel_calls: int = 1")
                       .shape_fn(shapes::scalar));
  must_register(r, dataset_op("FilterDataset")
                       .input("input_dataset: Ref(string)")
                       .input("other_arguments: Targuments")
                       .attr("predicate: string")
                       .attr("Targuments: list(type) = []")
                       .shape_fn(shapes::scalar));

  // f returns a dataset (a _RetvalRef); its elements are the output's, in order (flat_map),
  // or cycle_length of them at a time, block_length elements from each in turn (interleave).
  must_register(r, dataset_op("FlatMapDataset")
                       .input("input_dataset: Ref(string)")
                       .input("other_arguments: Targuments")
                       .attr("f: string")
                       .attr("Targuments: list(type) = []")
                       .shape_fn(shapes::scalar));
  must_register(r, dataset_op("InterleaveDataset")
                       .input("input_dataset: Ref(string)")
                       .input("other_arguments: Targuments")
                       .input("cycle_length: int64")
                       .input("block_length: int64")
                       .attr("f: string")
                       .attr("Targuments: list(type) = []")
                       .attr("num_parallel_calls: int = 1")
                       .shape_fn([](InferenceContext& c) -> Status {
                         // The two scalars are the last inputs.
                         for (int i = c.num_inputs() - 2; i < c.num_inputs(); ++i) {
                           if (c.input(i).rank_known() && c.input(i).rank() != 0) {
                             return c.invalid("input {} must be a scalar, got shape {}", i,
                                              c.input(i).to_string());
                           }
                         }
                         c.set_output(0, PartialShape::scalar());
                         return Status::OK();
                       }));
  // Dataset.from_generator's dataset: init_func's results are the state, next_func(state)
  // each element until it fails with OutOfRange (the end), finalize_func(state) then, or
  // when the iterator is dropped before the end.
  must_register(r, dataset_op("GeneratorDataset")
                       .input("init_func_other_args: Tinit_func_args")
                       .input("next_func_other_args: Tnext_func_args")
                       .input("finalize_func_other_args: Tfinalize_func_args")
                       .attr("init_func: string")
                       .attr("next_func: string")
                       .attr("finalize_func: string")
                       .attr("Tinit_func_args: list(type) = []")
                       .attr("Tnext_func_args: list(type) = []")
                       .attr("Tfinalize_func_args: list(type) = []")
                       .stateful()
                       .shape_fn(shapes::scalar));
  // The files matching a glob pattern (or each of a vector of them), sorted (TensorFlow's io
  // op, here for Dataset.list_files).
  must_register(r, OpDefBuilder("MatchingFiles")
                       .input("pattern: string")
                       .output("filenames: string")
                       .shape_fn([](InferenceContext& c) -> Status {
                         if (c.input(0).rank_known() && c.input(0).rank() > 1) {
                           return c.invalid("pattern must be a scalar or a vector, got shape {}",
                                            c.input(0).to_string());
                         }
                         c.set_output(0, PartialShape({-1}));
                         return Status::OK();
                       }));

  must_register(r, OpDefBuilder("Iterator")
                       .output("handle: Ref(string)")
                       .attr("shared_name: string = \"\"")
                       .attr("container: string = \"\"")
                       .attr("output_types: list(type)")
                       .attr("output_shapes: list(shape) = []")
                       .stateful()
                       .shape_fn(iterator_shape_fn));
  must_register(r, OpDefBuilder("OneShotIterator")
                       .input("dataset: Ref(string)")
                       .output("handle: Ref(string)")
                       .attr("shared_name: string = \"\"")
                       .attr("container: string = \"\"")
                       .attr("output_types: list(type)")
                       .attr("output_shapes: list(shape) = []")
                       .stateful()
                       .shape_fn(iterator_shape_fn));
  // Feedable iterators: a string naming an iterator resource, and the iterator a fed string
  // names (on the device that holds it).
  must_register(r, OpDefBuilder("IteratorToStringHandle")
                       .input("resource_handle: Ref(string)")
                       .output("string_handle: string")
                       .stateful()
                       .shape_fn(shapes::scalar));
  must_register(r, OpDefBuilder("IteratorFromStringHandle")
                       .input("string_handle: string")
                       .output("resource_handle: Ref(string)")
                       .attr("output_types: list(type)")
                       .attr("output_shapes: list(shape) = []")
                       .stateful()
                       .shape_fn(iterator_shape_fn));
  must_register(r, OpDefBuilder("MakeIterator")
                       .input("dataset: Ref(string)")
                       .input("iterator: Ref(string)")
                       .stateful()
                       .shape_fn(shapes::no_outputs));
  must_register(r, OpDefBuilder("IteratorGetNext")
                       .input("iterator: Ref(string)")
                       .output("components: output_types")
                       .attr("output_types: list(type)")
                       .attr("output_shapes: list(shape) = []")
                       .stateful()
                       .shape_fn(element_shape_fn));
}

namespace ops {
namespace {

NodeBuilder& declare(NodeBuilder& builder, const DatasetShapes& element) {
  return builder.attr("output_types", element.types).attr("output_shapes", element.shapes);
}

Output unary(const Scope& s, const char* op, Input dataset, const std::vector<Input>& scalars) {
  NodeBuilder builder(s, op);
  builder.input(std::move(dataset));
  for (const Input& scalar : scalars)
    builder.input(scalar);
  return builder.finalize();
}

}  // namespace

Output TensorSliceDataset(const Scope& s, const std::vector<Input>& components) {
  return NodeBuilder(s, "TensorSliceDataset").input_list(components).finalize();
}

Output TensorDataset(const Scope& s, const std::vector<Input>& components) {
  return NodeBuilder(s, "TensorDataset").input_list(components).finalize();
}

Output RangeDataset(const Scope& s, Input start, Input stop, Input step) {
  return NodeBuilder(s, "RangeDataset").input(start).input(stop).input(step).finalize();
}

Output TFRecordDataset(const Scope& s, Input filenames) {
  return NodeBuilder(s, "TFRecordDataset")
      .input(filenames)
      .input(Input(""))
      .input(Input(int64_t{0}))
      .finalize();
}

Output TextLineDataset(const Scope& s, Input filenames) {
  return NodeBuilder(s, "TextLineDataset")
      .input(filenames)
      .input(Input(""))
      .input(Input(int64_t{0}))
      .finalize();
}

Output FixedLengthRecordDataset(const Scope& s, Input filenames, Input header_bytes,
                                Input record_bytes, Input footer_bytes) {
  return NodeBuilder(s, "FixedLengthRecordDataset")
      .input(filenames)
      .input(header_bytes)
      .input(record_bytes)
      .input(footer_bytes)
      .input(Input(int64_t{0}))
      .finalize();
}

Output BatchDataset(const Scope& s, Input dataset, Input batch_size, Input drop_remainder) {
  return unary(s, "BatchDatasetV2", std::move(dataset), {batch_size, drop_remainder});
}
Output RepeatDataset(const Scope& s, Input dataset, Input count) {
  return unary(s, "RepeatDataset", std::move(dataset), {count});
}
Output TakeDataset(const Scope& s, Input dataset, Input count) {
  return unary(s, "TakeDataset", std::move(dataset), {count});
}
Output SkipDataset(const Scope& s, Input dataset, Input count) {
  return unary(s, "SkipDataset", std::move(dataset), {count});
}
Output ShardDataset(const Scope& s, Input dataset, Input num_shards, Input index) {
  return unary(s, "ShardDataset", std::move(dataset), {num_shards, index});
}
Output PrefetchDataset(const Scope& s, Input dataset, Input buffer_size) {
  return unary(s, "PrefetchDataset", std::move(dataset), {buffer_size});
}

Output ShuffleDataset(const Scope& s, Input dataset, Input buffer_size, Input seed, Input seed2,
                      bool reshuffle_each_iteration) {
  return NodeBuilder(s, "ShuffleDataset")
      .input(dataset)
      .input(buffer_size)
      .input(seed)
      .input(seed2)
      .attr("reshuffle_each_iteration", reshuffle_each_iteration)
      .finalize();
}

Output ZipDataset(const Scope& s, Input dataset, Input other) {
  return NodeBuilder(s, "ZipDataset").input(dataset).input(other).finalize();
}

Output ConcatenateDataset(const Scope& s, Input dataset, Input other) {
  return NodeBuilder(s, "ConcatenateDataset").input(dataset).input(other).finalize();
}

Output MapDataset(const Scope& s, Input dataset, const std::vector<Input>& captured,
                  const std::string& function, const DatasetShapes& output) {
  NodeBuilder builder(s, "MapDataset");
  builder.input(dataset).input_list(captured).attr("f", function);
  return declare(builder, output).finalize();
}

Output FilterDataset(const Scope& s, Input dataset, const std::vector<Input>& captured,
                     const std::string& predicate) {
  return NodeBuilder(s, "FilterDataset")
      .input(dataset)
      .input_list(captured)
      .attr("predicate", predicate)
      .finalize();
}

Output FlatMapDataset(const Scope& s, Input dataset, const std::vector<Input>& captured,
                      const std::string& function, const DatasetShapes& output) {
  NodeBuilder builder(s, "FlatMapDataset");
  builder.input(dataset).input_list(captured).attr("f", function);
  return declare(builder, output).finalize();
}

Output InterleaveDataset(const Scope& s, Input dataset, const std::vector<Input>& captured,
                         Input cycle_length, Input block_length, const std::string& function,
                         const DatasetShapes& output) {
  NodeBuilder builder(s, "InterleaveDataset");
  builder.input(dataset)
      .input_list(captured)
      .input(cycle_length)
      .input(block_length)
      .attr("f", function);
  return declare(builder, output).finalize();
}

Output MatchingFiles(const Scope& s, Input pattern) {
  return NodeBuilder(s, "MatchingFiles").input(pattern).finalize();
}

Output Iterator(const Scope& s, const DatasetShapes& element) {
  NodeBuilder builder(s, "Iterator");
  return declare(builder, element).finalize();
}

Operation MakeIterator(const Scope& s, Input dataset, Input iterator) {
  return NodeBuilder(s, "MakeIterator").input(dataset).input(iterator).finalize();
}

Output OneShotIterator(const Scope& s, Input dataset, const DatasetShapes& element) {
  NodeBuilder builder(s, "OneShotIterator");
  builder.input(dataset);
  return declare(builder, element).finalize();
}

std::vector<Output> IteratorGetNext(const Scope& s, Input iterator, const DatasetShapes& element) {
  NodeBuilder builder(s, "IteratorGetNext");
  builder.input(iterator);
  Operation op = declare(builder, element).finalize();
  std::vector<Output> outputs;
  if (!op.valid()) return outputs;
  for (int i = 0; i < op.num_outputs(); ++i)
    outputs.emplace_back(op, i);
  return outputs;
}

}  // namespace ops
}  // namespace troupe
