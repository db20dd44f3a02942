// CPU kernels for array ops: Const, Placeholder, Identity, NoOp, Reshape, Shape, Fill, the
// runtime's _Arg / _Retval, and the ops that only change a shape (ExpandDims, Squeeze; their
// output shares the input's buffer) or read it (Rank).
#include <limits>

#include "troupe/devices/cpu/array_layout.hpp"
#include "troupe/devices/cpu/cpu_kernels.hpp"

namespace troupe {
namespace {

class ConstKernel : public OpKernel {
 public:
  explicit ConstKernel(const OpKernelConstruction& c)
      : OpKernel(c), value_(c.attr<Tensor>("value")) {}
  void compute(OpKernelContext& ctx) override { ctx.set_output(0, value_); }

 private:
  Tensor value_;
};

class PlaceholderKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void compute(OpKernelContext& ctx) override {
    ctx.fail_invalid("you must feed a value for placeholder tensor '{}' with dtype {} and shape {}",
                     node().name(), dtype_name(node().output_type(0)),
                     node().output_shape(0).to_string());
  }
};

class IdentityKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void compute(OpKernelContext& ctx) override { ctx.set_output(0, ctx.input(0)); }
};

class EnsureShapeLikeKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void compute(OpKernelContext& ctx) override {
    if (ctx.input(0).shape() != ctx.input(1).shape()) {
      ctx.fail_invalid("input has shape {} but must have the shape of 'like', {}",
                       ctx.input(0).shape().to_string(), ctx.input(1).shape().to_string());
      return;
    }
    ctx.set_output(0, ctx.input(0));
  }
};

class NoOpKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void compute(OpKernelContext&) override {}
};

class ArgKernel : public OpKernel {
 public:
  explicit ArgKernel(const OpKernelConstruction& c)
      : OpKernel(c), index_(c.attr<int64_t>("index")) {}
  void compute(OpKernelContext& ctx) override {
    const Tensor& value = ctx.step().args[index_];
    if (value.dtype() != node().output_type(0)) {
      ctx.fail_invalid("fed value is {}, expected {}", dtype_name(value.dtype()),
                       dtype_name(node().output_type(0)));
      return;
    }
    ctx.set_output(0, value);
  }

 private:
  int64_t index_;
};

class RetvalKernel : public OpKernel {
 public:
  explicit RetvalKernel(const OpKernelConstruction& c)
      : OpKernel(c), index_(c.attr<int64_t>("index")) {}
  void compute(OpKernelContext& ctx) override { ctx.step().rets[index_] = ctx.input(0); }

 private:
  int64_t index_;
};

class RetvalRefKernel : public OpKernel {
 public:
  explicit RetvalRefKernel(const OpKernelConstruction& c)
      : OpKernel(c), index_(c.attr<int64_t>("index")) {}
  void compute(OpKernelContext& ctx) override {
    ctx.step().ret_refs[index_] = ctx.input_ref_ptr(0);
  }

 private:
  int64_t index_;
};

class ReshapeKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void compute(OpKernelContext& ctx) override {
    const Tensor& input = ctx.input(0);
    const Tensor& shape = ctx.input(1);
    if (shape.rank() != 1) {
      ctx.fail_invalid("shape must be a vector, got shape {}", shape.shape().to_string());
      return;
    }
    std::vector<int64_t> dims = int_values(shape);
    int inferred = -1;
    int64_t known = 1;
    for (size_t i = 0; i < dims.size(); ++i) {
      if (dims[i] == -1 && inferred < 0) {
        inferred = static_cast<int>(i);
      } else if (dims[i] < 0) {
        ctx.fail_invalid("shape [{}] may hold one -1 and otherwise sizes >= 0",
                         fmt::join(dims, ","));
        return;
      } else {
        known *= dims[i];
      }
    }
    if (inferred >= 0) {
      if (known == 0 || input.num_elements() % known != 0) {
        ctx.fail_invalid("cannot reshape a tensor of {} elements to [{}]", input.num_elements(),
                         fmt::join(dims, ","));
        return;
      }
      dims[inferred] = input.num_elements() / known;
    }
    auto reshaped = input.reshaped(TensorShape(dims));
    if (!reshaped.ok()) {
      ctx.fail_invalid("{}", reshaped.status().message());
      return;
    }
    ctx.set_output(0, std::move(reshaped).value());
  }
};

class ShapeKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void compute(OpKernelContext& ctx) override {
    const TensorShape& shape = ctx.input(0).shape();
    Tensor& out = ctx.allocate_output(0, TensorShape{shape.rank()});
    for (int i = 0; i < shape.rank(); ++i) {
      if (out.dtype() == DataType::kInt32) {
        if (shape.dim(i) > std::numeric_limits<int32_t>::max()) {
          ctx.fail_invalid("dimension {} is {}, too large for out_type int32", i, shape.dim(i));
          return;
        }
        out.data<int32_t>()[i] = static_cast<int32_t>(shape.dim(i));
      } else {
        out.data<int64_t>()[i] = shape.dim(i);
      }
    }
  }
};

class FillKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void compute(OpKernelContext& ctx) override {
    const Tensor& dims = ctx.input(0);
    const Tensor& value = ctx.input(1);
    if (dims.rank() != 1) {
      ctx.fail_invalid("dims must be a vector, got shape {}", dims.shape().to_string());
      return;
    }
    if (value.rank() != 0) {
      ctx.fail_invalid("value must be a scalar, got shape {}", value.shape().to_string());
      return;
    }
    auto shape = TensorShape::from_dims(int_values(dims));
    if (!shape.ok()) {
      ctx.fail_invalid("{}", shape.status().message());
      return;
    }
    Tensor& out = ctx.allocate_output(0, *shape);
    TROUPE_SWITCH_ALL(value.dtype(), T,
                      std::fill_n(out.data<T>(), out.num_elements(), value.scalar<T>()));
  }
};

// Sets output 0 to the input with dimensions `dims` (same elements, same buffer).
void set_reshaped(OpKernelContext& ctx, const std::vector<int64_t>& dims) {
  auto reshaped = ctx.input(0).reshaped(TensorShape(dims));
  if (!reshaped.ok()) {
    ctx.set_status(reshaped.status());
    return;
  }
  ctx.set_output(0, std::move(*reshaped));
}

class ExpandDimsKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void compute(OpKernelContext& ctx) override {
    const Tensor& input = ctx.input(0);
    if (ctx.input(1).num_elements() != 1) {
      ctx.fail_invalid("'dim' must be a tensor with a single value, got shape {}",
                       ctx.input(1).shape().to_string());
      return;
    }
    const int64_t rank = input.rank();
    int64_t axis = int_values(ctx.input(1))[0];
    if (axis < -1 - rank || axis > rank) {
      ctx.fail_invalid("tried to expand dim index {} for a tensor with {} dimensions", axis, rank);
      return;
    }
    if (axis < 0) axis += rank + 1;
    std::vector<int64_t> dims = input.shape().dims();
    dims.insert(dims.begin() + axis, 1);
    set_reshaped(ctx, dims);
  }
};

class SqueezeKernel : public OpKernel {
 public:
  explicit SqueezeKernel(const OpKernelConstruction& c)
      : OpKernel(c), axes_(c.attr<std::vector<int64_t>>("squeeze_dims")) {}

  void compute(OpKernelContext& ctx) override {
    const Tensor& input = ctx.input(0);
    const int64_t rank = input.rank();
    std::vector<bool> squeeze(rank, axes_.empty());
    for (int64_t a : axes_) {
      const int64_t d = a < 0 ? a + rank : a;
      if (d < 0 || d >= rank) {
        ctx.fail_invalid("tried to squeeze dim index {} for a tensor with {} dimensions", a, rank);
        return;
      }
      if (input.dim(static_cast<int>(d)) != 1) {
        ctx.fail_invalid("can not squeeze dim[{}], expected a dimension of 1, got {}", d,
                         input.dim(static_cast<int>(d)));
        return;
      }
      squeeze[d] = true;
    }
    std::vector<int64_t> dims;
    for (int64_t d = 0; d < rank; ++d) {
      const int64_t v = input.dim(static_cast<int>(d));
      if (!(squeeze[d] && v == 1)) dims.push_back(v);
    }
    set_reshaped(ctx, dims);
  }

 private:
  std::vector<int64_t> axes_;
};

class RankKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void compute(OpKernelContext& ctx) override {
    ctx.set_output(0, Tensor(static_cast<int32_t>(ctx.input(0).rank())));
  }
};

}  // namespace

void register_array_kernels(KernelRegistry& r) {
  must_add_kernel(r, "ExpandDims", kCpu, simple_kernel<ExpandDimsKernel>());
  must_add_kernel(r, "Squeeze", kCpu, simple_kernel<SqueezeKernel>());
  must_add_kernel(r, "Rank", kCpu, simple_kernel<RankKernel>());
  must_add_kernel(r, "Const", kCpu, simple_kernel<ConstKernel>());
  must_add_kernel(r, "Placeholder", kCpu, simple_kernel<PlaceholderKernel>());
  must_add_kernel(r, "Identity", kCpu, simple_kernel<IdentityKernel>());
  must_add_kernel(r, "PlaceholderWithDefault", kCpu, simple_kernel<IdentityKernel>());
  must_add_kernel(r, "StopGradient", kCpu, simple_kernel<IdentityKernel>());
  must_add_kernel(r, "EnsureShapeLike", kCpu, simple_kernel<EnsureShapeLikeKernel>());
  must_add_kernel(r, "NoOp", kCpu, simple_kernel<NoOpKernel>());
  must_add_kernel(r, "_Arg", kCpu, simple_kernel<ArgKernel>());
  must_add_kernel(r, "_Retval", kCpu, simple_kernel<RetvalKernel>());
  must_add_kernel(r, "_RetvalRef", kCpu, simple_kernel<RetvalRefKernel>());
  must_add_kernel(r, "Reshape", kCpu, simple_kernel<ReshapeKernel>());
  must_add_kernel(r, "Shape", kCpu, simple_kernel<ShapeKernel>());
  must_add_kernel(r, "Fill", kCpu, simple_kernel<FillKernel>());
}

}  // namespace troupe
