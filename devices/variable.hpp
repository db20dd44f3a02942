// Variable: a named, typed tensor that lives on a device across steps.
//
// Reads take a snapshot that shares the current buffer (no copy). In-place updates copy on
// write: if any snapshot still holds the buffer, the update goes to a fresh copy, so a value a
// step has read never changes under it. Owned by the device's ResourceManager; used only from
// the device's thread.
#pragma once

#include <string>

#include "troupe/devices/resource.hpp"
#include "troupe/graph/core/partial_shape.hpp"
#include "troupe/graph/core/tensor.hpp"

namespace troupe {

class Variable : public Resource {
 public:
  Variable(std::string name, DataType dtype, PartialShape shape);

  std::string debug_name() const override { return "variable '" + name_ + "'"; }

  const std::string& name() const { return name_; }
  DataType dtype() const { return dtype_; }
  // The shape declared when the variable was created (may be partial).
  const PartialShape& declared_shape() const { return declared_shape_; }

  bool is_initialized() const { return value_.is_initialized(); }
  // The current value. Requires is_initialized().
  const Tensor& value() const { return value_; }
  // Replaces the value, sharing `value`'s buffer.
  void assign(Tensor value) { value_ = std::move(value); }
  // The value, with a buffer no one else holds, ready to be written in place.
  Tensor& mutable_value();

 private:
  std::string name_;
  DataType dtype_;
  PartialShape declared_shape_;
  Tensor value_;
};

}  // namespace troupe
