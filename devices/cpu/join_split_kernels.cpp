// CPU kernels for joining and splitting (graph/ops/array_manipulation_ops.hpp): ConcatV2,
// ConcatOffset, Split, SplitV, Unpack. Each part is a block of the whole along the axis: a
// strided copy between the part and its place in the whole.
#include <numeric>

#include "troupe/devices/cpu/array_layout.hpp"
#include "troupe/devices/cpu/cpu_kernels.hpp"

namespace troupe {
namespace {

// A scalar axis for a tensor of rank `rank`, made non-negative; fails the kernel otherwise.
bool read_axis(OpKernelContext& ctx, const Tensor& t, int64_t rank, int64_t* axis) {
  if (t.num_elements() != 1 || t.rank() > 1) {
    ctx.fail_invalid("the axis must be a scalar, got shape {}", t.shape().to_string());
    return false;
  }
  const int64_t a = int_values(t)[0];
  if (a < -rank || a >= rank) {
    ctx.fail_invalid("axis {} is out of range [{}, {}) for a tensor of rank {}", a, -rank, rank,
                     rank);
    return false;
  }
  *axis = a < 0 ? a + rank : a;
  return true;
}

// The view, in a tensor of dimensions `whole_dims`, of the part that starts at `start` along
// `axis` (its own dimensions are given to the copy).
StridedView part_of(const std::vector<int64_t>& whole_dims, int64_t axis, int64_t start) {
  StridedView view = dense_view(whole_dims);
  view.offset = start * view.steps[axis];
  return view;
}

class ConcatKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void compute(OpKernelContext& ctx) override {
    const int n = ctx.num_inputs() - 1;
    const TensorShape& first = ctx.input(0).shape();
    const int64_t rank = first.rank();
    if (rank == 0) {
      ctx.fail_invalid("cannot concatenate scalars (use tf.stack instead)");
      return;
    }
    int64_t axis = 0;
    if (!read_axis(ctx, ctx.input(n), rank, &axis)) return;
    std::vector<int64_t> dims = first.dims();
    dims[axis] = 0;
    for (int i = 0; i < n; ++i) {
      const TensorShape& shape = ctx.input(i).shape();
      bool matches = shape.rank() == rank;
      for (int64_t d = 0; matches && d < rank; ++d) {
        matches = d == axis || shape.dim(static_cast<int>(d)) == first.dim(static_cast<int>(d));
      }
      if (!matches) {
        ctx.fail_invalid(
            "the inputs must match in every dimension but {}: input 0 has shape {}, input {} "
            "has {}",
            axis, first.to_string(), i, shape.to_string());
        return;
      }
      dims[axis] += shape.dim(static_cast<int>(axis));
    }
    Tensor& out = ctx.allocate_output(0, TensorShape(dims));
    int64_t start = 0;
    for (int i = 0; i < n; ++i) {
      const Tensor& part = ctx.input(i);
      strided_copy(part, dense_view(part.shape().dims()), out, part_of(dims, axis, start),
                   part.shape().dims());
      start += part.shape().dim(static_cast<int>(axis));
    }
  }
};

class ConcatOffsetKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void compute(OpKernelContext& ctx) override {
    const int n = ctx.num_inputs() - 1;
    const std::vector<int64_t> first = int_values(ctx.input(1));
    const int64_t rank = static_cast<int64_t>(first.size());
    int64_t axis = 0;
    if (!read_axis(ctx, ctx.input(0), rank, &axis)) return;
    int64_t start = 0;
    for (int i = 0; i < n; ++i) {
      const std::vector<int64_t> shape = int_values(ctx.input(i + 1));
      if (static_cast<int64_t>(shape.size()) != rank) {
        ctx.fail_invalid("shape {} has {} entries, shape 0 has {}", i, shape.size(), rank);
        return;
      }
      Tensor& offset = ctx.allocate_output(i, TensorShape{rank});
      for (int64_t d = 0; d < rank; ++d)
        offset.data<int32_t>()[d] = d == axis ? static_cast<int32_t>(start) : 0;
      start += shape[axis];
    }
  }
};

// Copies the parts of `value` of sizes `sizes` along `axis` to the outputs.
void split_into(OpKernelContext& ctx, const Tensor& value, int64_t axis,
                const std::vector<int64_t>& sizes) {
  const std::vector<int64_t>& whole = value.shape().dims();
  int64_t start = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    std::vector<int64_t> dims = whole;
    dims[axis] = sizes[i];
    Tensor& out = ctx.allocate_output(static_cast<int>(i), TensorShape(dims));
    strided_copy(value, part_of(whole, axis, start), out, dense_view(dims), dims);
    start += sizes[i];
  }
}

class SplitKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void compute(OpKernelContext& ctx) override {
    const Tensor& value = ctx.input(1);
    int64_t axis = 0;
    if (!read_axis(ctx, ctx.input(0), value.rank(), &axis)) return;
    const int64_t num = ctx.num_outputs();
    const int64_t size = value.dim(static_cast<int>(axis));
    if (size % num != 0) {
      ctx.fail_invalid(
          "number of ways to split should evenly divide the split dimension, but got split_dim "
          "{} (size = {}) and num_split {}",
          axis, size, num);
      return;
    }
    split_into(ctx, value, axis, std::vector<int64_t>(num, size / num));
  }
};

class SplitVKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void compute(OpKernelContext& ctx) override {
    const Tensor& value = ctx.input(0);
    int64_t axis = 0;
    if (!read_axis(ctx, ctx.input(2), value.rank(), &axis)) return;
    std::vector<int64_t> sizes = int_values(ctx.input(1));
    if (static_cast<int>(sizes.size()) != ctx.num_outputs()) {
      ctx.fail_invalid("size_splits has {} entries but num_split is {}", sizes.size(),
                       ctx.num_outputs());
      return;
    }
    const int64_t total = value.dim(static_cast<int>(axis));
    int64_t known = 0, rest_at = -1;
    for (size_t i = 0; i < sizes.size(); ++i) {
      if (sizes[i] == -1 && rest_at < 0) {
        rest_at = static_cast<int64_t>(i);
      } else if (sizes[i] < 0) {
        ctx.fail_invalid("size_splits may hold sizes >= 0 and one -1, got [{}]",
                         fmt::join(sizes, ","));
        return;
      } else {
        known += sizes[i];
      }
    }
    if (rest_at >= 0 && known <= total) sizes[rest_at] = total - known;
    if (std::accumulate(sizes.begin(), sizes.end(), int64_t{0}) != total) {
      ctx.fail_invalid("size_splits [{}] must add up to the size of dimension {} ({})",
                       fmt::join(int_values(ctx.input(1)), ","), axis, total);
      return;
    }
    split_into(ctx, value, axis, sizes);
  }
};

class UnpackKernel : public OpKernel {
 public:
  explicit UnpackKernel(const OpKernelConstruction& c)
      : OpKernel(c), axis_(c.attr<int64_t>("axis")) {}

  void compute(OpKernelContext& ctx) override {
    const Tensor& value = ctx.input(0);
    const int64_t rank = value.rank();
    int64_t axis = axis_ < 0 ? axis_ + rank : axis_;
    if (axis < 0 || axis >= rank) {
      ctx.fail_invalid("axis = {} not in [{}, {})", axis_, -rank, rank);
      return;
    }
    if (value.dim(static_cast<int>(axis)) != ctx.num_outputs()) {
      ctx.fail_invalid("cannot unpack dimension {} of size {} into {} tensors", axis,
                       value.dim(static_cast<int>(axis)), ctx.num_outputs());
      return;
    }
    const std::vector<int64_t>& whole = value.shape().dims();
    std::vector<int64_t> dims = whole;
    dims.erase(dims.begin() + axis);
    StridedView from = dense_view(whole);
    const int64_t step = from.steps[axis];
    from.steps.erase(from.steps.begin() + axis);
    for (int i = 0; i < ctx.num_outputs(); ++i) {
      Tensor& out = ctx.allocate_output(i, TensorShape(dims));
      strided_copy(value, {i * step, from.steps}, out, dense_view(dims), dims);
    }
  }

 private:
  int64_t axis_;
};

}  // namespace

void register_join_split_kernels(KernelRegistry& r) {
  must_add_kernel(r, "ConcatV2", kCpu, simple_kernel<ConcatKernel>());
  must_add_kernel(r, "ConcatOffset", kCpu, simple_kernel<ConcatOffsetKernel>());
  must_add_kernel(r, "Split", kCpu, simple_kernel<SplitKernel>());
  must_add_kernel(r, "SplitV", kCpu, simple_kernel<SplitVKernel>());
  must_add_kernel(r, "Unpack", kCpu, simple_kernel<UnpackKernel>());
}

}  // namespace troupe
