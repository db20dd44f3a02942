// CPU kernels for selecting and padding (graph/ops/array_manipulation_ops.hpp): Slice,
// StridedSlice, StridedSliceGrad, StridedSliceAssign, Pad, PadV2. A selection is a strided view
// of the input; a padding is the input copied into a view of the (filled) output.
#include "troupe/devices/cpu/array_layout.hpp"
#include "troupe/devices/cpu/cpu_kernels.hpp"
#include "troupe/devices/cpu/variable_inputs.hpp"
#include "troupe/graph/ops/strided_slice_spec.hpp"

namespace troupe {
namespace {

// The view of a tensor of dimensions `dims` that starts at `begin` and steps `steps` (in
// indices) along each dimension.
StridedView window(const std::vector<int64_t>& dims, const std::vector<int64_t>& begin,
                   const std::vector<int64_t>& steps) {
  StridedView view = dense_view(dims);
  for (size_t d = 0; d < dims.size(); ++d) {
    view.offset += begin[d] * view.steps[d];
    view.steps[d] *= steps[d];
  }
  return view;
}

class SliceKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void compute(OpKernelContext& ctx) override {
    const Tensor& input = ctx.input(0);
    const std::vector<int64_t> begin = int_values(ctx.input(1));
    std::vector<int64_t> size = int_values(ctx.input(2));
    const int64_t rank = input.rank();
    if (ctx.input(1).rank() != 1 || ctx.input(2).rank() != 1 ||
        static_cast<int64_t>(begin.size()) != rank || static_cast<int64_t>(size.size()) != rank) {
      ctx.fail_invalid(
          "begin and size must be vectors of {} entries (the input's rank), got {} "
          "and {}",
          rank, ctx.input(1).shape().to_string(), ctx.input(2).shape().to_string());
      return;
    }
    for (int64_t d = 0; d < rank; ++d) {
      const int64_t dim = input.dim(static_cast<int>(d));
      if (size[d] == -1) size[d] = dim - begin[d];
      if (begin[d] < 0 || size[d] < 0 || begin[d] + size[d] > dim) {
        ctx.fail_invalid(
            "expected begin[{}] = {} and size[{}] = {} to be within [0, {}] (the "
            "input's shape is {})",
            d, begin[d], d, int_values(ctx.input(2))[d], dim, input.shape().to_string());
        return;
      }
    }
    Tensor& out = ctx.allocate_output(0, TensorShape(size));
    strided_copy(input, window(input.shape().dims(), begin, std::vector<int64_t>(rank, 1)), out,
                 dense_view(size), size);
  }
};

StridedSliceMasks masks_of(const OpKernelConstruction& c) {
  return {c.attr<int64_t>("begin_mask"), c.attr<int64_t>("end_mask"),
          c.attr<int64_t>("ellipsis_mask"), c.attr<int64_t>("new_axis_mask"),
          c.attr<int64_t>("shrink_axis_mask")};
}

// The spec of a strided slice of a tensor of dimensions `dims` (inputs first..first+2).
bool read_spec(OpKernelContext& ctx, const std::vector<int64_t>& dims, int first,
               const StridedSliceMasks& masks, StridedSliceSpec* spec) {
  for (int i = first; i < first + 3; ++i) {
    if (ctx.input(i).rank() != 1) {
      ctx.fail_invalid("begin, end and strides must be vectors, got shape {}",
                       ctx.input(i).shape().to_string());
      return false;
    }
  }
  auto made =
      make_strided_slice_spec(dims, int_values(ctx.input(first)), int_values(ctx.input(first + 1)),
                              int_values(ctx.input(first + 2)), masks);
  if (!made.ok()) {
    ctx.fail_invalid("{}", made.status().message());
    return false;
  }
  *spec = std::move(*made);
  return true;
}

class StridedSliceKernel : public OpKernel {
 public:
  explicit StridedSliceKernel(const OpKernelConstruction& c) : OpKernel(c), masks_(masks_of(c)) {}

  void compute(OpKernelContext& ctx) override {
    const Tensor& input = ctx.input(0);
    StridedSliceSpec spec;
    if (!read_spec(ctx, input.shape().dims(), 1, masks_, &spec)) return;
    Tensor& out = ctx.allocate_output(0, TensorShape(spec.output_dims));
    // The output holds the selected elements in row-major order of the input's dimensions.
    strided_copy(input, window(input.shape().dims(), spec.begin, spec.strides), out,
                 dense_view(spec.sizes), spec.sizes);
  }

 private:
  StridedSliceMasks masks_;
};

class StridedSliceGradKernel : public OpKernel {
 public:
  explicit StridedSliceGradKernel(const OpKernelConstruction& c)
      : OpKernel(c), masks_(masks_of(c)) {}

  void compute(OpKernelContext& ctx) override {
    const std::vector<int64_t> dims = int_values(ctx.input(0));
    const Tensor& dy = ctx.input(4);
    StridedSliceSpec spec;
    if (!read_spec(ctx, dims, 1, masks_, &spec)) return;
    if (TensorShape(spec.output_dims) != dy.shape()) {
      ctx.fail_invalid("dy has shape {} but the slice has shape {}", dy.shape().to_string(),
                       TensorShape(spec.output_dims).to_string());
      return;
    }
    Tensor& out = ctx.allocate_output(0, TensorShape(dims));
    fill_with(out, nullptr);
    strided_copy(dy, dense_view(spec.sizes), out, window(dims, spec.begin, spec.strides),
                 spec.sizes);
  }

 private:
  StridedSliceMasks masks_;
};

// StridedSliceAssign: the selection of the variable replaced by `value`, in place.
class StridedSliceAssignKernel : public OpKernel {
 public:
  explicit StridedSliceAssignKernel(const OpKernelConstruction& c)
      : OpKernel(c), masks_(masks_of(c)) {}

  void compute(OpKernelContext& ctx) override {
    Variable* var = initialized_variable_input(ctx, 0);
    if (var == nullptr) return;
    const std::vector<int64_t> dims = var->value().shape().dims();
    StridedSliceSpec spec;
    if (!read_spec(ctx, dims, 1, masks_, &spec)) return;
    const Tensor& value = ctx.input(4);
    if (TensorShape(spec.output_dims) != value.shape()) {
      ctx.fail_invalid(
          "Sliced l-value shape {} does not match r-value shape {} (of variable '{}'). "
          "Automatic broadcasting not yet implemented.",
          TensorShape(spec.output_dims).to_string(), value.shape().to_string(), var->name());
      return;
    }
    strided_copy(value, dense_view(spec.sizes), var->mutable_value(),
                 window(dims, spec.begin, spec.strides), spec.sizes);
    ctx.set_output_ref(0, ctx.input_ref_ptr(0));
  }

 private:
  StridedSliceMasks masks_;
};

class PadKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void compute(OpKernelContext& ctx) override {
    const Tensor& input = ctx.input(0);
    const Tensor& paddings = ctx.input(1);
    const int64_t rank = input.rank();
    if (paddings.rank() != 2 || paddings.dim(0) != rank || paddings.dim(1) != 2) {
      ctx.fail_invalid("paddings must be a [{}, 2] matrix for an input of rank {}, got shape {}",
                       rank, rank, paddings.shape().to_string());
      return;
    }
    const Tensor* constant = nullptr;
    if (ctx.num_inputs() > 2) {
      constant = &ctx.input(2);
      if (constant->rank() != 0) {
        ctx.fail_invalid("constant_values must be a scalar, got shape {}",
                         constant->shape().to_string());
        return;
      }
    }
    const std::vector<int64_t> pads = int_values(paddings);
    std::vector<int64_t> dims(rank), before(rank);
    for (int64_t d = 0; d < rank; ++d) {
      before[d] = pads[2 * d];
      if (pads[2 * d] < 0 || pads[2 * d + 1] < 0) {
        ctx.fail_invalid("paddings must be non-negative, got ({}, {}) for dimension {}",
                         pads[2 * d], pads[2 * d + 1], d);
        return;
      }
      dims[d] = input.dim(static_cast<int>(d)) + pads[2 * d] + pads[2 * d + 1];
    }
    Tensor& out = ctx.allocate_output(0, TensorShape(dims));
    fill_with(out, constant);
    strided_copy(input, dense_view(input.shape().dims()), out,
                 window(dims, before, std::vector<int64_t>(rank, 1)), input.shape().dims());
  }
};

// MirrorPad and its gradient. Each element of the padded shape comes from one element of the
// input: along each dimension, coordinate o (before the padding `before`, size n) reads
// i = o - before, mirrored back into [0, n): REFLECT maps -1 to 1 and n to n - 2, SYMMETRIC
// -1 to 0 and n to n - 1. The forward op copies along that map; the gradient adds along it.
class MirrorPadKernel : public OpKernel {
 public:
  explicit MirrorPadKernel(const OpKernelConstruction& c, bool gradient)
      : OpKernel(c), symmetric_(c.attr<std::string>("mode") == "SYMMETRIC"), gradient_(gradient) {}

  static KernelFactory factory(bool gradient) {
    return [gradient](const OpKernelConstruction& c) -> StatusOr<std::unique_ptr<OpKernel>> {
      return std::unique_ptr<OpKernel>(new MirrorPadKernel(c, gradient));
    };
  }

  void compute(OpKernelContext& ctx) override {
    const Tensor& given = ctx.input(0);
    const Tensor& paddings = ctx.input(1);
    const int rank = given.rank();
    if (paddings.rank() != 2 || paddings.dim(0) != rank || paddings.dim(1) != 2) {
      ctx.fail_invalid("paddings must be a [{}, 2] matrix for an input of rank {}, got shape {}",
                       rank, rank, paddings.shape().to_string());
      return;
    }
    const std::vector<int64_t> pads = int_values(paddings);
    // `small` is the unpadded shape: the forward op's input, the gradient's output.
    std::vector<int64_t> small(rank), large(rank);
    const int64_t offset = symmetric_ ? 0 : 1;
    for (int d = 0; d < rank; ++d) {
      const int64_t before = pads[2 * d], after = pads[2 * d + 1];
      if (before < 0 || after < 0) {
        ctx.fail_invalid("paddings must be non-negative, got ({}, {}) for dimension {}", before,
                         after, d);
        return;
      }
      // Compared before any sum, which a huge padding would overflow.
      if (gradient_ && (before > given.dim(d) || after > given.dim(d) - before)) {
        ctx.fail_invalid("paddings ({}, {}) exceed dimension {} of the gradient, {}", before, after,
                         d, given.dim(d));
        return;
      }
      small[d] = gradient_ ? given.dim(d) - before - after : given.dim(d);
      if (before > small[d] - offset || after > small[d] - offset) {
        ctx.fail_invalid("paddings must be {} the dimension size: {}, {} {} {} (dimension {})",
                         symmetric_ ? "no greater than" : "less than", before, after,
                         symmetric_ ? "greater than" : "not less than", small[d], d);
        return;
      }
      large[d] = small[d] + before + after;  // at most about 3 x small: no overflow
    }
    auto shape = TensorShape::from_dims(gradient_ ? small : large);
    if (!shape.ok()) {
      ctx.fail_invalid("{}", shape.status().message());
      return;
    }
    Tensor& out = ctx.allocate_output(0, *shape);
    if (gradient_) {
      TROUPE_SWITCH_NUMERIC(out.dtype(), T, std::fill_n(out.data<T>(), out.num_elements(), T{}));
    }
    // Row-major strides of the unpadded shape; walk the padded one element by element.
    std::vector<int64_t> stride(rank, 1);
    for (int d = rank - 2; d >= 0; --d)
      stride[d] = stride[d + 1] * small[d + 1];
    std::vector<int64_t> at(rank, 0);
    const int64_t total = TensorShape(large).num_elements();
    auto source = [&] {
      int64_t flat = 0;
      for (int d = 0; d < rank; ++d) {
        int64_t i = at[d] - pads[2 * d];
        if (i < 0) i = symmetric_ ? -i - 1 : -i;
        if (i >= small[d]) i = symmetric_ ? 2 * small[d] - 1 - i : 2 * small[d] - 2 - i;
        flat += i * stride[d];
      }
      return flat;
    };
    auto next = [&] {
      for (int d = rank - 1; d >= 0; --d) {
        if (++at[d] < large[d]) return;
        at[d] = 0;
      }
    };
    if (gradient_) {
      TROUPE_SWITCH_NUMERIC(out.dtype(), T, {
        const T* dy = given.data<T>();
        T* dx = out.data<T>();
        for (int64_t k = 0; k < total; ++k, next())
          dx[source()] += dy[k];
      });
    } else {
      TROUPE_SWITCH_ALL(out.dtype(), T, {
        const T* x = given.data<T>();
        T* y = out.data<T>();
        for (int64_t k = 0; k < total; ++k, next())
          y[k] = x[source()];
      });
    }
  }

 private:
  bool symmetric_;
  bool gradient_;
};

}  // namespace

void register_slice_kernels(KernelRegistry& r) {
  must_add_kernel(r, "MirrorPad", kCpu, MirrorPadKernel::factory(false));
  must_add_kernel(r, "MirrorPadGrad", kCpu, MirrorPadKernel::factory(true));
  must_add_kernel(r, "Slice", kCpu, simple_kernel<SliceKernel>());
  must_add_kernel(r, "StridedSlice", kCpu, simple_kernel<StridedSliceKernel>());
  must_add_kernel(r, "StridedSliceGrad", kCpu, simple_kernel<StridedSliceGradKernel>());
  must_add_kernel(r, "StridedSliceAssign", kCpu, simple_kernel<StridedSliceAssignKernel>());
  must_add_kernel(r, "Pad", kCpu, simple_kernel<PadKernel>());
  must_add_kernel(r, "PadV2", kCpu, simple_kernel<PadKernel>());
}

}  // namespace troupe
