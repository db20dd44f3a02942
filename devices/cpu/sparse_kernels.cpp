// CPU kernels for Unique, DynamicPartition, DynamicStitch and the Scatter updates (ScatterUpdate,
// ScatterAdd, ScatterSub, ScatterMul, ScatterDiv, ScatterMin, ScatterMax): a variable's rows
// updated in place (copy on write, as every update), indices checked before anything is written.
#include <algorithm>
#include <limits>
#include <unordered_map>

#include "troupe/devices/cpu/array_layout.hpp"
#include "troupe/devices/cpu/cpu_kernels.hpp"
#include "troupe/devices/cpu/variable_inputs.hpp"

namespace troupe {
namespace {

template <class T>
class UniqueKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void compute(OpKernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    if (x.shape().rank() != 1) {
      ctx.fail_invalid("x must be a vector, got shape {}", x.shape().to_string());
      return;
    }
    const int64_t n = x.num_elements();
    const T* in = x.data<T>();
    std::unordered_map<T, int64_t> position;
    position.reserve(static_cast<size_t>(n));
    std::vector<int64_t> idx(static_cast<size_t>(n));
    std::vector<int64_t> first;  // the element where each distinct value first occurs
    for (int64_t i = 0; i < n; ++i) {
      auto [it, inserted] = position.emplace(in[i], static_cast<int64_t>(first.size()));
      if (inserted) first.push_back(i);
      idx[i] = it->second;
    }
    Tensor& y = ctx.allocate_output(0, TensorShape({static_cast<int64_t>(first.size())}));
    T* out = y.data<T>();
    for (size_t k = 0; k < first.size(); ++k)
      out[k] = in[first[k]];
    if (node().output_type(1) == DataType::kInt32 &&
        n > static_cast<int64_t>(std::numeric_limits<int32_t>::max())) {
      ctx.fail_invalid("x has {} elements, more than out_idx int32 can index; use int64", n);
      return;
    }
    Tensor& positions = ctx.allocate_output(1, x.shape());
    if (positions.dtype() == DataType::kInt32) {
      std::copy(idx.begin(), idx.end(), positions.data<int32_t>());
    } else {
      std::copy(idx.begin(), idx.end(), positions.data<int64_t>());
    }
  }
};

// Whether `prefix` is a prefix of `shape`.
bool is_prefix(const TensorShape& prefix, const TensorShape& shape) {
  if (prefix.rank() > shape.rank()) return false;
  for (int d = 0; d < prefix.rank(); ++d) {
    if (prefix.dim(d) != shape.dim(d)) return false;
  }
  return true;
}

// The dimensions of one slice of `shape` below its first `rank` dimensions.
std::vector<int64_t> slice_dims(const TensorShape& shape, int rank) {
  return {shape.dims().begin() + rank, shape.dims().end()};
}

template <class T>
class DynamicPartitionKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void compute(OpKernelContext& ctx) override {
    const Tensor& data = ctx.input(0);
    const Tensor& partitions = ctx.input(1);
    const int64_t num = ctx.num_outputs();
    if (!is_prefix(partitions.shape(), data.shape())) {
      ctx.fail_invalid("partitions (shape {}) must be a prefix of data's shape {}",
                       partitions.shape().to_string(), data.shape().to_string());
      return;
    }
    const std::vector<int64_t> inner_dims = slice_dims(data.shape(), partitions.shape().rank());
    const int64_t inner = TensorShape(inner_dims).num_elements();
    const int64_t n = partitions.num_elements();
    const int32_t* p = partitions.data<int32_t>();
    std::vector<int64_t> counts(static_cast<size_t>(num), 0);
    for (int64_t i = 0; i < n; ++i) {
      if (p[i] < 0 || p[i] >= num) {
        ctx.fail_invalid("partitions[{}] = {} is not in [0, {})", i, p[i], num);
        return;
      }
      ++counts[p[i]];
    }
    std::vector<T*> out(static_cast<size_t>(num));
    for (int64_t k = 0; k < num; ++k) {
      std::vector<int64_t> dims = {counts[k]};
      dims.insert(dims.end(), inner_dims.begin(), inner_dims.end());
      out[k] = ctx.allocate_output(static_cast<int>(k), TensorShape(dims)).template data<T>();
    }
    const T* in = data.data<T>();
    for (int64_t i = 0; i < n; ++i) {
      T*& to = out[p[i]];
      std::copy(in + i * inner, in + (i + 1) * inner, to);
      to += inner;
    }
  }
};

template <class T>
class DynamicStitchKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void compute(OpKernelContext& ctx) override {
    const int n = ctx.num_inputs() / 2;
    if (!is_prefix(ctx.input(0).shape(), ctx.input(n).shape())) {
      ctx.fail_invalid("indices[0] (shape {}) must be a prefix of data[0]'s shape {}",
                       ctx.input(0).shape().to_string(), ctx.input(n).shape().to_string());
      return;
    }
    const std::vector<int64_t> inner_dims =
        slice_dims(ctx.input(n).shape(), ctx.input(0).shape().rank());
    const int64_t inner = TensorShape(inner_dims).num_elements();
    int64_t rows = 0;
    for (int m = 0; m < n; ++m) {
      const Tensor& indices = ctx.input(m);
      const Tensor& data = ctx.input(n + m);
      std::vector<int64_t> expected = indices.shape().dims();
      expected.insert(expected.end(), inner_dims.begin(), inner_dims.end());
      if (data.shape() != TensorShape(expected)) {
        ctx.fail_invalid("data[{}] has shape {}, expected indices[{}].shape + {} = {}", m,
                         data.shape().to_string(), m, TensorShape(inner_dims).to_string(),
                         TensorShape(expected).to_string());
        return;
      }
      const int32_t* at = indices.data<int32_t>();
      for (int64_t i = 0; i < indices.num_elements(); ++i) {
        if (at[i] < 0) {
          ctx.fail_invalid("indices[{}][{}] = {} is negative", m, i, at[i]);
          return;
        }
        rows = std::max(rows, int64_t{at[i]} + 1);
      }
    }
    std::vector<int64_t> dims = {rows};
    dims.insert(dims.end(), inner_dims.begin(), inner_dims.end());
    Tensor& merged = ctx.allocate_output(0, TensorShape(dims));
    T* out = merged.data<T>();
    std::fill_n(out, merged.num_elements(), T{});
    for (int m = 0; m < n; ++m) {
      const int32_t* at = ctx.input(m).data<int32_t>();
      const T* in = ctx.input(n + m).data<T>();
      for (int64_t i = 0; i < ctx.input(m).num_elements(); ++i)
        std::copy(in + i * inner, in + (i + 1) * inner, out + at[i] * inner);
    }
  }
};

enum class ScatterOp { kUpdate, kAdd, kSub, kMul, kDiv, kMin, kMax };

template <ScatterOp kOp, class T>
class ScatterKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void compute(OpKernelContext& ctx) override {
    Variable* var = initialized_variable_input(ctx, 0);
    if (var == nullptr) return;
    const TensorShape& shape = var->value().shape();
    const Tensor& indices = ctx.input(1);
    const Tensor& updates = ctx.input(2);
    if (shape.rank() < 1) {
      ctx.fail_invalid("variable '{}' is a scalar; scatter needs rank >= 1", var->name());
      return;
    }
    std::vector<int64_t> expected = indices.shape().dims();
    expected.insert(expected.end(), shape.dims().begin() + 1, shape.dims().end());
    const bool scalar = updates.shape().rank() == 0;  // one value for every element, as TF's
    if (!scalar && updates.shape() != TensorShape(expected)) {
      ctx.fail_invalid("updates has shape {}, expected indices.shape + ref.shape[1:] = {}",
                       updates.shape().to_string(), TensorShape(expected).to_string());
      return;
    }
    const int64_t rows = shape.dim(0);
    const int64_t n = indices.num_elements();
    const std::vector<int64_t> at = int_values(indices);
    for (int64_t k = 0; k < n; ++k) {
      const int64_t row = at[k];
      if (row < 0 || row >= rows) {
        ctx.fail_invalid("indices[{}] = {} is not in [0, {}), the rows of variable '{}'", k, row,
                         rows, var->name());
        return;
      }
    }
    const int64_t inner = rows == 0 ? 0 : shape.num_elements() / rows;
    const T* u = updates.data<T>();
    if constexpr (kOp == ScatterOp::kDiv && std::is_integral_v<T>) {
      for (int64_t i = 0; i < updates.num_elements(); ++i) {
        if (u[i] == T(0)) {
          ctx.fail_invalid("updates[{}] is 0: integer division by zero", i);
          return;
        }
      }
    }
    T* out = var->mutable_value().template data<T>();
    for (int64_t k = 0; k < n; ++k) {
      T* row = out + at[k] * inner;
      const T* from = u + (scalar ? 0 : k * inner);
      for (int64_t j = 0; j < inner; ++j)
        apply(row[j], from[scalar ? 0 : j]);
    }
    ctx.set_output_ref(0, ctx.input_ref_ptr(0));
  }

 private:
  static void apply(T& to, const T& value) {
    if constexpr (kOp == ScatterOp::kUpdate) {
      to = value;
    } else if constexpr (kOp == ScatterOp::kAdd) {
      to += value;
    } else if constexpr (kOp == ScatterOp::kSub) {
      to -= value;
    } else if constexpr (kOp == ScatterOp::kMul) {
      to *= value;
    } else if constexpr (kOp == ScatterOp::kDiv) {
      if constexpr (std::is_integral_v<T>) {
        if (value == T(-1)) {  // negate with wrap-around: the lowest value / -1 must not trap
          to =
              static_cast<T>(std::make_unsigned_t<T>(0) - static_cast<std::make_unsigned_t<T>>(to));
          return;
        }
      }
      to /= value;
    } else if constexpr (kOp == ScatterOp::kMin) {
      to = std::min(to, value);
    } else {
      to = std::max(to, value);
    }
  }
};

template <class T>
using ScatterUpdateKernel = ScatterKernel<ScatterOp::kUpdate, T>;
template <class T>
using ScatterAddKernel = ScatterKernel<ScatterOp::kAdd, T>;
template <class T>
using ScatterSubKernel = ScatterKernel<ScatterOp::kSub, T>;
template <class T>
using ScatterMulKernel = ScatterKernel<ScatterOp::kMul, T>;
template <class T>
using ScatterDivKernel = ScatterKernel<ScatterOp::kDiv, T>;
template <class T>
using ScatterMinKernel = ScatterKernel<ScatterOp::kMin, T>;
template <class T>
using ScatterMaxKernel = ScatterKernel<ScatterOp::kMax, T>;

// SparseToDense: the default everywhere, then each value at its index (TensorFlow's checks and
// messages when validate_indices is set).
template <class T>
class SparseToDenseKernel : public OpKernel {
 public:
  explicit SparseToDenseKernel(const OpKernelConstruction& c)
      : OpKernel(c), validate_(c.attr<bool>("validate_indices")) {}

  void compute(OpKernelContext& ctx) override {
    const Tensor& indices = ctx.input(0);
    const Tensor& shape_tensor = ctx.input(1);
    const Tensor& values = ctx.input(2);
    const Tensor& fill = ctx.input(3);
    if (indices.rank() > 2) {
      return ctx.fail_invalid("sparse_indices should be a scalar, vector, or matrix, got shape {}",
                              indices.shape().to_string());
    }
    if (shape_tensor.rank() > 1) {
      return ctx.fail_invalid("output_shape should be a scalar or vector, got shape {}",
                              shape_tensor.shape().to_string());
    }
    if (fill.rank() != 0) {
      return ctx.fail_invalid("default_value should be a scalar, got shape {}",
                              fill.shape().to_string());
    }
    const std::vector<int64_t> dims = int_values(shape_tensor);
    const int64_t count = indices.rank() > 0 ? indices.dim(0) : 1;
    const int64_t rank = indices.rank() > 1 ? indices.dim(1) : 1;
    if (rank != static_cast<int64_t>(dims.size())) {
      return ctx.fail_invalid("sparse_indices has {} columns but output_shape has {} entries", rank,
                              dims.size());
    }
    if (!(values.rank() == 0 || (values.rank() == 1 && values.dim(0) == count))) {
      return ctx.fail_invalid("sparse_values has incorrect shape {}, should be [] or [{}]",
                              values.shape().to_string(), count);
    }
    auto shape = TensorShape::from_dims(dims);  // negative or overflowing sizes refused
    if (!shape.ok()) return ctx.fail_invalid("output_shape: {}", shape.status().message());
    Tensor& dense = ctx.allocate_output(0, *shape);
    T* out = dense.data<T>();
    std::fill_n(out, dense.num_elements(), fill.scalar<T>());
    const std::vector<int64_t> flat = int_values(indices);
    std::vector<int64_t> previous;
    for (int64_t i = 0; i < count; ++i) {
      std::vector<int64_t> index(flat.begin() + i * rank, flat.begin() + (i + 1) * rank);
      int64_t at = 0;
      for (int64_t d = 0; d < rank; ++d) {
        if (index[d] < 0 || index[d] >= dims[d]) {
          return ctx.fail_invalid("indices[{}] = [{}] is out of bounds: need 0 <= index < [{}]", i,
                                  fmt::join(index, ","), fmt::join(dims, ","));
        }
        at = at * dims[d] + index[d];
      }
      if (validate_ && i > 0) {
        if (index == previous) {
          return ctx.fail_invalid("indices[{}] = [{}] is repeated", i, fmt::join(index, ","));
        }
        if (index < previous) {
          return ctx.fail_invalid("indices[{}] = [{}] is out of order", i, fmt::join(index, ","));
        }
      }
      out[at] = values.rank() == 0 ? values.scalar<T>() : values.data<T>()[i];
      previous = std::move(index);
    }
  }

 private:
  bool validate_;
};

}  // namespace

void register_sparse_kernels(KernelRegistry& r) {
  must_add_kernel(r, "SparseToDense", kCpu, any_type_kernel<SparseToDenseKernel>());
  must_add_kernel(r, "Unique", kCpu, any_type_kernel<UniqueKernel>());
  must_add_kernel(r, "DynamicPartition", kCpu, any_type_kernel<DynamicPartitionKernel>());
  must_add_kernel(r, "DynamicStitch", kCpu, any_type_kernel<DynamicStitchKernel>());
  must_add_kernel(r, "ScatterUpdate", kCpu, any_type_kernel<ScatterUpdateKernel>());
  must_add_kernel(r, "ScatterAdd", kCpu, numeric_kernel<ScatterAddKernel>());
  must_add_kernel(r, "ScatterSub", kCpu, numeric_kernel<ScatterSubKernel>());
  must_add_kernel(r, "ScatterMul", kCpu, numeric_kernel<ScatterMulKernel>());
  must_add_kernel(r, "ScatterDiv", kCpu, numeric_kernel<ScatterDivKernel>());
  must_add_kernel(r, "ScatterMin", kCpu, numeric_kernel<ScatterMinKernel>());
  must_add_kernel(r, "ScatterMax", kCpu, numeric_kernel<ScatterMaxKernel>());
}

}  // namespace troupe
