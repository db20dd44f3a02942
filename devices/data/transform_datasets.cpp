// Datasets made from other datasets, with TensorFlow 1.x's semantics:
//   BatchDatasetV2   stacks batch_size consecutive elements (the last batch may be smaller,
//                    unless drop_remainder); components must have one shape across a batch
//   RepeatDataset    count passes over the input (-1: forever; an empty pass ends it)
//   TakeDataset      the first count elements (-1: all);  SkipDataset: all but the first count
//   ShardDataset     elements index, index + num_shards, ...
//   ShuffleDataset   a uniformly random pick from a buffer of buffer_size elements, refilled
//                    from the input; seeded by (seed, seed2) (both 0: from the system), and
//                    with reshuffle_each_iteration every new iterator draws another order
//   ZipDataset       elements of both inputs side by side, until either ends
//   ConcatenateDataset  the input's elements, then the other's (same dtypes)
//   PaddedBatchDatasetV2  as Batch, each component padded (with its padding value) to its
//                    padded shape, whose -1 dimensions take the batch's largest
//   CacheDataset     the input's elements, read once: the first complete pass is kept in
//                    memory and later passes replay it (with a file name, in files:
//                    devices/data/file_cache.hpp)
//   PrefetchDataset  a thread of its own reads up to buffer_size elements ahead
#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <random>
#include <thread>

#include "troupe/devices/cpu/array_layout.hpp"
#include "troupe/devices/cpu/random/philox.hpp"
#include "troupe/devices/data/dataset_kernel.hpp"
#include "troupe/devices/data/file_cache.hpp"
#include "troupe/devices/data/prefetch_iterator.hpp"

namespace troupe::data {
namespace {

// A dataset over one input dataset; `Derived::Iterator` walks it.
class UnaryDataset : public DatasetBase {
 public:
  UnaryDataset(std::string node, std::shared_ptr<const DatasetBase> input)
      : DatasetBase(std::move(node), input->output_types()), input_(std::move(input)) {}

 protected:
  std::shared_ptr<const DatasetBase> input_;
};

// Up to `size` elements of `input` into *batch; *end when none came, or fewer than `size`
// and `drop_remainder` (Batch and PaddedBatch alike).
Status read_batch(IteratorBase& input, int64_t size, bool drop_remainder,
                  std::vector<Element>* batch, bool* end) {
  batch->clear();
  while (static_cast<int64_t>(batch->size()) < size) {
    Element element;
    bool input_end = false;
    TROUPE_RETURN_IF_ERROR(input.get_next(&element, &input_end));
    if (input_end) break;
    batch->push_back(std::move(element));
  }
  *end = batch->empty() || (drop_remainder && static_cast<int64_t>(batch->size()) < size);
  return Status::OK();
}

// ---- Batch ------------------------------------------------------------------------------

class BatchDataset : public UnaryDataset {
 public:
  BatchDataset(std::string node, std::shared_ptr<const DatasetBase> input, int64_t batch_size,
               bool drop_remainder)
      : UnaryDataset(std::move(node), std::move(input)),
        batch_size_(batch_size),
        drop_remainder_(drop_remainder) {}

  std::unique_ptr<IteratorBase> make_iterator() const override {
    return std::make_unique<Iterator>(self<BatchDataset>());
  }

 private:
  class Iterator : public IteratorBase {
   public:
    explicit Iterator(std::shared_ptr<const BatchDataset> dataset)
        : dataset_(std::move(dataset)), input_(dataset_->input_->make_iterator()) {}

    Status get_next(Element* out, bool* end) override {
      std::vector<Element> batch;
      TROUPE_RETURN_IF_ERROR(
          read_batch(*input_, dataset_->batch_size_, dataset_->drop_remainder_, &batch, end));
      if (*end) return Status::OK();
      return stack(batch, out);
    }

   private:
    Status stack(const std::vector<Element>& batch, Element* out) const {
      out->clear();
      for (size_t c = 0; c < batch[0].size(); ++c) {
        const Tensor& first = batch[0][c];
        for (size_t i = 1; i < batch.size(); ++i) {
          if (batch[i][c].shape() != first.shape()) {
            return errors::InvalidArgument(
                "{}: Cannot batch tensors with different shapes in component {}. First element "
                "had shape {} and element {} had shape {}",
                dataset_->node(), c, first.shape().to_string(), i, batch[i][c].shape().to_string());
          }
        }
        std::vector<int64_t> dims{static_cast<int64_t>(batch.size())};
        dims.insert(dims.end(), first.shape().dims().begin(), first.shape().dims().end());
        Tensor stacked(first.dtype(), TensorShape(dims));
        int64_t size = first.num_elements();
        for (size_t i = 0; i < batch.size() && size > 0; ++i) {
          strided_copy(batch[i][c], {0, {1}}, stacked, {static_cast<int64_t>(i) * size, {1}},
                       {size});
        }
        out->push_back(std::move(stacked));
      }
      return Status::OK();
    }

    std::shared_ptr<const BatchDataset> dataset_;
    std::unique_ptr<IteratorBase> input_;
  };

  int64_t batch_size_;
  bool drop_remainder_;
};

class BatchDatasetKernel : public DatasetOpKernel {
 public:
  using DatasetOpKernel::DatasetOpKernel;

 protected:
  StatusOr<std::shared_ptr<const DatasetBase>> make_dataset(OpKernelContext& ctx) override {
    TROUPE_ASSIGN_OR_RETURN(auto input, dataset_input(ctx, 0));
    TROUPE_ASSIGN_OR_RETURN(int64_t batch_size, scalar_input<int64_t>(ctx, 1, "batch_size"));
    TROUPE_ASSIGN_OR_RETURN(bool drop, scalar_input<bool>(ctx, 2, "drop_remainder"));
    if (batch_size <= 0)
      return invalid(ctx, "batch_size must be greater than zero, got {}", batch_size);
    return new_dataset<BatchDataset>(node().name(), std::move(input), batch_size, drop);
  }
};

// ---- PaddedBatch --------------------------------------------------------------------------

class PaddedBatchDataset : public UnaryDataset {
 public:
  PaddedBatchDataset(std::string node, std::shared_ptr<const DatasetBase> input, int64_t batch_size,
                     std::vector<std::vector<int64_t>> padded_shapes, Element padding_values,
                     bool drop_remainder)
      : UnaryDataset(std::move(node), std::move(input)),
        batch_size_(batch_size),
        padded_shapes_(std::move(padded_shapes)),
        padding_values_(std::move(padding_values)),
        drop_remainder_(drop_remainder) {}

  std::unique_ptr<IteratorBase> make_iterator() const override {
    return std::make_unique<Iterator>(self<PaddedBatchDataset>());
  }

 private:
  class Iterator : public IteratorBase {
   public:
    explicit Iterator(std::shared_ptr<const PaddedBatchDataset> dataset)
        : dataset_(std::move(dataset)), input_(dataset_->input_->make_iterator()) {}

    Status get_next(Element* out, bool* end) override {
      const PaddedBatchDataset& d = *dataset_;
      std::vector<Element> batch;
      TROUPE_RETURN_IF_ERROR(read_batch(*input_, d.batch_size_, d.drop_remainder_, &batch, end));
      if (*end) return Status::OK();
      out->clear();
      for (size_t c = 0; c < d.padded_shapes_.size(); ++c) {
        TROUPE_ASSIGN_OR_RETURN(Tensor padded, pad_component(batch, c));
        out->push_back(std::move(padded));
      }
      return Status::OK();
    }

   private:
    StatusOr<Tensor> pad_component(const std::vector<Element>& batch, size_t c) const {
      const PaddedBatchDataset& d = *dataset_;
      std::vector<int64_t> shape = d.padded_shapes_[c];
      for (size_t i = 0; i < batch.size(); ++i) {
        const Tensor& t = batch[i][c];
        if (t.rank() != static_cast<int>(shape.size())) {
          return errors::InvalidArgument(
              "{}: component {} of element {} has shape {}, of another rank than its padded "
              "shape",
              d.node(), c, i, t.shape().to_string());
        }
      }
      for (size_t k = 0; k < shape.size(); ++k) {
        int64_t largest = 0;
        for (const Element& e : batch)
          largest = std::max(largest, e[c].dim(static_cast<int>(k)));
        if (shape[k] < 0) {
          shape[k] = largest;
        } else if (largest > shape[k]) {
          return errors::InvalidArgument(
              "{}: component {} has dimension {} of size {}, larger than its padded shape's {}",
              d.node(), c, k, largest, shape[k]);
        }
      }
      std::vector<int64_t> dims{static_cast<int64_t>(batch.size())};
      dims.insert(dims.end(), shape.begin(), shape.end());
      Tensor padded(batch[0][c].dtype(), TensorShape(dims));
      fill_with(padded, &d.padding_values_[c]);
      std::vector<int64_t> to_steps = row_major_strides(dims);
      for (size_t i = 0; i < batch.size(); ++i) {
        const Tensor& t = batch[i][c];
        if (t.num_elements() == 0) continue;
        StridedView to{static_cast<int64_t>(i) * to_steps[0],
                       std::vector<int64_t>(to_steps.begin() + 1, to_steps.end())};
        strided_copy(t, dense_view(t.shape().dims()), padded, to, t.shape().dims());
      }
      return padded;
    }

    std::shared_ptr<const PaddedBatchDataset> dataset_;
    std::unique_ptr<IteratorBase> input_;
  };

  int64_t batch_size_;
  std::vector<std::vector<int64_t>> padded_shapes_;
  Element padding_values_;
  bool drop_remainder_;
};

class PaddedBatchDatasetKernel : public DatasetOpKernel {
 public:
  using DatasetOpKernel::DatasetOpKernel;

 protected:
  StatusOr<std::shared_ptr<const DatasetBase>> make_dataset(OpKernelContext& ctx) override {
    TROUPE_ASSIGN_OR_RETURN(auto input, dataset_input(ctx, 0));
    TROUPE_ASSIGN_OR_RETURN(int64_t batch_size, scalar_input<int64_t>(ctx, 1, "batch_size"));
    if (batch_size <= 0) {
      return invalid(ctx, "batch_size must be greater than zero, got {}", batch_size);
    }
    const int n = static_cast<int>(input->output_types().size());
    if (ctx.num_inputs() != 2 + 2 * n + 1) {
      return invalid(ctx, "{} padded shapes and values for elements of {} components",
                     (ctx.num_inputs() - 3) / 2, n);
    }
    std::vector<std::vector<int64_t>> shapes;
    Element values;
    for (int c = 0; c < n; ++c) {
      const Tensor& shape = ctx.input(2 + c);
      if (shape.dtype() != DataType::kInt64 || shape.rank() != 1) {
        return invalid(ctx, "padded shape {} must be an int64 vector", c);
      }
      shapes.push_back(shape.to_vector<int64_t>());
      const Tensor& value = ctx.input(2 + n + c);
      if (value.rank() != 0 || value.dtype() != input->output_types()[c]) {
        return invalid(ctx, "padding value {} must be a {} scalar, got {} of shape {}", c,
                       dtype_name(input->output_types()[c]), dtype_name(value.dtype()),
                       value.shape().to_string());
      }
      values.push_back(value);
    }
    TROUPE_ASSIGN_OR_RETURN(bool drop, scalar_input<bool>(ctx, 2 + 2 * n, "drop_remainder"));
    return new_dataset<PaddedBatchDataset>(node().name(), std::move(input), batch_size,
                                           std::move(shapes), std::move(values), drop);
  }
};

// ---- Cache --------------------------------------------------------------------------------

class CacheDataset : public UnaryDataset {
 public:
  using UnaryDataset::UnaryDataset;

  std::unique_ptr<IteratorBase> make_iterator() const override {
    std::lock_guard lock(mutex_);
    if (cache_) return std::make_unique<Replay>(self<CacheDataset>(), cache_);
    return std::make_unique<Fill>(self<CacheDataset>());
  }

 private:
  using Cache = std::shared_ptr<const std::vector<Element>>;

  // The first passes read the input and offer what they read once they reach its end.
  class Fill : public IteratorBase {
   public:
    explicit Fill(std::shared_ptr<const CacheDataset> dataset)
        : dataset_(std::move(dataset)), input_(dataset_->input_->make_iterator()) {}

    Status get_next(Element* out, bool* end) override {
      TROUPE_RETURN_IF_ERROR(input_->get_next(out, end));
      if (!*end) {
        read_.push_back(*out);  // tensors are shared, not copied
      } else if (!offered_) {
        offered_ = true;
        std::lock_guard lock(dataset_->mutex_);
        if (!dataset_->cache_) {
          dataset_->cache_ = std::make_shared<const std::vector<Element>>(std::move(read_));
        }
      }
      return Status::OK();
    }

   private:
    std::shared_ptr<const CacheDataset> dataset_;
    std::unique_ptr<IteratorBase> input_;
    std::vector<Element> read_;
    bool offered_ = false;
  };

  class Replay : public IteratorBase {
   public:
    Replay(std::shared_ptr<const CacheDataset> dataset, Cache cache)
        : dataset_(std::move(dataset)), cache_(std::move(cache)) {}
    Status get_next(Element* out, bool* end) override {
      *end = next_ >= cache_->size();
      if (!*end) *out = (*cache_)[next_++];
      return Status::OK();
    }

   private:
    std::shared_ptr<const CacheDataset> dataset_;
    Cache cache_;
    size_t next_ = 0;
  };

  mutable std::mutex mutex_;
  mutable Cache cache_;  // set by the first pass that reaches the end
};

class CacheDatasetKernel : public DatasetOpKernel {
 public:
  using DatasetOpKernel::DatasetOpKernel;

 protected:
  StatusOr<std::shared_ptr<const DatasetBase>> make_dataset(OpKernelContext& ctx) override {
    TROUPE_ASSIGN_OR_RETURN(auto input, dataset_input(ctx, 0));
    TROUPE_ASSIGN_OR_RETURN(std::string filename, scalar_input<std::string>(ctx, 1, "filename"));
    if (!filename.empty()) {
      return make_file_cache_dataset(node().name(), std::move(input), std::move(filename));
    }
    return new_dataset<CacheDataset>(node().name(), std::move(input));
  }
};

// ---- Repeat, Take, Skip, Shard ------------------------------------------------------------

class RepeatDataset : public UnaryDataset {
 public:
  RepeatDataset(std::string node, std::shared_ptr<const DatasetBase> input, int64_t count)
      : UnaryDataset(std::move(node), std::move(input)), count_(count) {}

  std::unique_ptr<IteratorBase> make_iterator() const override {
    return std::make_unique<Iterator>(self<RepeatDataset>());
  }

 private:
  class Iterator : public IteratorBase {
   public:
    explicit Iterator(std::shared_ptr<const RepeatDataset> dataset)
        : dataset_(std::move(dataset)) {}

    Status get_next(Element* out, bool* end) override {
      for (;;) {
        if (input_ == nullptr) {
          if (dataset_->count_ >= 0 && passes_ >= dataset_->count_) break;
          input_ = dataset_->input_->make_iterator();
          ++passes_;
          pass_was_empty_ = true;
        }
        TROUPE_RETURN_IF_ERROR(input_->get_next(out, end));
        if (!*end) {
          pass_was_empty_ = false;
          return Status::OK();
        }
        input_.reset();
        if (pass_was_empty_) break;  // an empty input repeated is empty, not endless
      }
      *end = true;
      return Status::OK();
    }

   private:
    std::shared_ptr<const RepeatDataset> dataset_;
    std::unique_ptr<IteratorBase> input_;
    int64_t passes_ = 0;
    bool pass_was_empty_ = false;
  };

  int64_t count_;
};

// Take (keep the first `count`), Skip (drop them) and Shard (keep every num_shards-th).
enum class Selection { kTake, kSkip, kShard };

class SelectDataset : public UnaryDataset {
 public:
  SelectDataset(std::string node, std::shared_ptr<const DatasetBase> input, Selection kind,
                int64_t count, int64_t index)
      : UnaryDataset(std::move(node), std::move(input)),
        kind_(kind),
        count_(count),
        index_(index) {}

  std::unique_ptr<IteratorBase> make_iterator() const override {
    return std::make_unique<Iterator>(self<SelectDataset>());
  }

 private:
  class Iterator : public IteratorBase {
   public:
    explicit Iterator(std::shared_ptr<const SelectDataset> dataset)
        : dataset_(std::move(dataset)), input_(dataset_->input_->make_iterator()) {}

    Status get_next(Element* out, bool* end) override {
      const SelectDataset& d = *dataset_;
      if (d.kind_ == Selection::kTake && d.count_ >= 0 && seen_ >= d.count_) {
        *end = true;
        return Status::OK();
      }
      for (;;) {
        TROUPE_RETURN_IF_ERROR(input_->get_next(out, end));
        if (*end) return Status::OK();
        int64_t position = seen_++;
        switch (d.kind_) {
          case Selection::kTake:
            return Status::OK();
          case Selection::kSkip:
            if (d.count_ >= 0 && position >= d.count_) return Status::OK();
            break;
          case Selection::kShard:
            if (position % d.count_ == d.index_) return Status::OK();
            break;
        }
      }
    }

   private:
    std::shared_ptr<const SelectDataset> dataset_;
    std::unique_ptr<IteratorBase> input_;
    int64_t seen_ = 0;
  };

  Selection kind_;
  int64_t count_;  // num_shards for a shard
  int64_t index_;
};

class CountDatasetKernel : public DatasetOpKernel {
 public:
  CountDatasetKernel(const OpKernelConstruction& c, std::string_view op)
      : DatasetOpKernel(c), op_(op) {}

 protected:
  StatusOr<std::shared_ptr<const DatasetBase>> make_dataset(OpKernelContext& ctx) override {
    TROUPE_ASSIGN_OR_RETURN(auto input, dataset_input(ctx, 0));
    if (op_ == "ShardDataset") {
      TROUPE_ASSIGN_OR_RETURN(int64_t shards, scalar_input<int64_t>(ctx, 1, "num_shards"));
      TROUPE_ASSIGN_OR_RETURN(int64_t index, scalar_input<int64_t>(ctx, 2, "index"));
      if (shards <= 0) return invalid(ctx, "num_shards must be greater than zero, got {}", shards);
      if (index < 0 || index >= shards) {
        return invalid(ctx, "index must be between 0 and {}, got {}", shards - 1, index);
      }
      return new_dataset<SelectDataset>(node().name(), std::move(input), Selection::kShard, shards,
                                        index);
    }
    TROUPE_ASSIGN_OR_RETURN(int64_t count, scalar_input<int64_t>(ctx, 1, "count"));
    if (op_ == "RepeatDataset") {
      return new_dataset<RepeatDataset>(node().name(), std::move(input), count);
    }
    return new_dataset<SelectDataset>(node().name(), std::move(input),
                                      op_ == "TakeDataset" ? Selection::kTake : Selection::kSkip,
                                      count, 0);
  }

 private:
  std::string op_;
};

// ---- Shuffle ------------------------------------------------------------------------------

class ShuffleDataset : public UnaryDataset {
 public:
  ShuffleDataset(std::string node, std::shared_ptr<const DatasetBase> input, int64_t buffer_size,
                 uint64_t seed, uint64_t seed2, bool reshuffle)
      : UnaryDataset(std::move(node), std::move(input)),
        buffer_size_(buffer_size),
        seed_(seed),
        seed2_(seed2),
        reshuffle_(reshuffle) {}

  std::unique_ptr<IteratorBase> make_iterator() const override {
    uint64_t pass = reshuffle_ ? passes_.fetch_add(1, std::memory_order_relaxed) : 0;
    random::Philox generator(seed_, seed2_);
    generator.skip(pass << 32);  // each pass its own stream
    return std::make_unique<Iterator>(self<ShuffleDataset>(), generator);
  }

 private:
  class Iterator : public IteratorBase {
   public:
    Iterator(std::shared_ptr<const ShuffleDataset> dataset, random::Philox generator)
        : dataset_(std::move(dataset)),
          input_(dataset_->input_->make_iterator()),
          generator_(generator) {}

    Status get_next(Element* out, bool* end) override {
      while (!input_end_ && static_cast<int64_t>(buffer_.size()) < dataset_->buffer_size_) {
        Element element;
        TROUPE_RETURN_IF_ERROR(input_->get_next(&element, &input_end_));
        if (!input_end_) buffer_.push_back(std::move(element));
      }
      *end = buffer_.empty();
      if (*end) return Status::OK();
      size_t pick = static_cast<size_t>(next_random() % buffer_.size());
      *out = std::move(buffer_[pick]);
      buffer_[pick] = std::move(buffer_.back());
      buffer_.pop_back();
      return Status::OK();
    }

   private:
    uint64_t next_random() {
      if (left_ == 0) {
        block_ = generator_.next();
        left_ = 2;
      }
      --left_;
      return uint64_t{block_[2 * left_]} << 32 | block_[2 * left_ + 1];
    }

    std::shared_ptr<const ShuffleDataset> dataset_;
    std::unique_ptr<IteratorBase> input_;
    random::Philox generator_;
    random::Philox::Block block_{};
    int left_ = 0;
    std::vector<Element> buffer_;
    bool input_end_ = false;
  };

  int64_t buffer_size_;
  uint64_t seed_, seed2_;
  bool reshuffle_;
  mutable std::atomic<uint64_t> passes_{0};
};

class ShuffleDatasetKernel : public DatasetOpKernel {
 public:
  explicit ShuffleDatasetKernel(const OpKernelConstruction& c)
      : DatasetOpKernel(c), reshuffle_(c.attr<bool>("reshuffle_each_iteration")) {}

 protected:
  StatusOr<std::shared_ptr<const DatasetBase>> make_dataset(OpKernelContext& ctx) override {
    TROUPE_ASSIGN_OR_RETURN(auto input, dataset_input(ctx, 0));
    TROUPE_ASSIGN_OR_RETURN(int64_t buffer_size, scalar_input<int64_t>(ctx, 1, "buffer_size"));
    TROUPE_ASSIGN_OR_RETURN(int64_t seed, scalar_input<int64_t>(ctx, 2, "seed"));
    TROUPE_ASSIGN_OR_RETURN(int64_t seed2, scalar_input<int64_t>(ctx, 3, "seed2"));
    if (buffer_size <= 0) {
      return invalid(ctx, "buffer_size must be greater than zero, got {}", buffer_size);
    }
    if (seed == 0 && seed2 == 0) {
      // Unseeded: a fresh order every time the node runs, as TensorFlow's.
      std::random_device device;
      seed = static_cast<int64_t>(uint64_t{device()} << 32 | device());
      seed2 = static_cast<int64_t>(uint64_t{device()} << 32 | device());
    }
    return new_dataset<ShuffleDataset>(node().name(), std::move(input), buffer_size,
                                       static_cast<uint64_t>(seed), static_cast<uint64_t>(seed2),
                                       reshuffle_);
  }

 private:
  bool reshuffle_;
};

// ---- Zip, Concatenate ---------------------------------------------------------------------

std::vector<DataType> joined(const std::vector<DataType>& a, const std::vector<DataType>& b) {
  std::vector<DataType> all = a;
  all.insert(all.end(), b.begin(), b.end());
  return all;
}

class PairDataset : public DatasetBase {
 public:
  PairDataset(std::string node, std::shared_ptr<const DatasetBase> first,
              std::shared_ptr<const DatasetBase> second, bool zip)
      : DatasetBase(std::move(node), zip ? joined(first->output_types(), second->output_types())
                                         : first->output_types()),
        first_(std::move(first)),
        second_(std::move(second)),
        zip_(zip) {}

  std::unique_ptr<IteratorBase> make_iterator() const override {
    return std::make_unique<Iterator>(self<PairDataset>());
  }

 private:
  class Iterator : public IteratorBase {
   public:
    explicit Iterator(std::shared_ptr<const PairDataset> dataset)
        : dataset_(std::move(dataset)), first_(dataset_->first_->make_iterator()) {
      if (dataset_->zip_) second_ = dataset_->second_->make_iterator();
    }

    Status get_next(Element* out, bool* end) override {
      if (dataset_->zip_) {
        TROUPE_RETURN_IF_ERROR(first_->get_next(out, end));
        if (*end) return Status::OK();
        Element other;
        TROUPE_RETURN_IF_ERROR(second_->get_next(&other, end));
        out->insert(out->end(), std::make_move_iterator(other.begin()),
                    std::make_move_iterator(other.end()));
        return Status::OK();
      }
      if (first_ != nullptr) {
        TROUPE_RETURN_IF_ERROR(first_->get_next(out, end));
        if (!*end) return Status::OK();
        first_.reset();
        second_ = dataset_->second_->make_iterator();
      }
      return second_->get_next(out, end);
    }

   private:
    std::shared_ptr<const PairDataset> dataset_;
    std::unique_ptr<IteratorBase> first_, second_;
  };

  std::shared_ptr<const DatasetBase> first_, second_;
  bool zip_;
};

class PairDatasetKernel : public DatasetOpKernel {
 public:
  PairDatasetKernel(const OpKernelConstruction& c, bool zip) : DatasetOpKernel(c), zip_(zip) {}

 protected:
  StatusOr<std::shared_ptr<const DatasetBase>> make_dataset(OpKernelContext& ctx) override {
    TROUPE_ASSIGN_OR_RETURN(auto first, dataset_input(ctx, 0));
    TROUPE_ASSIGN_OR_RETURN(auto second, dataset_input(ctx, 1));
    if (!zip_ && first->output_types() != second->output_types()) {
      return invalid(ctx, "cannot concatenate datasets of element types {} and {}",
                     types_string(first->output_types()), types_string(second->output_types()));
    }
    return new_dataset<PairDataset>(node().name(), std::move(first), std::move(second), zip_);
  }

 private:
  bool zip_;
};

// ---- Prefetch -----------------------------------------------------------------------------

class PrefetchDataset : public UnaryDataset {
 public:
  PrefetchDataset(std::string node, std::shared_ptr<const DatasetBase> input, int64_t buffer_size)
      : UnaryDataset(std::move(node), std::move(input)), buffer_size_(buffer_size) {}

  std::unique_ptr<IteratorBase> make_iterator() const override {
    return std::make_unique<PrefetchIterator>(input_->make_iterator(),
                                              static_cast<size_t>(buffer_size_));
  }

 private:
  int64_t buffer_size_;
};

class PrefetchDatasetKernel : public DatasetOpKernel {
 public:
  using DatasetOpKernel::DatasetOpKernel;

 protected:
  StatusOr<std::shared_ptr<const DatasetBase>> make_dataset(OpKernelContext& ctx) override {
    TROUPE_ASSIGN_OR_RETURN(auto input, dataset_input(ctx, 0));
    TROUPE_ASSIGN_OR_RETURN(int64_t buffer_size, scalar_input<int64_t>(ctx, 1, "buffer_size"));
    // -1 is tf.data.experimental.AUTOTUNE: troupe keeps two elements ahead.
    if (buffer_size == -1) buffer_size = 2;
    if (buffer_size < 0) {
      return invalid(ctx, "buffer_size must be >= 0 or -1 (AUTOTUNE), got {}", buffer_size);
    }
    if (buffer_size == 0) return input;
    return new_dataset<PrefetchDataset>(node().name(), std::move(input), buffer_size);
  }
};

template <class Kernel, class... Args>
KernelFactory kernel_with(Args... args) {
  return [=](const OpKernelConstruction& c) -> StatusOr<std::unique_ptr<OpKernel>> {
    return std::unique_ptr<OpKernel>(new Kernel(c, args...));
  };
}

}  // namespace

void register_transform_dataset_kernels(KernelRegistry& r) {
  must_add_kernel(r, "BatchDatasetV2", kCpu, simple_kernel<BatchDatasetKernel>());
  for (const char* op : {"RepeatDataset", "TakeDataset", "SkipDataset", "ShardDataset"})
    must_add_kernel(r, op, kCpu, kernel_with<CountDatasetKernel>(std::string_view(op)));
  must_add_kernel(r, "ShuffleDataset", kCpu, simple_kernel<ShuffleDatasetKernel>());
  must_add_kernel(r, "ZipDataset", kCpu, kernel_with<PairDatasetKernel>(true));
  must_add_kernel(r, "ConcatenateDataset", kCpu, kernel_with<PairDatasetKernel>(false));
  must_add_kernel(r, "PrefetchDataset", kCpu, simple_kernel<PrefetchDatasetKernel>());
  must_add_kernel(r, "PaddedBatchDatasetV2", kCpu, simple_kernel<PaddedBatchDatasetKernel>());
  must_add_kernel(r, "CacheDataset", kCpu, simple_kernel<CacheDatasetKernel>());
}

}  // namespace troupe::data
