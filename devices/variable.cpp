// Variable: copy-on-write updates.
#include "troupe/devices/variable.hpp"

namespace troupe {

Variable::Variable(std::string name, DataType dtype, PartialShape shape)
    : name_(std::move(name)), dtype_(dtype), declared_shape_(std::move(shape)) {}

Tensor& Variable::mutable_value() {
  if (value_.buffer() != nullptr && value_.buffer().use_count() > 1) value_ = value_.deep_copy();
  return value_;
}

}  // namespace troupe
