// OpDef: what an operation is — its inputs, outputs, attributes and shape function — and
// OpDefBuilder, which reads TensorFlow-style specs:
//
//   OpDefBuilder("MatMul")
//       .input("a: T").input("b: T").output("product: T")
//       .attr("T: {float32, float64, int32, int64}")
//       .attr("transpose_a: bool = false")
//       .shape_fn(shapes::matmul);
//
// Argument specs: "name: float32" (a fixed type), "name: T" (the type held by attr T),
// "name: N * T" (a list of N tensors of type T), "name: Ts" where Ts is a list(type) attr (a
// list of tensors of those types), "name: Ref(T)" (a reference to a variable or other
// resource).
// Attribute specs: "name: int", "name: int >= 1", "name: {float32, int32}" (a type from a set),
// "name: type", "name: shape", "name: tensor", "name: list(int)", each optionally "= default".
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "troupe/graph/attr_value.hpp"
#include "troupe/graph/core/status.hpp"

namespace troupe {

class InferenceContext;
using ShapeFn = std::function<Status(InferenceContext&)>;

struct ArgDef {
  std::string name;
  DataType fixed_type = DataType::kInvalid;  // set for "name: float32"
  std::string type_attr;                     // set for "name: T"
  std::string number_attr;                   // set for "name: N * T"
  std::string type_list_attr;                // set for "name: Ts", Ts a list(type) attr
  bool is_ref = false;                       // "name: Ref(T)"
};

struct AttrDef {
  std::string name;
  AttrType type = AttrType::kNone;
  std::optional<AttrValue> default_value;
  std::vector<DataType> allowed_types;  // empty: any
  std::optional<int64_t> minimum;       // for "int >= n"
};

struct OpDef {
  std::string name;
  std::vector<ArgDef> inputs;
  std::vector<ArgDef> outputs;
  std::vector<AttrDef> attrs;
  // Stateful ops (variables, assignments, queues) touch state beyond their inputs.
  bool is_stateful = false;
  ShapeFn shape_fn;

  const AttrDef* find_attr(std::string_view attr_name) const;
};

class OpDefBuilder {
 public:
  explicit OpDefBuilder(std::string name);

  // Each spec is parsed at once; the first malformed one (InvalidArgument, naming the op and
  // the spec) is what build() returns.
  OpDefBuilder& input(std::string_view spec);
  OpDefBuilder& output(std::string_view spec);
  OpDefBuilder& attr(std::string_view spec);
  OpDefBuilder& stateful();
  OpDefBuilder& shape_fn(ShapeFn fn);

  // Checks that every type and number attr an argument names is declared (an argument naming a
  // list(type) attr becomes a type-list argument).
  StatusOr<OpDef> build() const;

 private:
  StatusOr<AttrDef> parse_attr(std::string_view spec) const;

  OpDef def_;
  Status status_;
};

}  // namespace troupe
