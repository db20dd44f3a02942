// Output, Operation and Input: the handles the builder API passes around.
//
// An Operation is a node of a Graph; an Output is one of its outputs. An Input is what an op
// builder accepts: an Output, or a value (a Tensor, a number, a string, a nested initializer
// list) that the builder turns into a Const node.
#pragma once

#include <initializer_list>
#include <string>
#include <vector>

#include "troupe/graph/graph.hpp"

namespace troupe {

class Operation {
 public:
  Operation() = default;
  explicit Operation(const Node* node) : node_(node) {}

  bool valid() const { return node_ != nullptr; }
  const Node* node() const { return node_; }
  const std::string& name() const { return node_->name(); }
  int num_outputs() const { return node_->num_outputs(); }

 private:
  const Node* node_ = nullptr;
};

class Output {
 public:
  Output() = default;
  Output(const Node* node, int index) : node_(node), index_(index) {}
  Output(Operation op, int index = 0) : node_(op.node()), index_(index) {}  // NOLINT

  // False when the op that should have made this failed (see Scope::status()).
  bool valid() const { return node_ != nullptr; }
  const Node* node() const { return node_; }
  Operation op() const { return Operation(node_); }
  int index() const { return index_; }
  DataType dtype() const { return node_->output_type(index_); }
  const PartialShape& shape() const { return node_->output_shape(index_); }
  // "node:index", the name Session::run accepts.
  std::string name() const { return node_->name() + ":" + std::to_string(index_); }

  bool operator==(const Output& other) const = default;

 private:
  const Node* node_ = nullptr;
  int index_ = 0;
};

class Input {
 public:
  Input(Output output) : output_(output) {}                   // NOLINT: implicit by design
  Input(Operation op) : output_(op, 0) {}                     // NOLINT
  Input(Tensor value) : value_(std::move(value)) {}           // NOLINT
  Input(const char* value) : value_(Tensor(value)) {}         // NOLINT
  Input(const std::string& value) : value_(Tensor(value)) {}  // NOLINT
  Input(float value) : value_(Tensor(value)) {}               // NOLINT
  Input(double value) : value_(Tensor(value)) {}              // NOLINT
  Input(int32_t value) : value_(Tensor(value)) {}             // NOLINT
  Input(int64_t value) : value_(Tensor(value)) {}             // NOLINT
  Input(bool value) : value_(Tensor(value)) {}                // NOLINT
  template <class T>
  Input(std::initializer_list<T> values)  // NOLINT: {1.f, 2.f} is a vector
      : value_(Tensor::from_vector(std::vector<T>(values))) {}
  // Rows of different lengths make an Input whose status() says so; the op given it fails
  // with that error in its Scope, as any other bad argument does.
  template <class T>
  Input(std::initializer_list<std::initializer_list<T>> rows) {  // NOLINT: {{1, 2}} is a matrix
    std::vector<T> values;
    size_t cols = rows.size() == 0 ? 0 : rows.begin()->size();
    for (const auto& row : rows) {
      if (row.size() != cols) {
        status_ = errors::InvalidArgument("initializer rows have different lengths ({} and {})",
                                          cols, row.size());
        return;
      }
      values.insert(values.end(), row.begin(), row.end());
    }
    auto matrix = Tensor::from_vector(
        values, TensorShape{static_cast<int64_t>(rows.size()), static_cast<int64_t>(cols)});
    if (matrix.ok()) {
      value_ = std::move(matrix).value();
    } else {
      status_ = matrix.status();
    }
  }

  bool is_value() const { return !output_.valid(); }
  const Output& output() const { return output_; }
  const Tensor& value() const { return value_; }
  // Not OK when a literal could not be made into a value.
  const Status& status() const { return status_; }

 private:
  Output output_;
  Tensor value_;
  Status status_;
};

}  // namespace troupe
