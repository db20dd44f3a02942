// Parsing ops (records and text): definitions (TensorFlow 1.x's signatures) and builders.
#include "troupe/graph/ops/parsing_ops.hpp"

#include "troupe/graph/ops/standard_ops.hpp"
#include "troupe/graph/shape_inference.hpp"

namespace troupe {
namespace {

Status check_feature_types(InferenceContext& c, const char* attr) {
  for (DataType t : c.attr<std::vector<DataType>>(attr)) {
    if (t != DataType::kFloat && t != DataType::kInt64 && t != DataType::kString) {
      return c.invalid("{} may hold float32, int64 and string (the kinds of a Feature), not {}",
                       attr, dtype_name(t));
    }
  }
  return Status::OK();
}

Status parse_example_shape(InferenceContext& c) {
  TROUPE_RETURN_IF_ERROR(check_feature_types(c, "sparse_types"));
  TROUPE_RETURN_IF_ERROR(check_feature_types(c, "Tdense"));
  const PartialShape& serialized = c.input(0);
  if (serialized.rank_known() && serialized.rank() != 1) {
    return c.invalid("serialized must be a vector of records, got shape {}",
                     serialized.to_string());
  }
  int64_t batch = serialized.rank_known() ? serialized.dim(0) : -1;
  auto sparse = static_cast<int>(c.attr<int64_t>("Nsparse"));
  auto dense = static_cast<int>(c.attr<int64_t>("Ndense"));
  const auto& shapes = c.attr<std::vector<PartialShape>>("dense_shapes");
  if (static_cast<int>(c.attr<std::vector<DataType>>("sparse_types").size()) != sparse) {
    return c.invalid("{} sparse_types for {} sparse keys",
                     c.attr<std::vector<DataType>>("sparse_types").size(), sparse);
  }
  if (static_cast<int>(shapes.size()) != dense) {
    return c.invalid("{} dense_shapes for {} dense keys", shapes.size(), dense);
  }
  int out = 0;
  for (int i = 0; i < sparse; ++i)
    c.set_output(out++, PartialShape{-1, 2});
  for (int i = 0; i < sparse; ++i)
    c.set_output(out++, PartialShape{-1});
  for (int i = 0; i < sparse; ++i)
    c.set_output(out++, PartialShape{2});
  for (int i = 0; i < dense; ++i) {
    if (!shapes[i].rank_known()) return c.invalid("dense_shapes[{}] must have a known rank", i);
    std::vector<int64_t> dims{batch};
    dims.insert(dims.end(), shapes[i].dims().begin(), shapes[i].dims().end());
    c.set_output(out++, PartialShape(dims));
  }
  return Status::OK();
}

// DecodeCSV: a default per column, each a scalar or a vector of 0 (the column is required) or 1
// values; every output has the shape of `records`.
Status decode_csv_shape(InferenceContext& c) {
  for (DataType t : c.attr<std::vector<DataType>>("OUT_TYPE")) {
    if (t != DataType::kFloat && t != DataType::kDouble && t != DataType::kInt32 &&
        t != DataType::kInt64 && t != DataType::kString) {
      return c.invalid(
          "csv: data type {} is not supported (float32, float64, int32, int64 or "
          "string)",
          dtype_name(t));
    }
  }
  if (c.attr<std::string>("field_delim").size() != 1) {
    return c.invalid("field_delim should be only 1 char");
  }
  const auto& select_cols = c.attr<std::vector<int64_t>>("select_cols");
  if (!select_cols.empty() && static_cast<int>(select_cols.size()) != c.num_outputs()) {
    return c.invalid("select_cols should match output size");
  }
  for (size_t i = 0; i < select_cols.size(); ++i) {
    if (select_cols[i] < 0) return c.invalid("select_cols should be non-negative indices");
    if (i > 0 && select_cols[i] <= select_cols[i - 1]) {
      return c.invalid("select_cols should be strictly increasing indices");
    }
  }
  for (int i = 1; i < c.num_inputs(); ++i) {
    const PartialShape& fallback = c.input(i);
    if (!fallback.rank_known()) continue;
    if (fallback.rank() > 1) {
      return c.invalid("Shape must be at most rank 1 but is rank {} (record_defaults[{}])",
                       fallback.rank(), i - 1);
    }
    if (fallback.rank() == 1 && fallback.dim(0) > 1) {
      return c.invalid(
          "Shape of a default must be a length-0 or length-1 vector, or a scalar "
          "(record_defaults[{}] has {} values)",
          i - 1, fallback.dim(0));
    }
  }
  for (int i = 0; i < c.num_outputs(); ++i)
    c.set_output(i, c.input(0));
  return Status::OK();
}

}  // namespace

void register_parsing_ops(OpRegistry& r) {
  must_register(r, OpDefBuilder("StringSplit")
                       .input("input: string")
                       .input("delimiter: string")
                       .output("indices: int64")
                       .output("values: string")
                       .output("shape: int64")
                       .attr("skip_empty: bool = true")
                       .shape_fn([](InferenceContext& c) -> Status {
                         if (c.input(0).rank_known() && c.input(0).rank() != 1) {
                           return c.invalid("Shape must be rank 1 but is rank {} (input)",
                                            c.input(0).rank());
                         }
                         if (c.input(1).rank_known() && c.input(1).rank() != 0) {
                           return c.invalid("Shape must be rank 0 but is rank {} (delimiter)",
                                            c.input(1).rank());
                         }
                         c.set_output(0, PartialShape{-1, 2});
                         c.set_output(1, PartialShape{-1});
                         c.set_output(2, PartialShape{2});
                         return Status::OK();
                       }));
  must_register(r, OpDefBuilder("DecodeCSV")
                       .input("records: string")
                       .input("record_defaults: OUT_TYPE")
                       .output("output: OUT_TYPE")
                       .attr("OUT_TYPE: list(type)")
                       .attr("field_delim: string = \",\"")
                       .attr("use_quote_delim: bool = true")
                       .attr("na_value: string = \"\"")
                       .attr("select_cols: list(int) = []")
                       .shape_fn(decode_csv_shape));
  must_register(r, OpDefBuilder("StringToNumber")
                       .input("string_tensor: string")
                       .output("output: out_type")
                       .attr("out_type: type = float32")
                       .shape_fn(shapes::unchanged));
  must_register(r, OpDefBuilder("SequenceExampleFeatureList")
                       .input("serialized: string")
                       .input("debug_name: string")
                       .output("steps: string")
                       .attr("feature_list_key: string")
                       .attr("required: bool = false")
                       .shape_fn([](InferenceContext& c) -> Status {
                         c.set_output(0, PartialShape({-1}));
                         return Status::OK();
                       }));
  must_register(r, OpDefBuilder("ParseExample")
                       .input("serialized: string")
                       .input("names: string")
                       .input("sparse_keys: Nsparse * string")
                       .input("dense_keys: Ndense * string")
                       .input("dense_defaults: Tdense")
                       .output("sparse_indices: Nsparse * int64")
                       .output("sparse_values: sparse_types")
                       .output("sparse_shapes: Nsparse * int64")
                       .output("dense_values: Tdense")
                       .attr("Nsparse: int >= 0")
                       .attr("Ndense: int >= 0")
                       .attr("sparse_types: list(type) = []")
                       .attr("Tdense: list(type) = []")
                       .attr("dense_shapes: list(shape) = []")
                       .shape_fn(parse_example_shape));
  must_register(r, OpDefBuilder("DecodeRaw")
                       .input("bytes: string")
                       .output("output: out_type")
                       .attr("out_type: type")
                       .attr("little_endian: bool = true")
                       .shape_fn([](InferenceContext& c) -> Status {
                         DataType t = c.attr<DataType>("out_type");
                         if (t == DataType::kString || t == DataType::kBool) {
                           return c.invalid("out_type must be a number type, not {}",
                                            dtype_name(t));
                         }
                         if (!c.input(0).rank_known()) {
                           c.set_output(0, PartialShape::unknown());
                           return Status::OK();
                         }
                         std::vector<int64_t> dims = c.input(0).dims();
                         dims.push_back(-1);
                         c.set_output(0, PartialShape(dims));
                         return Status::OK();
                       }));
}

namespace ops {

ParseExampleResult ParseExample(const Scope& s, Input serialized,
                                const std::vector<std::string>& sparse_keys,
                                const std::vector<DataType>& sparse_types,
                                const std::vector<std::string>& dense_keys,
                                const std::vector<Input>& dense_defaults,
                                const std::vector<PartialShape>& dense_shapes) {
  std::vector<Input> sparse_key_inputs(sparse_keys.begin(), sparse_keys.end());
  std::vector<Input> dense_key_inputs(dense_keys.begin(), dense_keys.end());
  Operation op = NodeBuilder(s, "ParseExample")
                     .input(serialized)
                     .input(Input(Tensor(DataType::kString, TensorShape{0})))
                     .input_list(sparse_key_inputs)
                     .input_list(dense_key_inputs)
                     .input_list(dense_defaults)
                     .attr("sparse_types", sparse_types)
                     .attr("dense_shapes", dense_shapes)
                     .finalize();
  ParseExampleResult result;
  if (!op.valid()) return result;
  int out = 0;
  for (auto* group : {&result.sparse_indices, &result.sparse_values, &result.sparse_shapes})
    for (size_t i = 0; i < sparse_keys.size(); ++i)
      group->emplace_back(op, out++);
  for (size_t i = 0; i < dense_keys.size(); ++i)
    result.dense_values.emplace_back(op, out++);
  return result;
}

std::vector<Output> DecodeCSV(const Scope& s, Input records,
                              const std::vector<Input>& record_defaults,
                              const DecodeCSVAttrs& attrs) {
  Operation op = NodeBuilder(s, "DecodeCSV")
                     .input(records)
                     .input_list(record_defaults)
                     .attr("field_delim", attrs.field_delim)
                     .attr("use_quote_delim", attrs.use_quote_delim)
                     .attr("na_value", attrs.na_value)
                     .attr("select_cols", attrs.select_cols)
                     .finalize();
  std::vector<Output> outputs;
  for (int i = 0; op.valid() && i < op.num_outputs(); ++i)
    outputs.emplace_back(op, i);
  return outputs;
}

StringSplitResult StringSplit(const Scope& s, Input input, Input delimiter, bool skip_empty) {
  Operation op = NodeBuilder(s, "StringSplit")
                     .input(input)
                     .input(delimiter)
                     .attr("skip_empty", skip_empty)
                     .finalize();
  return {Output(op, 0), Output(op, 1), Output(op, 2)};
}

Output DecodeRaw(const Scope& s, Input bytes, DataType out_type, bool little_endian) {
  return NodeBuilder(s, "DecodeRaw")
      .input(bytes)
      .attr("out_type", out_type)
      .attr("little_endian", little_endian)
      .finalize();
}

}  // namespace ops
}  // namespace troupe
