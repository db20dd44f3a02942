// Hyperparameter (hyperparameter.hpp): numbers become constants, tensors are checked and cast.
#include "troupe/graph/hyperparameter.hpp"

#include "troupe/graph/ops/ops.hpp"

namespace troupe {

Output Hyperparameter::as_scalar(const Scope& scope, DataType dtype,
                                 const std::string& what) const {
  if (!tensor_) {
    Tensor t = dtype == DataType::kDouble ? Tensor(value_) : Tensor(static_cast<float>(value_));
    return ops::Const(scope, t);
  }
  const Output& t = *tensor_;
  if (!t.valid()) {
    scope.update_status(errors::InvalidArgument("{} is not a valid tensor", what));
    return Output();
  }
  if (!dtype_is_floating(t.dtype()) && t.dtype() != DataType::kInt32 &&
      t.dtype() != DataType::kInt64) {
    scope.update_status(errors::InvalidArgument("{} must be a number, but the tensor '{}' is {}",
                                                what, t.name(), dtype_name(t.dtype())));
    return Output();
  }
  if (t.shape().rank_known() && t.shape().rank() != 0) {
    scope.update_status(
        errors::InvalidArgument("{} must be a scalar, but the tensor '{}' has shape {}", what,
                                t.name(), t.shape().to_string()));
    return Output();
  }
  return t.dtype() == dtype ? t : ops::Cast(scope, t, dtype);
}

}  // namespace troupe
