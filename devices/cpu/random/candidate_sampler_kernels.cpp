// CPU kernels of the candidate samplers of sampled losses (graph/ops/candidate_sampling_ops.hpp),
// as TensorFlow's RangeSampler family defines them, and ComputeAccidentalHits.
//
// A sampler draws num_sampled classes of [0, range_max) from its base distribution (with
// `unique`, until that many distinct ones came) and says how many times each sampled class and
// each true class is expected in a draw: p * num_sampled, or with `unique` 1 - (1 - p)^tries.
// The distributions:
//   Uniform          1 / range_max.
//   LogUniform       log((k + 2) / (k + 1)) / log(range_max + 1).
//   FixedUnigram     weights given (unigrams, or the last field of each line of a CSV vocabulary
//                    file), each raised to `distortion`, after num_reserved_ids classes of weight
//                    0; with num_shards, only the classes of `shard` (k % num_shards == shard),
//                    numbered in order; range_max must be their number.
//   LearnedUnigram   every class starts with weight 1 and gains 1 each time a step has it as a
//                    true class (after that step's draw); the weights are a resource of the
//                    node in the step's container, shared by its runs (and, as the random ops'
//                    generators, by the sessions of a server unless isolate_session_state
//                    gives each its own; TensorFlow's start afresh in each session), not saved
//                    in checkpoints.
// AllCandidateSampler returns 0 .. num_sampled - 1, each expected once.
// Draws use the node's Philox generator (seeded_generator.hpp): the same seeds, the same
// classes on every run and task (not TensorFlow's numbers: its generator differs).
#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <mutex>
#include <optional>
#include <span>
#include <unordered_map>
#include <unordered_set>

#include "troupe/devices/cpu/cpu_kernels.hpp"
#include "troupe/devices/cpu/random/distributions.hpp"
#include "troupe/devices/cpu/random/seeded_generator.hpp"

namespace troupe {
namespace {

using random::Philox;

// Whether `true_classes` is [batch_size, num_true]; otherwise the kernel fails, saying so.
bool check_true_classes(OpKernelContext& ctx, const Tensor& true_classes, int64_t num_true) {
  if (true_classes.rank() == 2 && true_classes.dim(1) == num_true) return true;
  ctx.fail_invalid("true_classes must be a matrix [batch_size, num_true = {}], got shape {}",
                   num_true, true_classes.shape().to_string());
  return false;
}

// A base distribution over [0, range): draws from a uniform double in [0, 1), and the
// probability of a class (0 outside the range).
class BaseDistribution {
 public:
  virtual ~BaseDistribution() = default;
  virtual int64_t sample(double u) const = 0;
  virtual double probability(int64_t value) const = 0;
};

class Uniform final : public BaseDistribution {
 public:
  explicit Uniform(int64_t range) : range_(range) {}
  int64_t sample(double u) const override {
    return std::min<int64_t>(static_cast<int64_t>(u * static_cast<double>(range_)), range_ - 1);
  }
  // As TensorFlow's, whatever the value (a true class may lie outside the range).
  double probability(int64_t) const override { return 1.0 / static_cast<double>(range_); }

 private:
  int64_t range_;
};

class LogUniform final : public BaseDistribution {
 public:
  explicit LogUniform(int64_t range)
      : range_(range), log_range_(std::log(static_cast<double>(range) + 1)) {}
  int64_t sample(double u) const override {
    const auto value = static_cast<int64_t>(std::exp(u * log_range_)) - 1;
    return std::clamp<int64_t>(value, 0, range_ - 1);
  }
  double probability(int64_t value) const override {
    return std::log((static_cast<double>(value) + 2.0) / (static_cast<double>(value) + 1.0)) /
           log_range_;
  }

 private:
  int64_t range_;
  double log_range_;
};

// Weights as a cumulative sum: a draw is a binary search.
class FixedWeights final : public BaseDistribution {
 public:
  explicit FixedWeights(std::vector<double> weights) : weights_(std::move(weights)) {
    cumulative_.reserve(weights_.size());
    double total = 0;
    for (double w : weights_)
      cumulative_.push_back(total += w);
    total_ = total;
  }
  double total() const { return total_; }
  int64_t sample(double u) const override {
    auto it = std::upper_bound(cumulative_.begin(), cumulative_.end(), u * total_);
    auto index = static_cast<int64_t>(it - cumulative_.begin());
    // u * total may round to the total itself: the last class of non-zero weight.
    while (index > 0 && (index >= static_cast<int64_t>(weights_.size()) || weights_[index] == 0))
      --index;
    return index;
  }
  double probability(int64_t value) const override {
    if (value < 0 || value >= static_cast<int64_t>(weights_.size())) return 0;
    return weights_[value] / total_;
  }

 private:
  std::vector<double> weights_;
  std::vector<double> cumulative_;
  double total_ = 0;
};

// The learned weights of one LearnedUnigramCandidateSampler node: a Fenwick tree of counts,
// so that a draw and an update each cost O(log range). A resource of the device.
class LearnedWeights final : public Resource, public BaseDistribution {
 public:
  LearnedWeights(std::string name, int64_t range)
      : name_(std::move(name)), tree_(range + 1, 0), counts_(range, 1) {
    for (int64_t i = 0; i < range; ++i)
      add_to_tree(i, 1);
    total_ = range;
  }
  std::string debug_name() const override { return "learned unigram weights '" + name_ + "'"; }

  std::mutex& mutex() { return mutex_; }
  int64_t sample(double u) const override {
    // The smallest class whose cumulative count exceeds u * total.
    auto target = static_cast<int64_t>(u * static_cast<double>(total_));
    int64_t position = 0;
    const auto size = static_cast<int64_t>(counts_.size());
    int64_t step = 1;
    while (step * 2 <= size)
      step *= 2;
    for (; step > 0; step /= 2) {
      if (position + step <= size && tree_[position + step] <= target) {
        position += step;
        target -= tree_[position];
      }
    }
    return std::min(position, size - 1);
  }
  double probability(int64_t value) const override {
    if (value < 0 || value >= static_cast<int64_t>(counts_.size())) return 0;
    return static_cast<double>(counts_[value]) / static_cast<double>(total_);
  }
  // Each class of `values` in the range gains 1 (as TensorFlow's, while the total fits an
  // int32).
  void update(std::span<const int64_t> values) {
    for (int64_t value : values) {
      if (value < 0 || value >= static_cast<int64_t>(counts_.size())) continue;
      if (total_ >= std::numeric_limits<int32_t>::max()) return;
      ++counts_[value];
      add_to_tree(value, 1);
      ++total_;
    }
  }

 private:
  void add_to_tree(int64_t index, int64_t delta) {
    for (int64_t i = index + 1; i < static_cast<int64_t>(tree_.size()); i += i & -i)
      tree_[i] += delta;
  }

  std::string name_;
  std::mutex mutex_;
  std::vector<int64_t> tree_;
  std::vector<int64_t> counts_;
  int64_t total_ = 0;
};

enum class Kind { kUniform, kLogUniform, kFixedUnigram, kLearnedUnigram };

// The samplers' shared kernel: checks, draws, expected counts.
template <Kind kKind>
class CandidateSamplerKernel : public OpKernel {
 public:
  explicit CandidateSamplerKernel(const OpKernelConstruction& c)
      : OpKernel(c),
        generator_(c),
        num_true_(c.attr<int64_t>("num_true")),
        num_sampled_(c.attr<int64_t>("num_sampled")),
        range_max_(c.attr<int64_t>("range_max")),
        unique_(c.attr<bool>("unique")) {
    if constexpr (kKind == Kind::kFixedUnigram) {
      vocab_file_ = c.attr<std::string>("vocab_file");
      distortion_ = c.attr<float>("distortion");
      num_reserved_ids_ = c.attr<int64_t>("num_reserved_ids");
      num_shards_ = c.attr<int64_t>("num_shards");
      shard_ = c.attr<int64_t>("shard");
      unigrams_ = c.attr<std::vector<float>>("unigrams");
    }
  }

  void compute(OpKernelContext& ctx) override {
    if (num_true_ < 1 || num_sampled_ < 1 || range_max_ < 1) {
      return ctx.fail_invalid("num_true ({}), num_sampled ({}) and range_max ({}) must be >= 1",
                              num_true_, num_sampled_, range_max_);
    }
    if (unique_ && num_sampled_ > range_max_) {
      return ctx.fail_invalid(
          "Sampler's range is too small: {} unique samples asked from a range of {}", num_sampled_,
          range_max_);
    }
    const Tensor& true_classes = ctx.input(0);
    if (!check_true_classes(ctx, true_classes, num_true_)) return;
    auto generator = generator_.get(ctx);
    if (generator == nullptr) return;
    std::span<const int64_t> true_values(true_classes.data<int64_t>(),
                                         static_cast<size_t>(true_classes.num_elements()));
    if constexpr (kKind == Kind::kLearnedUnigram) {
      auto weights = learned(ctx);
      if (weights == nullptr) return;
      std::lock_guard lock(weights->mutex());
      draw(ctx, *generator, *weights, true_classes);
      if (ctx.ok()) weights->update(true_values);
    } else if constexpr (kKind == Kind::kFixedUnigram) {
      if (!fixed_) {
        StatusOr<std::unique_ptr<FixedWeights>> loaded = load_fixed(ctx);
        if (!loaded.ok()) return ctx.set_status(loaded.status());
        fixed_ = std::move(loaded).value();
      }
      draw(ctx, *generator, *fixed_, true_classes);
    } else if constexpr (kKind == Kind::kLogUniform) {
      draw(ctx, *generator, LogUniform(range_max_), true_classes);
    } else {
      draw(ctx, *generator, Uniform(range_max_), true_classes);
    }
  }

 private:
  static constexpr uint64_t kBatch = 64;
  static constexpr int64_t kMaxTries = std::numeric_limits<int32_t>::max();

  void draw(OpKernelContext& ctx, SeededGenerator& generator, const BaseDistribution& base,
            const Tensor& true_classes) {
    Tensor& sampled = ctx.allocate_output(0, TensorShape{num_sampled_});
    Tensor& true_expected = ctx.allocate_output(1, true_classes.shape());
    Tensor& sampled_expected = ctx.allocate_output(2, TensorShape{num_sampled_});
    // A unique draw may take many tries: blocks are reserved as they are used, a batch at a
    // time (the next run's numbers start after them either way).
    std::optional<Philox> gen;
    uint64_t used = 0;
    auto uniform = [&]() {
      if (used % kBatch == 0) gen = generator.reserve(kBatch);
      ++used;
      Philox::Block block = gen->next();
      return random::uint64_to_double(block[0], block[1]);
    };
    int64_t tries = 0;
    std::unordered_set<int64_t> seen;
    for (int64_t i = 0; i < num_sampled_; ++i) {
      int64_t value;
      do {
        // As TensorFlow's, at most 2^31 - 1 tries; a cancelled step stops the search.
        if (tries == kMaxTries || (tries % kBatch == 0 && ctx.step().cancellation.is_cancelled())) {
          return ctx.set_status(
              tries == kMaxTries
                  ? errors::InvalidArgument(
                        "node '{}' ({}): {} unique samples of a range of {} not drawn in {} "
                        "tries (the rarest classes are too rare: sample fewer)",
                        ctx.node().name(), ctx.node().op_name(), num_sampled_, range_max_,
                        kMaxTries)
                  : ctx.step().cancellation.reason());
        }
        value = base.sample(uniform());
        ++tries;
      } while (unique_ && !seen.insert(value).second);
      sampled.data<int64_t>()[i] = value;
    }
    const bool rejected = unique_ && tries != num_sampled_;
    auto expected = [&](int64_t value) {
      const double p = base.probability(value);
      return static_cast<float>(rejected ? -std::expm1(static_cast<double>(tries) * std::log1p(-p))
                                         : p * static_cast<double>(num_sampled_));
    };
    for (int64_t i = 0; i < num_sampled_; ++i)
      sampled_expected.data<float>()[i] = expected(sampled.data<int64_t>()[i]);
    for (int64_t i = 0; i < true_classes.num_elements(); ++i)
      true_expected.data<float>()[i] = expected(true_classes.data<int64_t>()[i]);
  }

  std::shared_ptr<LearnedWeights> learned(OpKernelContext& ctx) const {
    // Per node and range: a graph of another range under the same name has counts of its own.
    const std::string key = fmt::format("_learned_unigram/{}/{}", node().name(), range_max_);
    auto found = ctx.device().resources().lookup_or_create<LearnedWeights>(
        ctx.step().container, key,
        [&]() -> StatusOr<std::shared_ptr<LearnedWeights>> {
          return std::make_shared<LearnedWeights>(node().name(), range_max_);
        },
        [](const LearnedWeights&) { return Status::OK(); });
    if (!found.ok()) {
      ctx.set_status(found.status());
      return nullptr;
    }
    return *found;
  }

  // The fixed weights, as TensorFlow's FixedUnigramSampler builds them.
  StatusOr<std::unique_ptr<FixedWeights>> load_fixed(OpKernelContext& ctx) const {
    if (num_shards_ < 1 || shard_ < 0 || shard_ >= num_shards_) {
      return errors::InvalidArgument("node '{}' ({}): shard {} of {} shards does not exist",
                                     node().name(), node().op_name(), shard_, num_shards_);
    }
    if (vocab_file_.empty() == unigrams_.empty()) {
      return errors::InvalidArgument("node '{}' ({}): give exactly one of vocab_file and unigrams",
                                     node().name(), node().op_name());
    }
    std::vector<double> weights;
    for (int64_t id = 0; id < num_reserved_ids_; ++id) {
      if (id % num_shards_ == shard_) weights.push_back(0);
    }
    // As TensorFlow's, vocabulary ids count on from the reserved weights kept.
    auto id = static_cast<int64_t>(weights.size());
    auto add = [&](double w) {
      if (id % num_shards_ == shard_) weights.push_back(std::pow(w, distortion_));
      ++id;
    };
    if (!vocab_file_.empty()) {
      std::ifstream in(vocab_file_);
      if (!in) {
        return errors::NotFound("node '{}' ({}): cannot open the vocabulary file '{}'",
                                node().name(), node().op_name(), vocab_file_);
      }
      std::string line;
      while (std::getline(in, line)) {
        if (line.empty()) continue;
        const std::string field = line.substr(line.rfind(',') + 1);
        char* end = nullptr;
        const double w = std::strtod(field.c_str(), &end);
        if (end == field.c_str() || w < 0) {
          return errors::InvalidArgument("node '{}' ({}): wrong vocabulary format at line: {}",
                                         node().name(), node().op_name(), line);
        }
        add(w);
      }
    } else {
      for (float w : unigrams_) {
        if (w < 0) {
          return errors::InvalidArgument("node '{}' ({}): unigram weights must be >= 0, got {}",
                                         node().name(), node().op_name(), w);
        }
        add(w);
      }
    }
    if (static_cast<int64_t>(weights.size()) != range_max_) {
      return errors::InvalidArgument(
          "node '{}' ({}): range is {} must be equal to weights size {} (num_reserved_ids plus "
          "the vocabulary's entries, of this shard)",
          node().name(), node().op_name(), range_max_, weights.size());
    }
    auto fixed = std::make_unique<FixedWeights>(std::move(weights));
    if (fixed->total() <= 0) {
      return errors::InvalidArgument("node '{}' ({}): the unigram weights sum to 0", node().name(),
                                     node().op_name());
    }
    return fixed;
  }

  GeneratorHandle generator_;
  int64_t num_true_, num_sampled_, range_max_;
  bool unique_;
  std::string vocab_file_;
  float distortion_ = 1;
  int64_t num_reserved_ids_ = 0, num_shards_ = 1, shard_ = 0;
  std::vector<float> unigrams_;
  std::unique_ptr<FixedWeights> fixed_;  // loaded at the first run
};

// AllCandidateSampler: every class of [0, num_sampled), each expected once.
class AllCandidateSamplerKernel : public OpKernel {
 public:
  explicit AllCandidateSamplerKernel(const OpKernelConstruction& c)
      : OpKernel(c),
        num_true_(c.attr<int64_t>("num_true")),
        num_sampled_(c.attr<int64_t>("num_sampled")) {}

  void compute(OpKernelContext& ctx) override {
    if (num_true_ < 1 || num_sampled_ < 1) {
      return ctx.fail_invalid("num_true ({}) and num_sampled ({}) must be >= 1", num_true_,
                              num_sampled_);
    }
    const Tensor& true_classes = ctx.input(0);
    if (!check_true_classes(ctx, true_classes, num_true_)) return;
    Tensor& sampled = ctx.allocate_output(0, TensorShape{num_sampled_});
    Tensor& true_expected = ctx.allocate_output(1, true_classes.shape());
    Tensor& sampled_expected = ctx.allocate_output(2, TensorShape{num_sampled_});
    for (int64_t i = 0; i < num_sampled_; ++i) {
      sampled.data<int64_t>()[i] = i;
      sampled_expected.data<float>()[i] = 1.0f;
    }
    for (int64_t i = 0; i < true_classes.num_elements(); ++i)
      true_expected.data<float>()[i] = 1.0f;
  }

 private:
  int64_t num_true_, num_sampled_;
};

// ComputeAccidentalHits: for each row i and each of its true classes that was sampled, (i, the
// last place it was sampled, -FLT_MAX), rows in order, a row's true classes in order.
class ComputeAccidentalHitsKernel : public OpKernel {
 public:
  explicit ComputeAccidentalHitsKernel(const OpKernelConstruction& c)
      : OpKernel(c), num_true_(c.attr<int64_t>("num_true")) {}

  void compute(OpKernelContext& ctx) override {
    const Tensor& true_classes = ctx.input(0);
    const Tensor& sampled = ctx.input(1);
    if (!check_true_classes(ctx, true_classes, num_true_)) return;
    if (sampled.rank() != 1) {
      return ctx.fail_invalid("sampled_candidates must be a vector, got shape {}",
                              sampled.shape().to_string());
    }
    std::unordered_map<int64_t, int64_t> last_place;
    for (int64_t j = 0; j < sampled.num_elements(); ++j)
      last_place[sampled.data<int64_t>()[j]] = j;
    std::vector<int32_t> rows;
    std::vector<int64_t> places;
    const int64_t batch = true_classes.dim(0);
    for (int64_t i = 0; i < batch; ++i) {
      for (int64_t t = 0; t < num_true_; ++t) {
        auto it = last_place.find(true_classes.data<int64_t>()[i * num_true_ + t]);
        if (it == last_place.end()) continue;
        rows.push_back(static_cast<int32_t>(i));
        places.push_back(it->second);
      }
    }
    const auto hits = static_cast<int64_t>(rows.size());
    Tensor& indices = ctx.allocate_output(0, TensorShape{hits});
    Tensor& ids = ctx.allocate_output(1, TensorShape{hits});
    Tensor& weights = ctx.allocate_output(2, TensorShape{hits});
    std::copy(rows.begin(), rows.end(), indices.data<int32_t>());
    std::copy(places.begin(), places.end(), ids.data<int64_t>());
    std::fill_n(weights.data<float>(), hits, -std::numeric_limits<float>::max());
  }

 private:
  int64_t num_true_;
};

}  // namespace

void register_candidate_sampler_kernels(KernelRegistry& r) {
  must_add_kernel(r, "UniformCandidateSampler", kCpu,
                  simple_kernel<CandidateSamplerKernel<Kind::kUniform>>());
  must_add_kernel(r, "LogUniformCandidateSampler", kCpu,
                  simple_kernel<CandidateSamplerKernel<Kind::kLogUniform>>());
  must_add_kernel(r, "FixedUnigramCandidateSampler", kCpu,
                  simple_kernel<CandidateSamplerKernel<Kind::kFixedUnigram>>());
  must_add_kernel(r, "LearnedUnigramCandidateSampler", kCpu,
                  simple_kernel<CandidateSamplerKernel<Kind::kLearnedUnigram>>());
  must_add_kernel(r, "AllCandidateSampler", kCpu, simple_kernel<AllCandidateSamplerKernel>());
  must_add_kernel(r, "ComputeAccidentalHits", kCpu, simple_kernel<ComputeAccidentalHitsKernel>());
}

}  // namespace troupe
