// CPU kernels for Pack, Where, Select, GatherV2 and LogicalNot
// (graph/ops/selection_ops.hpp).
// Elements are copied as their C++ type (strings too); row-major throughout.
#include <algorithm>

#include "troupe/devices/cpu/cpu_kernels.hpp"

namespace troupe {
namespace {

// Copies `count` elements of dtype `dtype` from `from[from_at...]` to `to[to_at...]`.
void copy_elements(DataType dtype, const Tensor& from, int64_t from_at, Tensor& to, int64_t to_at,
                   int64_t count) {
  TROUPE_SWITCH_ALL(dtype, T, std::copy_n(from.data<T>() + from_at, count, to.data<T>() + to_at));
}

class PackKernel : public OpKernel {
 public:
  explicit PackKernel(const OpKernelConstruction& c)
      : OpKernel(c), axis_(c.attr<int64_t>("axis")) {}

  void compute(OpKernelContext& ctx) override {
    const TensorShape& shape = ctx.input(0).shape();
    for (int i = 1; i < ctx.num_inputs(); ++i) {
      if (ctx.input(i).shape() != shape) {
        ctx.fail_invalid(
            "shapes of all inputs must match: values[0].shape = {} != values[{}]"
            ".shape = {}",
            shape.to_string(), i, ctx.input(i).shape().to_string());
        return;
      }
    }
    int64_t rank = shape.rank();
    int64_t axis = axis_ < 0 ? axis_ + rank + 1 : axis_;
    if (axis < 0 || axis > rank) {
      ctx.fail_invalid("axis = {} not in [{}, {}]", axis_, -(rank + 1), rank + 1);
      return;
    }
    std::vector<int64_t> dims = shape.dims();
    dims.insert(dims.begin() + axis, ctx.num_inputs());
    Tensor& out = ctx.allocate_output(0, TensorShape(dims));
    // Each input is `outer` blocks of `inner` elements; block b of input i goes to position
    // (b * n + i) * inner of the output.
    int64_t inner = 1;
    for (int64_t d = axis; d < rank; ++d)
      inner *= shape.dim(static_cast<int>(d));
    int64_t outer = inner == 0 ? 0 : shape.num_elements() / inner;
    const int64_t n = ctx.num_inputs();
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t b = 0; b < outer; ++b) {
        copy_elements(out.dtype(), ctx.input(static_cast<int>(i)), b * inner, out,
                      (b * n + i) * inner, inner);
      }
    }
  }

 private:
  int64_t axis_;
};

class WhereKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void compute(OpKernelContext& ctx) override {
    const Tensor& input = ctx.input(0);
    const bool* flags = input.data<bool>();
    int64_t count = std::count(flags, flags + input.num_elements(), true);
    int rank = input.shape().rank();
    Tensor& out = ctx.allocate_output(0, TensorShape{count, rank});
    int64_t* coords = out.data<int64_t>();
    std::vector<int64_t> index(rank, 0);
    for (int64_t i = 0; i < input.num_elements(); ++i) {
      if (flags[i]) {
        std::copy(index.begin(), index.end(), coords);
        coords += rank;
      }
      for (int d = rank - 1; d >= 0; --d) {  // the next row-major index
        if (++index[d] < input.shape().dim(d)) break;
        index[d] = 0;
      }
    }
  }
};

class GatherKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void compute(OpKernelContext& ctx) override {
    const Tensor& params = ctx.input(0);
    const Tensor& indices = ctx.input(1);
    const Tensor& axis_tensor = ctx.input(2);
    if (axis_tensor.num_elements() != 1) {
      ctx.fail_invalid("axis must be a scalar, got shape {}", axis_tensor.shape().to_string());
      return;
    }
    int64_t rank = params.shape().rank();
    int64_t axis = axis_tensor.dtype() == DataType::kInt32 ? axis_tensor.scalar<int32_t>()
                                                           : axis_tensor.scalar<int64_t>();
    if (axis < -rank || axis >= rank) {
      ctx.fail_invalid("Expected axis in the range [{}, {}), but got {}", -rank, rank, axis);
      return;
    }
    if (axis < 0) axis += rank;
    const int64_t limit = params.shape().dim(static_cast<int>(axis));
    std::vector<int64_t> dims(params.shape().dims().begin(), params.shape().dims().begin() + axis);
    for (int64_t d : indices.shape().dims())
      dims.push_back(d);
    for (int64_t d = axis + 1; d < rank; ++d)
      dims.push_back(params.shape().dim(static_cast<int>(d)));
    int64_t inner = 1;
    for (int64_t d = axis + 1; d < rank; ++d)
      inner *= params.shape().dim(static_cast<int>(d));
    int64_t outer = 1;
    for (int64_t d = 0; d < axis; ++d)
      outer *= params.shape().dim(static_cast<int>(d));
    const int64_t n = indices.num_elements();
    std::vector<int64_t> index(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      index[i] = indices.dtype() == DataType::kInt32 ? indices.data<int32_t>()[i]
                                                     : indices.data<int64_t>()[i];
      if (index[i] < 0 || index[i] >= limit) {
        ctx.fail_invalid("indices[{}] = {} is not in [0, {})", i, index[i], limit);
        return;
      }
    }
    Tensor& out = ctx.allocate_output(0, TensorShape(dims));
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t i = 0; i < n; ++i) {
        copy_elements(params.dtype(), params, (o * limit + index[i]) * inner, out,
                      (o * n + i) * inner, inner);
      }
    }
  }
};

class SelectKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void compute(OpKernelContext& ctx) override {
    const Tensor& cond = ctx.input(0);
    const Tensor& t = ctx.input(1);
    const Tensor& e = ctx.input(2);
    if (t.shape() != e.shape()) {
      ctx.fail_invalid("t and e must have the same shape, got {} and {}", t.shape().to_string(),
                       e.shape().to_string());
      return;
    }
    // Each condition element chooses a block of `block` consecutive elements.
    int64_t block = 0;
    if (cond.shape().rank() == 0) {
      block = t.num_elements();
    } else if (cond.shape() == t.shape()) {
      block = 1;
    } else if (cond.shape().rank() == 1 && t.shape().rank() >= 1 &&
               cond.shape().dim(0) == t.shape().dim(0)) {
      block = t.shape().dim(0) == 0 ? 0 : t.num_elements() / t.shape().dim(0);
    } else {
      ctx.fail_invalid(
          "the condition must be a scalar, a vector as long as t's first dimension, or of t's "
          "shape; got {} for t of shape {}",
          cond.shape().to_string(), t.shape().to_string());
      return;
    }
    Tensor& out = ctx.allocate_output(0, t.shape());
    const bool* choose = cond.data<bool>();
    for (int64_t i = 0; i < cond.num_elements() && block > 0; ++i) {
      copy_elements(t.dtype(), choose[i] ? t : e, i * block, out, i * block, block);
    }
  }
};

class LogicalNotKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void compute(OpKernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.allocate_output(0, x.shape());
    for (int64_t i = 0; i < x.num_elements(); ++i)
      y.data<bool>()[i] = !x.data<bool>()[i];
  }
};

}  // namespace

void register_selection_kernels(KernelRegistry& r) {
  must_add_kernel(r, "Pack", kCpu, simple_kernel<PackKernel>());
  must_add_kernel(r, "Where", kCpu, simple_kernel<WhereKernel>());
  must_add_kernel(r, "Select", kCpu, simple_kernel<SelectKernel>());
  must_add_kernel(r, "GatherV2", kCpu, simple_kernel<GatherKernel>());
  must_add_kernel(r, "LogicalNot", kCpu, simple_kernel<LogicalNotKernel>());
}

}  // namespace troupe
