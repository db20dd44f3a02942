// CPU kernels that make tensors from a few numbers (graph/ops/array_manipulation_ops.hpp):
// Range (start, start + delta, ... up to limit) and OneHot (on_value where an index points,
// off_value elsewhere).
#include <cmath>

#include "troupe/devices/cpu/array_layout.hpp"
#include "troupe/devices/cpu/cpu_kernels.hpp"

namespace troupe {
namespace {

template <class T>
class RangeKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void compute(OpKernelContext& ctx) override {
    for (int i = 0; i < 3; ++i) {
      if (ctx.input(i).rank() != 0) {
        ctx.fail_invalid("{} must be a scalar, got shape {}",
                         i == 0 ? "start" : (i == 1 ? "limit" : "delta"),
                         ctx.input(i).shape().to_string());
        return;
      }
    }
    const T start = ctx.input(0).scalar<T>();
    const T limit = ctx.input(1).scalar<T>();
    const T delta = ctx.input(2).scalar<T>();
    if (delta == 0) {
      ctx.fail_invalid("requires delta != 0: {}", delta);
      return;
    }
    if ((delta > 0 && start > limit) || (delta < 0 && start < limit)) {
      ctx.fail_invalid(
          "requires start <= limit when delta > 0, or start >= limit when delta < "
          "0: {}/{}",
          start, limit);
      return;
    }
    int64_t size = 0;
    if constexpr (std::is_integral_v<T>) {
      const int64_t span = static_cast<int64_t>(limit) - static_cast<int64_t>(start);
      const int64_t step = static_cast<int64_t>(delta);
      size = (std::abs(span) + std::abs(step) - 1) / std::abs(step);
    } else {
      size = static_cast<int64_t>(std::ceil(std::abs((limit - start) / delta)));
    }
    Tensor& out = ctx.allocate_output(0, TensorShape{size});
    T* data = out.data<T>();
    for (int64_t i = 0; i < size; ++i)
      data[i] = static_cast<T>(start + static_cast<T>(i) * delta);
  }
};

class OneHotKernel : public OpKernel {
 public:
  explicit OneHotKernel(const OpKernelConstruction& c)
      : OpKernel(c), axis_(c.attr<int64_t>("axis")) {}

  void compute(OpKernelContext& ctx) override {
    const Tensor& indices = ctx.input(0);
    const Tensor& depth_tensor = ctx.input(1);
    const Tensor& on = ctx.input(2);
    const Tensor& off = ctx.input(3);
    if (depth_tensor.rank() != 0 || on.rank() != 0 || off.rank() != 0) {
      ctx.fail_invalid("depth, on_value and off_value must be scalars, got shapes {}, {} and {}",
                       depth_tensor.shape().to_string(), on.shape().to_string(),
                       off.shape().to_string());
      return;
    }
    const int64_t depth = depth_tensor.scalar<int32_t>();
    if (depth < 0) {
      ctx.fail_invalid("depth must be non-negative, got {}", depth);
      return;
    }
    const int64_t rank = indices.rank();
    const int64_t axis = axis_ == -1 ? rank : axis_;
    if (axis < 0 || axis > rank) {
      ctx.fail_invalid("axis {} is out of range for indices of rank {}", axis_, rank);
      return;
    }
    std::vector<int64_t> dims = indices.shape().dims();
    dims.insert(dims.begin() + axis, depth);
    Tensor& out = ctx.allocate_output(0, TensorShape(dims));
    fill_with(out, &off);
    // indices are [outer..., inner...] around the new axis: element (o, i) of the indices sets
    // output (o, index, i). An index outside [0, depth) sets nothing, as TensorFlow's.
    int64_t inner = 1;
    for (int64_t d = axis; d < rank; ++d)
      inner *= indices.dim(static_cast<int>(d));
    const std::vector<int64_t> values = int_values(indices);
    const int64_t count = static_cast<int64_t>(values.size());
    for (int64_t k = 0; k < count; ++k) {
      const int64_t index = values[k];
      if (index < 0 || index >= depth) continue;
      const int64_t o = inner == 0 ? 0 : k / inner, i = inner == 0 ? 0 : k % inner;
      strided_copy(on, {0, {}}, out, {(o * depth + index) * inner + i, {}}, {});
    }
  }

 private:
  int64_t axis_;
};

}  // namespace

void register_sequence_kernels(KernelRegistry& r) {
  must_add_kernel(r, "Range", kCpu, numeric_kernel<RangeKernel>("Tidx"));
  must_add_kernel(r, "OneHot", kCpu, simple_kernel<OneHotKernel>());
}

}  // namespace troupe
