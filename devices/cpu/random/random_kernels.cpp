// CPU kernels of the random ops (graph/ops/random_ops.hpp): RandomUniform,
// RandomStandardNormal, TruncatedNormal, RandomUniformInt, RandomShuffle and Multinomial (the
// candidate samplers of sampled losses are in candidate_sampler_kernels.cpp).
//
// Each op node has a Philox generator seeded from its (seed, seed2) attributes, as
// TensorFlow's: both 0 draws a seed from the system; otherwise every process that builds the
// same graph draws the same numbers. The generator is a resource of the device (in the step's
// container), so every run of the node draws new numbers, whichever of the session's runs
// (and so kernels) it is part of, as TensorFlow shares a stateful kernel across a session's
// runs. A step reserves the counter blocks it needs and then fills its output in groups
// (distributions.hpp), threads taking ranges of groups by skipping to them, so the numbers do
// not depend on how the work was split.
#include <algorithm>
#include <limits>
#include <mutex>
#include <optional>
#include <random>
#include <unordered_set>

#include "troupe/devices/cpu/cpu_kernels.hpp"
#include "troupe/devices/cpu/parallel.hpp"
#include "troupe/devices/cpu/random/distributions.hpp"
#include "troupe/devices/cpu/random/seeded_generator.hpp"

namespace troupe {
namespace {

using random::Philox;

// The shape input of a random op (a vector of non-negative sizes), or nullopt after failing.
std::optional<TensorShape> shape_input(OpKernelContext& ctx, int i) {
  const Tensor& t = ctx.input(i);
  if (t.shape().rank() != 1) {
    ctx.fail_invalid("shape must be a vector, got shape {}", t.shape().to_string());
    return std::nullopt;
  }
  std::vector<int64_t> dims;
  for (int64_t k = 0; k < t.num_elements(); ++k) {
    int64_t d = t.dtype() == DataType::kInt32 ? t.data<int32_t>()[k] : t.data<int64_t>()[k];
    if (d < 0) {
      ctx.fail_invalid("shape has a negative dimension {}", d);
      return std::nullopt;
    }
    dims.push_back(d);
  }
  return TensorShape(dims);
}

// Fills `out` (n values) group by group with `group(gen, values)`, each group using
// `blocks_per_group` blocks from `start`, split over the device's threads.
template <class T, class Group>
void fill_groups(OpKernelContext& ctx, const Philox& start, T* out, int64_t n,
                 uint64_t blocks_per_group, Group group) {
  constexpr int kSize = random::kGroupSize<T>;
  const int64_t groups = (n + kSize - 1) / kSize;
  parallel_for(ctx.device(), groups, 16.0 * kSize, [&](int64_t begin, int64_t end) {
    Philox gen = start;
    for (int64_t g = begin; g < end; ++g) {
      Philox at = gen;
      at.skip(static_cast<uint64_t>(g) * blocks_per_group);
      T values[kSize];
      group(at, values);
      int64_t first = g * kSize;
      std::copy_n(values, std::min<int64_t>(kSize, n - first), out + first);
    }
  });
}

enum class Distribution { kUniform, kNormal, kTruncatedNormal };

template <Distribution kDistribution>
class RandomFloatKernel : public OpKernel {
 public:
  explicit RandomFloatKernel(const OpKernelConstruction& c) : OpKernel(c), generator_(c) {}

  void compute(OpKernelContext& ctx) override {
    auto shape = shape_input(ctx, 0);
    if (!shape) return;
    Tensor& out = ctx.allocate_output(0, *shape);
    TROUPE_SWITCH_FLOATING(out.dtype(), T, fill<T>(ctx, out));
  }

 private:
  template <class T>
  void fill(OpKernelContext& ctx, Tensor& out) {
    const int64_t n = out.num_elements();
    constexpr int kSize = random::kGroupSize<T>;
    const uint64_t per_group =
        kDistribution == Distribution::kTruncatedNormal ? random::kTruncatedBlocksPerGroup : 1;
    const uint64_t groups = static_cast<uint64_t>((n + kSize - 1) / kSize);
    auto generator = generator_.get(ctx);
    if (generator == nullptr) return;
    Philox start = generator->reserve(groups * per_group);
    fill_groups<T>(ctx, start, out.data<T>(), n, per_group, [](Philox& gen, T* values) {
      if constexpr (kDistribution == Distribution::kUniform) {
        random::uniform_group(gen, values);
      } else if constexpr (kDistribution == Distribution::kNormal) {
        random::normal_group(gen, values);
      } else {
        random::truncated_normal_group(gen, values);
      }
    });
  }

  GeneratorHandle generator_;
};

class RandomUniformIntKernel : public OpKernel {
 public:
  explicit RandomUniformIntKernel(const OpKernelConstruction& c) : OpKernel(c), generator_(c) {}

  void compute(OpKernelContext& ctx) override {
    auto shape = shape_input(ctx, 0);
    if (!shape) return;
    const Tensor& lo = ctx.input(1);
    const Tensor& hi = ctx.input(2);
    if (lo.num_elements() != 1 || hi.num_elements() != 1) {
      ctx.fail_invalid("minval and maxval must be scalars, got shapes {} and {}",
                       lo.shape().to_string(), hi.shape().to_string());
      return;
    }
    Tensor& out = ctx.allocate_output(0, *shape);
    if (out.dtype() == DataType::kInt32) {
      fill<int32_t>(ctx, out, lo.scalar<int32_t>(), hi.scalar<int32_t>());
    } else {
      fill<int64_t>(ctx, out, lo.scalar<int64_t>(), hi.scalar<int64_t>());
    }
  }

 private:
  template <class T>
  void fill(OpKernelContext& ctx, Tensor& out, T lo, T hi) {
    const int64_t n = out.num_elements();
    if (n == 0) return;
    if (lo >= hi) {
      ctx.fail_invalid("Need minval < maxval: {} >= {}", lo, hi);
      return;
    }
    using Unsigned = std::make_unsigned_t<T>;
    const Unsigned range = static_cast<Unsigned>(hi) - static_cast<Unsigned>(lo);
    constexpr int kSize = random::kGroupSize<T>;
    auto generator = generator_.get(ctx);
    if (generator == nullptr) return;
    Philox start = generator->reserve(static_cast<uint64_t>((n + kSize - 1) / kSize));
    fill_groups<T>(ctx, start, out.data<T>(), n, 1, [&](Philox& gen, T* values) {
      Philox::Block b = gen.next();
      for (int i = 0; i < kSize; ++i) {
        Unsigned bits = sizeof(T) == 4
                            ? static_cast<Unsigned>(b[i])
                            : static_cast<Unsigned>((uint64_t{b[2 * i]} << 32) | b[2 * i + 1]);
        values[i] = static_cast<T>(static_cast<Unsigned>(lo) + bits % range);
      }
    });
  }

  GeneratorHandle generator_;
};

// A uniform integer in [0, bound) from a fresh block.
uint64_t draw_below(Philox& gen, uint64_t bound) {
  Philox::Block b = gen.next();
  return ((uint64_t{b[0]} << 32) | b[1]) % bound;
}

class RandomShuffleKernel : public OpKernel {
 public:
  explicit RandomShuffleKernel(const OpKernelConstruction& c) : OpKernel(c), generator_(c) {}

  void compute(OpKernelContext& ctx) override {
    const Tensor& value = ctx.input(0);
    if (value.shape().rank() == 0 || value.shape().dim(0) <= 1) {
      ctx.set_output(0, value);
      return;
    }
    const int64_t rows = value.shape().dim(0);
    const int64_t row_size = value.num_elements() / rows;
    std::vector<int64_t> order(static_cast<size_t>(rows));
    for (int64_t i = 0; i < rows; ++i)
      order[i] = i;
    auto generator = generator_.get(ctx);
    if (generator == nullptr) return;
    Philox gen = generator->reserve(static_cast<uint64_t>(rows));
    for (int64_t i = rows - 1; i > 0; --i)  // Fisher-Yates
      std::swap(order[i], order[draw_below(gen, static_cast<uint64_t>(i) + 1)]);
    Tensor& out = ctx.allocate_output(0, value.shape());
    TROUPE_SWITCH_ALL(value.dtype(), T, {
      for (int64_t i = 0; i < rows; ++i) {
        std::copy_n(value.data<T>() + order[i] * row_size, row_size, out.data<T>() + i * row_size);
      }
    });
  }

 private:
  GeneratorHandle generator_;
};

class MultinomialKernel : public OpKernel {
 public:
  explicit MultinomialKernel(const OpKernelConstruction& c) : OpKernel(c), generator_(c) {}

  void compute(OpKernelContext& ctx) override {
    const Tensor& logits = ctx.input(0);
    const Tensor& samples = ctx.input(1);
    if (logits.shape().rank() != 2) {
      ctx.fail_invalid("logits should be a matrix, got shape {}", logits.shape().to_string());
      return;
    }
    if (samples.num_elements() != 1 || samples.scalar<int32_t>() < 0) {
      ctx.fail_invalid("num_samples should be a non-negative scalar");
      return;
    }
    const int64_t batch = logits.shape().dim(0), classes = logits.shape().dim(1);
    const int64_t draws = samples.scalar<int32_t>();
    if (classes == 0 && draws > 0) {
      ctx.fail_invalid("num_classes should be positive, got 0");
      return;
    }
    Tensor& out = ctx.allocate_output(0, TensorShape{batch, draws});
    auto generator = generator_.get(ctx);
    if (generator == nullptr) return;
    Philox gen = generator->reserve(static_cast<uint64_t>(batch * draws));
    std::vector<double> cumulative(static_cast<size_t>(classes));
    for (int64_t b = 0; b < batch; ++b) {
      double max_logit = -std::numeric_limits<double>::infinity();
      for (int64_t c = 0; c < classes; ++c)
        max_logit = std::max(max_logit, element(logits, b * classes + c));
      double total = 0;
      for (int64_t c = 0; c < classes; ++c) {
        double l = element(logits, b * classes + c);
        total += std::isfinite(l) ? std::exp(l - max_logit) : 0.0;
        cumulative[c] = total;
      }
      for (int64_t d = 0; d < draws; ++d) {
        Philox::Block block = gen.next();
        double u = random::uint64_to_double(block[0], block[1]) * total;
        auto it = std::upper_bound(cumulative.begin(), cumulative.end(), u);
        int64_t chosen = std::min<int64_t>(it - cumulative.begin(), classes - 1);
        if (out.dtype() == DataType::kInt32) {
          out.data<int32_t>()[b * draws + d] = static_cast<int32_t>(chosen);
        } else {
          out.data<int64_t>()[b * draws + d] = chosen;
        }
      }
    }
  }

 private:
  static double element(const Tensor& t, int64_t i) {
    return t.dtype() == DataType::kFloat ? t.data<float>()[i] : t.data<double>()[i];
  }

  GeneratorHandle generator_;
};

}  // namespace

void register_random_kernels(KernelRegistry& r) {
  must_add_kernel(r, "RandomUniform", kCpu,
                  simple_kernel<RandomFloatKernel<Distribution::kUniform>>());
  must_add_kernel(r, "RandomStandardNormal", kCpu,
                  simple_kernel<RandomFloatKernel<Distribution::kNormal>>());
  must_add_kernel(r, "TruncatedNormal", kCpu,
                  simple_kernel<RandomFloatKernel<Distribution::kTruncatedNormal>>());
  must_add_kernel(r, "RandomUniformInt", kCpu, simple_kernel<RandomUniformIntKernel>());
  must_add_kernel(r, "RandomShuffle", kCpu, simple_kernel<RandomShuffleKernel>());
  must_add_kernel(r, "Multinomial", kCpu, simple_kernel<MultinomialKernel>());
}

}  // namespace troupe
