// CPU kernels for GatherNd, ScatterNd, ScatterNdUpdate/Add/Sub (a variable updated in place)
// and TensorScatterUpdate/Add/Sub (a copy updated). Every index is checked before anything is
// written; updates are applied in the order of the indices (ScatterNd and the Add forms sum
// duplicates, the Update forms keep the last).
#include <string>

#include "troupe/devices/cpu/array_layout.hpp"
#include "troupe/devices/cpu/cpu_kernels.hpp"
#include "troupe/devices/cpu/variable_inputs.hpp"

namespace troupe {
namespace {

// Where the slices named by `indices` ([..., K]) lie in a tensor of `shape`.
struct SliceOffsets {
  std::vector<int64_t> offsets;  // the flat offset of each slice, one per index
  int64_t slice_size = 0;        // elements per slice: prod(shape[K:])
  std::vector<int64_t> outer;    // indices.shape[:-1]
  int k = 0;                     // indices.shape[-1]: the dimensions an index names
};

// "indices[1,0]": the position of index `row` among `outer`.
std::string position_of(int64_t row, const std::vector<int64_t>& outer) {
  std::vector<int64_t> at(outer.size());
  for (size_t d = outer.size(); d-- > 0;) {
    at[d] = outer[d] == 0 ? 0 : row % outer[d];
    row = outer[d] == 0 ? 0 : row / outer[d];
  }
  return fmt::format("indices[{}]", fmt::join(at, ","));
}

// The slices of `shape` that `indices` names, or nullopt after recording InvalidArgument
// (indices a scalar, K > rank, or an index outside `shape`, named with its position).
std::optional<SliceOffsets> slice_offsets(OpKernelContext& ctx, const Tensor& indices,
                                          const TensorShape& shape, std::string_view what) {
  if (indices.rank() < 1) {
    ctx.fail_invalid("indices must be at least a vector, got a scalar");
    return std::nullopt;
  }
  const int64_t k = indices.dim(indices.rank() - 1);
  if (k > shape.rank()) {
    ctx.fail_invalid("indices.shape[-1] must be <= the rank of {}: saw {} vs. {} (shape {})", what,
                     k, shape.rank(), shape.to_string());
    return std::nullopt;
  }
  SliceOffsets result;
  result.k = static_cast<int>(k);
  result.outer.assign(indices.shape().dims().begin(), indices.shape().dims().end() - 1);
  result.slice_size = 1;
  for (int d = static_cast<int>(k); d < shape.rank(); ++d)
    result.slice_size *= shape.dim(d);
  const int64_t n = TensorShape(result.outer).num_elements();
  const std::vector<int64_t> flat = int_values(indices);
  result.offsets.resize(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    int64_t offset = 0;
    for (int64_t d = 0; d < k; ++d) {
      const int64_t index = flat[i * k + d];
      if (index < 0 || index >= shape.dim(static_cast<int>(d))) {
        ctx.fail_invalid("{} = [{}] does not index into {} shape {}", position_of(i, result.outer),
                         fmt::join(flat.begin() + i * k, flat.begin() + (i + 1) * k, ", "), what,
                         shape.to_string());
        return std::nullopt;
      }
      offset = offset * shape.dim(static_cast<int>(d)) + index;
    }
    result.offsets[i] = offset * result.slice_size;
  }
  return result;
}

// updates must have the shape indices.shape[:-1] + shape[K:]; records InvalidArgument if not.
bool check_updates(OpKernelContext& ctx, const Tensor& updates, const SliceOffsets& slices,
                   const TensorShape& shape) {
  std::vector<int64_t> expected = slices.outer;
  expected.insert(expected.end(), shape.dims().begin() + slices.k, shape.dims().end());
  if (updates.shape() != TensorShape(expected)) {
    ctx.fail_invalid("updates has shape {}, expected indices.shape[:-1] + shape[K:] = {}",
                     updates.shape().to_string(), TensorShape(expected).to_string());
    return false;
  }
  return true;
}

enum class Update { kAssign, kAdd, kSub };

template <Update kUpdate, class T>
void apply_slices(const SliceOffsets& slices, const T* updates, T* out) {
  for (size_t i = 0; i < slices.offsets.size(); ++i) {
    T* to = out + slices.offsets[i];
    const T* from = updates + static_cast<int64_t>(i) * slices.slice_size;
    for (int64_t j = 0; j < slices.slice_size; ++j) {
      if constexpr (kUpdate == Update::kAssign) {
        to[j] = from[j];
      } else if constexpr (kUpdate == Update::kAdd) {
        to[j] += from[j];
      } else {
        to[j] -= from[j];
      }
    }
  }
}

template <class T>
class GatherNdKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void compute(OpKernelContext& ctx) override {
    const Tensor& params = ctx.input(0);
    auto slices = slice_offsets(ctx, ctx.input(1), params.shape(), "param");
    if (!slices) return;
    std::vector<int64_t> dims = slices->outer;
    dims.insert(dims.end(), params.shape().dims().begin() + slices->k, params.shape().dims().end());
    Tensor& out = ctx.allocate_output(0, TensorShape(dims));
    const T* from = params.data<T>();
    T* to = out.data<T>();
    for (size_t i = 0; i < slices->offsets.size(); ++i) {
      std::copy_n(from + slices->offsets[i], slices->slice_size,
                  to + static_cast<int64_t>(i) * slices->slice_size);
    }
  }
};

// A zero tensor of `shape` with the updates added at their indices.
template <class T>
class ScatterNdKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void compute(OpKernelContext& ctx) override {
    const Tensor& indices = ctx.input(0);
    const Tensor& updates = ctx.input(1);
    const Tensor& shape_tensor = ctx.input(2);
    if (shape_tensor.rank() != 1) {
      return ctx.fail_invalid("shape must be a vector, got shape {}",
                              shape_tensor.shape().to_string());
    }
    const std::vector<int64_t> dims = int_values(shape_tensor);
    auto shape = TensorShape::from_dims(dims);  // negative or overflowing sizes refused
    if (!shape.ok()) return ctx.fail_invalid("shape: {}", shape.status().message());
    if (shape->num_elements() == 0 && (indices.num_elements() > 0 || updates.num_elements() > 0)) {
      return ctx.fail_invalid("Indices and updates specified for empty output shape {}",
                              shape->to_string());
    }
    auto slices = slice_offsets(ctx, indices, *shape, "output");
    if (!slices || !check_updates(ctx, updates, *slices, *shape)) return;
    Tensor& out = ctx.allocate_output(0, *shape);
    std::fill_n(out.data<T>(), out.num_elements(), T(0));
    apply_slices<Update::kAdd>(*slices, updates.data<T>(), out.data<T>());
  }
};

// ScatterNdUpdate/Add/Sub: the variable's slices updated in place.
template <Update kUpdate, class T>
class ScatterNdRefKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void compute(OpKernelContext& ctx) override {
    Variable* var = initialized_variable_input(ctx, 0);
    if (var == nullptr) return;
    const TensorShape shape = var->value().shape();
    auto slices = slice_offsets(ctx, ctx.input(1), shape, "variable '" + var->name() + "'");
    if (!slices || !check_updates(ctx, ctx.input(2), *slices, shape)) return;
    apply_slices<kUpdate>(*slices, ctx.input(2).data<T>(), var->mutable_value().template data<T>());
    ctx.set_output_ref(0, ctx.input_ref_ptr(0));
  }
};

// TensorScatterUpdate/Add/Sub: a copy of the tensor, updated.
template <Update kUpdate, class T>
class TensorScatterKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void compute(OpKernelContext& ctx) override {
    const Tensor& tensor = ctx.input(0);
    auto slices = slice_offsets(ctx, ctx.input(1), tensor.shape(), "tensor");
    if (!slices || !check_updates(ctx, ctx.input(2), *slices, tensor.shape())) return;
    Tensor& out = ctx.allocate_output(0, tensor.shape());
    std::copy_n(tensor.data<T>(), tensor.num_elements(), out.data<T>());
    apply_slices<kUpdate>(*slices, ctx.input(2).data<T>(), out.data<T>());
  }
};

template <class T>
using ScatterNdUpdateKernel = ScatterNdRefKernel<Update::kAssign, T>;
template <class T>
using ScatterNdAddKernel = ScatterNdRefKernel<Update::kAdd, T>;
template <class T>
using ScatterNdSubKernel = ScatterNdRefKernel<Update::kSub, T>;
template <class T>
using TensorScatterUpdateKernel = TensorScatterKernel<Update::kAssign, T>;
template <class T>
using TensorScatterAddKernel = TensorScatterKernel<Update::kAdd, T>;
template <class T>
using TensorScatterSubKernel = TensorScatterKernel<Update::kSub, T>;

}  // namespace

void register_scatter_nd_kernels(KernelRegistry& r) {
  must_add_kernel(r, "GatherNd", kCpu, any_type_kernel<GatherNdKernel>("Tparams"));
  must_add_kernel(r, "ScatterNd", kCpu, numeric_kernel<ScatterNdKernel>());
  must_add_kernel(r, "ScatterNdUpdate", kCpu, any_type_kernel<ScatterNdUpdateKernel>());
  must_add_kernel(r, "ScatterNdAdd", kCpu, numeric_kernel<ScatterNdAddKernel>());
  must_add_kernel(r, "ScatterNdSub", kCpu, numeric_kernel<ScatterNdSubKernel>());
  must_add_kernel(r, "TensorScatterUpdate", kCpu, any_type_kernel<TensorScatterUpdateKernel>());
  must_add_kernel(r, "TensorScatterAdd", kCpu, numeric_kernel<TensorScatterAddKernel>());
  must_add_kernel(r, "TensorScatterSub", kCpu, numeric_kernel<TensorScatterSubKernel>());
}

}  // namespace troupe
