// CPU kernels for neural-network ops over rows of the last dimension: BiasAdd, Softmax and
// SparseSoftmaxCrossEntropyWithLogits. Softmax and the cross-entropy subtract each row's maximum
// before exponentiating, so large logits do not overflow.
#include <algorithm>
#include <cmath>
#include <utility>

#include "troupe/devices/cpu/cpu_kernels.hpp"
#include "troupe/devices/cpu/parallel.hpp"

namespace troupe {
namespace {

template <class T>
class BiasAddKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void compute(OpKernelContext& ctx) override {
    const Tensor& value = ctx.input(0);
    const Tensor& bias = ctx.input(1);
    if (value.rank() < 2) {
      ctx.fail_invalid("value must have rank >= 2, got shape {}", value.shape().to_string());
      return;
    }
    if (bias.rank() != 1) {
      ctx.fail_invalid("bias must be a vector, got shape {}", bias.shape().to_string());
      return;
    }
    const int64_t channels = value.dim(value.rank() - 1);
    if (bias.dim(0) != channels) {
      ctx.fail_invalid("bias has {} elements but value's last dimension is {} (shape {})",
                       bias.dim(0), channels, value.shape().to_string());
      return;
    }
    Tensor& out = ctx.allocate_output(0, value.shape());
    if (value.num_elements() == 0) return;
    const T* in = value.data<T>();
    const T* b = bias.data<T>();
    T* o = out.data<T>();
    parallel_for(ctx.device(), value.num_elements() / channels, static_cast<double>(channels),
                 [&](int64_t begin, int64_t end) {
                   for (int64_t row = begin; row < end; ++row) {
                     const int64_t base = row * channels;
                     for (int64_t c = 0; c < channels; ++c)
                       o[base + c] = in[base + c] + b[c];
                   }
                 });
  }
};

// Writes e^(x - max(x)) for the `n` values of a row into `e` and returns their sum (>= 1 when
// the row is finite and non-empty) and the max.
template <class T>
std::pair<T, T> shifted_exp(const T* x, int64_t n, T* e) {
  const T max = *std::max_element(x, x + n);
  T sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    e[i] = std::exp(x[i] - max);
    sum += e[i];
  }
  return {sum, max};
}

template <class T>
class SoftmaxKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void compute(OpKernelContext& ctx) override {
    const Tensor& logits = ctx.input(0);
    if (logits.rank() < 1) {
      ctx.fail_invalid("logits must have rank >= 1, got a scalar");
      return;
    }
    Tensor& out = ctx.allocate_output(0, logits.shape());
    const int64_t classes = logits.dim(logits.rank() - 1);
    if (logits.num_elements() == 0) return;
    const T* in = logits.data<T>();
    T* o = out.data<T>();
    parallel_for(ctx.device(), logits.num_elements() / classes, 30.0 * classes,
                 [&](int64_t begin, int64_t end) {
                   for (int64_t row = begin; row < end; ++row) {
                     T* e = o + row * classes;
                     const T sum = shifted_exp(in + row * classes, classes, e).first;
                     for (int64_t c = 0; c < classes; ++c)
                       e[c] /= sum;
                   }
                 });
  }
};

template <class T, class Label>
class SparseSoftmaxCrossEntropyKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void compute(OpKernelContext& ctx) override {
    const Tensor& features = ctx.input(0);
    const Tensor& labels = ctx.input(1);
    if (features.rank() != 2) {
      ctx.fail_invalid("features must be [batch, classes], got shape {}",
                       features.shape().to_string());
      return;
    }
    if (labels.rank() != 1) {
      ctx.fail_invalid("labels must be [batch], got shape {}", labels.shape().to_string());
      return;
    }
    const int64_t batch = features.dim(0), classes = features.dim(1);
    if (labels.dim(0) != batch) {
      ctx.fail_invalid("features have batch {} but labels have {}", batch, labels.dim(0));
      return;
    }
    const Label* label = labels.data<Label>();
    for (int64_t b = 0; b < batch; ++b) {
      if (label[b] < 0 || label[b] >= classes) {
        ctx.fail_invalid("label {} at batch index {} is outside the valid range [0, {})",
                         static_cast<int64_t>(label[b]), b, classes);
        return;
      }
    }
    T* loss = ctx.allocate_output(0, TensorShape{batch}).template data<T>();
    T* backprop = ctx.allocate_output(1, features.shape()).template data<T>();
    const T* in = features.data<T>();
    parallel_for(ctx.device(), batch, 30.0 * classes, [&](int64_t begin, int64_t end) {
      for (int64_t b = begin; b < end; ++b) {
        const T* x = in + b * classes;
        T* grad = backprop + b * classes;
        // loss = logsumexp(x) - x[label] = log(sum) - (x[label] - max).
        const auto [sum, max] = shifted_exp(x, classes, grad);
        loss[b] = std::log(sum) - (x[label[b]] - max);
        for (int64_t c = 0; c < classes; ++c)
          grad[c] /= sum;
        grad[label[b]] -= T(1);
      }
    });
  }
};

KernelFactory sparse_xent_factory() {
  return [](const OpKernelConstruction& c) -> StatusOr<std::unique_ptr<OpKernel>> {
    const DataType dtype = c.attr<DataType>("T");
    const bool int32_labels = c.attr<DataType>("Tlabels") == DataType::kInt32;
    TROUPE_SWITCH_FLOATING(dtype, T, {
      if (int32_labels)
        return std::unique_ptr<OpKernel>(new SparseSoftmaxCrossEntropyKernel<T, int32_t>(c));
      return std::unique_ptr<OpKernel>(new SparseSoftmaxCrossEntropyKernel<T, int64_t>(c));
    });
    return errors::Unimplemented("node '{}' ({}): no kernel for T = {}", c.name(),
                                 c.node().op_name(), dtype_name(dtype));
  };
}

// LRN and LRNGrad over the depth (last) dimension of a 4-D input, one row of depth values at
// a time: norm(j) = bias + alpha * sum of input(k)^2, k within depth_radius of j.
template <class T>
class LrnKernel : public OpKernel {
 public:
  explicit LrnKernel(const OpKernelConstruction& c)
      : OpKernel(c),
        radius_(c.attr<int64_t>("depth_radius")),
        bias_(static_cast<T>(c.attr<float>("bias"))),
        alpha_(static_cast<T>(c.attr<float>("alpha"))),
        beta_(static_cast<T>(c.attr<float>("beta"))),
        gradient_(c.node().op_name() == "LRNGrad") {}

  void compute(OpKernelContext& ctx) override {
    for (int i = 0; i < ctx.num_inputs(); ++i) {
      if (ctx.input(i).rank() != 4 || ctx.input(i).shape() != ctx.input(0).shape()) {
        ctx.fail_invalid("{} must be 4-dimensional{}, got shape {}", gradient_ ? "inputs" : "input",
                         gradient_ ? " and of one shape" : "", ctx.input(i).shape().to_string());
        return;
      }
    }
    if (radius_ < 0) {
      ctx.fail_invalid("depth_radius must be non-negative, got {}", radius_);
      return;
    }
    const Tensor& image = ctx.input(gradient_ ? 1 : 0);
    const int64_t depth = image.dim(3);
    const int64_t rows = depth == 0 ? 0 : image.num_elements() / depth;
    Tensor& out = ctx.allocate_output(0, image.shape());
    const T* in = image.data<T>();
    T* result = out.data<T>();
    if (gradient_) std::fill_n(result, out.num_elements(), T(0));
    for (int64_t row = 0; row < rows; ++row) {
      const T* x = in + row * depth;
      T* y = result + row * depth;
      for (int64_t j = 0; j < depth; ++j) {
        const int64_t begin = std::max<int64_t>(0, j - radius_);
        const int64_t end = std::min<int64_t>(depth, j + radius_ + 1);
        T norm = 0;
        for (int64_t k = begin; k < end; ++k)
          norm += x[k] * x[k];
        norm = bias_ + alpha_ * norm;
        const T scale = std::pow(norm, -beta_);
        if (!gradient_) {
          y[j] = x[j] * scale;
          continue;
        }
        // d out(j) / d in(k) = [k == j] * scale - 2 alpha beta in(k) out(j) / norm.
        const T dy = ctx.input(0).data<T>()[row * depth + j];
        const T out_j = ctx.input(2).data<T>()[row * depth + j];
        for (int64_t k = begin; k < end; ++k) {
          T d = T(-2) * alpha_ * beta_ * x[k] * out_j / norm;
          if (k == j) d += scale;
          y[k] += d * dy;
        }
      }
    }
  }

 private:
  int64_t radius_;
  T bias_, alpha_, beta_;
  bool gradient_;
};

}  // namespace

void register_nn_kernels(KernelRegistry& r) {
  must_add_kernel(r, "LRN", kCpu, floating_kernel<LrnKernel>());
  must_add_kernel(r, "LRNGrad", kCpu, floating_kernel<LrnKernel>());
  must_add_kernel(r, "BiasAdd", kCpu, numeric_kernel<BiasAddKernel>());
  must_add_kernel(r, "Softmax", kCpu, floating_kernel<SoftmaxKernel>());
  must_add_kernel(r, "SparseSoftmaxCrossEntropyWithLogits", kCpu, sparse_xent_factory());
}

}  // namespace troupe
