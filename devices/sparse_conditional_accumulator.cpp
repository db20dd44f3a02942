// SparseConditionalAccumulator: rows summed by index, averaged by how many gradients had them.
#include "troupe/devices/sparse_conditional_accumulator.hpp"

namespace troupe {

SparseConditionalAccumulator::SparseConditionalAccumulator(std::string name, DataType dtype,
                                                           PartialShape shape,
                                                           AccumulatorReduction reduction)
    : GradientAccumulator("sparse accumulator", std::move(name), dtype, std::move(shape),
                          reduction) {}

Status SparseConditionalAccumulator::check(const Tensor& indices, const Tensor& values,
                                           const Tensor* dense_shape) const {
  const std::string name = debug_name();
  if (values.dtype() != dtype()) {
    return errors::InvalidArgument("{} takes {} gradients, got {}", name, dtype_name(dtype()),
                                   dtype_name(values.dtype()));
  }
  if (indices.dtype() != DataType::kInt64 || indices.rank() != 1) {
    return errors::InvalidArgument("{}: Input indices should be vector but received shape: {}",
                                   name, indices.shape().to_string());
  }
  if (values.rank() == 0) {
    return errors::InvalidArgument("{}: Values cannot be 0-dimensional.", name);
  }
  if (values.dim(0) != indices.dim(0)) {
    return errors::InvalidArgument("{}: Expected {} non-empty input values, got {}", name,
                                   indices.dim(0), values.dim(0));
  }
  const PartialShape& expected = shape();
  const int rank = expected.rank_known() ? expected.rank() : 0;
  if (dense_shape != nullptr) {
    if (dense_shape->dtype() != DataType::kInt64 || dense_shape->rank() != 1) {
      return errors::InvalidArgument("{}: the gradient's shape must be an int64 vector, got {}",
                                     name, dense_shape->shape().to_string());
    }
    if (rank > dense_shape->num_elements()) {
      return errors::InvalidArgument("{}: Shape mismatch: expected shape rank at least {}, got {}",
                                     name, rank, dense_shape->num_elements());
    }
    for (int d = 0; d < rank; ++d) {
      const int64_t given = dense_shape->data<int64_t>()[d];
      if (expected.dim(d) != -1 && expected.dim(d) != given) {
        return errors::InvalidArgument("{}: Shape mismatch: expected shape dim {} to be {}, got {}",
                                       name, d, expected.dim(d), given);
      }
    }
  }
  const int64_t* at = indices.data<int64_t>();
  for (int64_t i = 0; i < indices.num_elements(); ++i) {
    if (at[i] < 0 || (rank > 0 && expected.dim(0) != -1 && at[i] >= expected.dim(0))) {
      return errors::InvalidArgument(
          "{}: Shape mismatch: index of slice {} exceeded limits of shape; index is {} exceeded "
          "{}",
          name, i, at[i], rank > 0 ? expected.dim(0) : -1);
    }
  }
  if (num_accumulated() > 0) {
    if (static_cast<size_t>(values.rank() - 1) != row_dims_.size()) {
      return errors::InvalidArgument("{}: Shape mismatch: expected values rank {}, got {}", name,
                                     row_dims_.size() + 1, values.rank());
    }
    for (int d = 1; d < values.rank(); ++d) {
      if (values.dim(d) != row_dims_[d - 1]) {
        return errors::InvalidArgument(
            "{}: Shape mismatch: expected values dim {} to be {}, got {}", name, d,
            row_dims_[d - 1], values.dim(d));
      }
    }
  } else {
    if (rank > values.rank()) {
      return errors::InvalidArgument("{}: Shape mismatch: expected values rank at least {}, got {}",
                                     name, rank, values.rank());
    }
    for (int d = 1; d < rank; ++d) {
      if (expected.dim(d) != -1 && expected.dim(d) != values.dim(d)) {
        return errors::InvalidArgument(
            "{}: Shape mismatch: expected values dim {} to be {}, got {}", name, d, expected.dim(d),
            values.dim(d));
      }
    }
  }
  return Status::OK();
}

StatusOr<bool> SparseConditionalAccumulator::apply(int64_t local_step, const Tensor& indices,
                                                   const Tensor& values,
                                                   const Tensor* dense_shape) {
  // As TensorFlow's, a stale gradient is dropped before it is checked.
  if (is_stale(local_step)) return false;
  TROUPE_RETURN_IF_ERROR(check(indices, values, dense_shape));
  if (num_accumulated() == 0) {
    row_dims_.assign(values.shape().dims().begin() + 1, values.shape().dims().end());
    rows_.clear();
  }
  const int64_t n = indices.num_elements();
  const int64_t width = n == 0 ? 0 : values.num_elements() / n;
  const int64_t* at = indices.data<int64_t>();
  std::map<int64_t, bool> seen;  // rows this gradient touched (a duplicate counts once)
  TROUPE_SWITCH_FLOATING(dtype(), T, {
    const T* v = values.data<T>();
    for (int64_t i = 0; i < n; ++i) {
      Row& row = rows_[at[i]];
      if (row.sum.empty()) row.sum.assign(static_cast<size_t>(width), 0.0);
      for (int64_t k = 0; k < width; ++k)
        row.sum[k] += static_cast<double>(v[i * width + k]);
      if (!seen[at[i]]) {
        seen[at[i]] = true;
        ++row.count;
      }
    }
  });
  count_gradient();
  return true;
}

std::vector<Tensor> SparseConditionalAccumulator::take_result(int64_t) {
  const int64_t n = static_cast<int64_t>(rows_.size());
  std::vector<int64_t> value_dims = {n};
  value_dims.insert(value_dims.end(), row_dims_.begin(), row_dims_.end());
  Tensor indices(DataType::kInt64, TensorShape{n});
  Tensor values(dtype(), TensorShape(value_dims));
  int64_t i = 0;
  TROUPE_SWITCH_FLOATING(dtype(), T, {
    T* out = values.data<T>();
    const int64_t width = TensorShape(row_dims_).num_elements();
    for (const auto& [index, row] : rows_) {
      indices.data<int64_t>()[i] = index;
      const double divisor =
          reduction() == AccumulatorReduction::kMean ? static_cast<double>(row.count) : 1.0;
      for (int64_t k = 0; k < width; ++k)
        out[i * width + k] = static_cast<T>(row.sum[k] / divisor);
      ++i;
    }
  });
  // The dense shape: the accumulator's first dimension (-1 when unknown), the rows' after it.
  std::vector<int64_t> dense = {shape().rank_known() && shape().rank() > 0 ? shape().dim(0) : -1};
  dense.insert(dense.end(), row_dims_.begin(), row_dims_.end());
  rows_.clear();
  std::vector<Tensor> result;
  result.push_back(std::move(indices));
  result.push_back(std::move(values));
  result.push_back(Tensor::from_vector(dense));
  return result;
}

}  // namespace troupe
