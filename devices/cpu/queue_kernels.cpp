// CPU kernels for queues: FIFOQueue and RandomShuffleQueue (find or create the queue),
// QueueEnqueue/EnqueueMany and QueueDequeue/DequeueMany/DequeueUpTo (async: they may wait, and
// a cancelled step ends the wait), QueueClose, QueueSize; and the readers that take their work
// from a queue: TFRecordReader, TextLineReader, FixedLengthRecordReader, WholeFileReader (a
// reader: its current file and counts, devices/data/record_file.hpp), ReaderRead (the next
// record, taking the next file name from the queue when a file ends; the queue's OutOfRange
// once it is closed and empty), ReaderReadUpTo (up to num_records of one file, as TensorFlow's
// ReaderBase::ReadUpTo), ReaderNumRecordsProduced, ReaderNumWorkUnitsCompleted,
// ReaderReset.
#include "troupe/devices/cpu/cpu_kernels.hpp"
#include "troupe/devices/data/record_file.hpp"
#include "troupe/devices/tuple_queue.hpp"

#include <algorithm>
#include <map>
#include <optional>

namespace troupe {
namespace {

// The queue behind reference input 0, or nullptr after recording the error.
TupleQueue* queue_input(OpKernelContext& ctx) {
  auto* queue = ctx.input_resource<TupleQueue>(0);
  if (queue == nullptr) {
    ctx.fail_invalid("input 0 is {}, not a queue", ctx.input_ref_ptr(0)->debug_name());
  }
  return queue;
}

enum class QueueKind { kFifo, kPadding, kShuffle };

// FIFOQueue, PaddingFIFOQueue and RandomShuffleQueue.
template <QueueKind kKind>
class QueueKernel : public OpKernel {
 public:
  explicit QueueKernel(const OpKernelConstruction& c)
      : OpKernel(c),
        name_(c.attr<std::string>("shared_name").empty() ? c.name()
                                                         : c.attr<std::string>("shared_name")),
        container_(c.attr<std::string>("container")),
        types_(c.attr<std::vector<DataType>>("component_types")),
        shapes_(c.attr<std::vector<PartialShape>>("shapes")),
        capacity_(c.attr<int64_t>("capacity")) {
    if constexpr (kKind == QueueKind::kShuffle) {
      // TensorFlow's rule for the two seeds: both 0 is a random stream.
      seed_ = c.attr<int64_t>("seed");
      seed2_ = c.attr<int64_t>("seed2");
      const auto seed = static_cast<uint64_t>(seed_);
      const auto seed2 = static_cast<uint64_t>(seed2_);
      uint64_t mixed = seed * 0x9E3779B97F4A7C15ULL + seed2 + 1;
      if (mixed == 0) mixed = 1;
      shuffle_ = TupleQueue::Shuffle{c.attr<int64_t>("min_after_dequeue"),
                                     seed == 0 && seed2 == 0 ? 0 : mixed,
                                     {seed_, seed2_}};
    }
  }

  void compute(OpKernelContext& ctx) override {
    constexpr bool kPadded = kKind == QueueKind::kPadding;
    if (kPadded && shapes_.size() != types_.size()) {
      return ctx.fail_invalid(
          "a PaddingFIFOQueue needs the shape of each of its {} components (unknown dimensions "
          "as -1), got {} shapes",
          types_.size(), shapes_.size());
    }
    for (size_t i = 0; kPadded && i < shapes_.size(); ++i) {
      if (!shapes_[i].rank_known()) {
        return ctx.fail_invalid("a PaddingFIFOQueue needs known ranks; shape {} is unknown", i);
      }
    }
    const std::string& container = container_.empty() ? ctx.step().container : container_;
    auto queue = ctx.device().resources().lookup_or_create<TupleQueue>(
        container, name_,
        [&]() -> StatusOr<std::shared_ptr<TupleQueue>> {
          return std::make_shared<TupleQueue>(name_, types_, shapes_, capacity_, shuffle_, kPadded);
        },
        [&](const TupleQueue& existing) { return matches(existing); });
    if (!queue.ok()) {
      ctx.fail_invalid("{}", queue.status().message());
      return;
    }
    ctx.set_output_ref(0, std::move(queue).value());
  }

 private:
  static const char* kind_name(bool shuffled, bool padded) {
    return shuffled ? "RandomShuffleQueue" : padded ? "PaddingFIFOQueue" : "FIFOQueue";
  }

  static std::string types_string(const std::vector<DataType>& types) {
    std::string text;
    for (DataType t : types)
      text += (text.empty() ? "" : ", ") + std::string(dtype_name(t));
    return text;
  }

  static std::string shapes_string(const std::vector<PartialShape>& shapes) {
    std::string text;
    for (const PartialShape& shape : shapes)
      text += (text.empty() ? "" : ", ") + shape.to_string();
    return text;
  }

  // A queue shared by name must be the one this node asks for, as TensorFlow checks: kind,
  // capacity, component types and shapes; for a shuffling queue min_after_dequeue and, unless
  // this node leaves them 0, its seeds.
  Status matches(const TupleQueue& existing) const {
    constexpr bool kPadded = kKind == QueueKind::kPadding;
    const char* kind = kind_name(shuffle_.has_value(), kPadded);
    const char* existing_kind = kind_name(existing.shuffle().has_value(), existing.padded());
    if (std::string_view(kind) != existing_kind) {
      return errors::InvalidArgument(
          "Shared queue '{}' has type '{}' that does not match type of Node '{}': {}", name_,
          existing_kind, node().name(), kind);
    }
    if (existing.capacity() != capacity_) {
      return errors::InvalidArgument(
          "Shared queue '{}' has capacity {} but requested capacity was {}", name_,
          existing.capacity(), capacity_);
    }
    if (existing.component_types() != types_) {
      return errors::InvalidArgument(
          "Shared queue '{}' has component types {} but requested component types were {}", name_,
          types_string(existing.component_types()), types_string(types_));
    }
    if (existing.shapes() != shapes_) {
      return errors::InvalidArgument(
          "Shared queue '{}' has component shapes [{}] but requested component shapes were [{}]",
          name_, shapes_string(existing.shapes()), shapes_string(shapes_));
    }
    if (shuffle_ && existing.shuffle()->min_after_dequeue != shuffle_->min_after_dequeue) {
      return errors::InvalidArgument(
          "Shared queue '{}' has min_after_dequeue {} but requested min_after_dequeue was {}",
          name_, existing.shuffle()->min_after_dequeue, shuffle_->min_after_dequeue);
    }
    if (shuffle_ && shuffle_->seed != 0 && existing.shuffle()->seeds != shuffle_->seeds) {
      return errors::InvalidArgument(
          "Shared queue '{}' has random seeds ({}, {}) but requested seeds are ({}, {})", name_,
          existing.shuffle()->seeds.first, existing.shuffle()->seeds.second, seed_, seed2_);
    }
    return Status::OK();
  }

  std::string name_;
  std::string container_;
  std::vector<DataType> types_;
  std::vector<PartialShape> shapes_;
  int64_t capacity_;
  std::optional<TupleQueue::Shuffle> shuffle_;
  int64_t seed_ = 0, seed2_ = 0;
};

// Waits on `queue` through `start(done)`, ending the wait if the step is cancelled.
template <class Start>
void wait_cancellably(OpKernelContext& ctx, const std::shared_ptr<Resource>& keep_alive,
                      TupleQueue& queue, Start start, AsyncOpKernel::DoneCallback done) {
  CancellationManager& cancellation = ctx.step().cancellation;
  if (cancellation.is_cancelled()) {
    ctx.set_status(cancellation.reason());
    done();
    return;
  }
  auto token = std::make_shared<CancellationManager::Token>(CancellationManager::kAlreadyCancelled);
  TupleQueue::Waiter waiter = start([&ctx, &cancellation, token, done](const Status& status) {
    if (*token != CancellationManager::kAlreadyCancelled) cancellation.deregister(*token);
    if (!status.ok()) ctx.set_status(status);
    done();
  });
  if (waiter == TupleQueue::kServed) return;
  *token = cancellation.register_callback(
      [keep_alive, &queue, waiter](const Status& reason) { queue.cancel(waiter, reason); });
}

// QueueEnqueue (one tuple) and QueueEnqueueMany (kMany: tuples sliced along dimension 0).
template <bool kMany>
class QueueEnqueueKernel : public AsyncOpKernel {
 public:
  using AsyncOpKernel::AsyncOpKernel;

  void compute_async(OpKernelContext& ctx, DoneCallback done) override {
    TupleQueue* queue = queue_input(ctx);
    if (queue == nullptr) return done();
    std::vector<TupleQueue::Tuple> tuples;
    if constexpr (kMany) {
      auto sliced = slices(ctx, *queue);
      if (!sliced) return done();
      tuples = std::move(*sliced);
    } else {
      TupleQueue::Tuple tuple;
      for (int i = 1; i < ctx.num_inputs(); ++i)
        tuple.push_back(ctx.input(i));
      tuples.push_back(std::move(tuple));
    }
    for (const auto& tuple : tuples) {
      if (Status valid = queue->validate(tuple); !valid.ok()) {
        ctx.fail_invalid("{}", valid.message());
        return done();
      }
    }
    wait_cancellably(
        ctx, ctx.input_ref_ptr(0), *queue,
        [&](std::function<void(const Status&)> finish) {
          return queue->enqueue(std::move(tuples), std::move(finish));
        },
        std::move(done));
  }

 private:
  // The tuples of an enqueue of many: element k of each component; nullopt after the error.
  static std::optional<std::vector<TupleQueue::Tuple>> slices(OpKernelContext& ctx,
                                                              const TupleQueue& queue) {
    const int components = ctx.num_inputs() - 1;
    if (components != static_cast<int>(queue.component_types().size())) {
      ctx.fail_invalid("{} takes {} components, got {}", queue.debug_name(),
                       queue.component_types().size(), components);
      return std::nullopt;
    }
    int64_t n = -1;
    for (int c = 0; c < components; ++c) {
      const Tensor& t = ctx.input(c + 1);
      if (t.rank() == 0) {
        ctx.fail_invalid(
            "an enqueue of many needs components of rank >= 1; component {} is a "
            "scalar",
            c);
        return std::nullopt;
      }
      if (n >= 0 && t.dim(0) != n) {
        ctx.fail_invalid(
            "the components of an enqueue of many must agree in dimension 0: "
            "component 0 has {}, component {} has {}",
            n, c, t.dim(0));
        return std::nullopt;
      }
      n = t.dim(0);
    }
    std::vector<TupleQueue::Tuple> tuples(static_cast<size_t>(n));
    for (int c = 0; c < components; ++c) {
      const Tensor& t = ctx.input(c + 1);
      std::vector<int64_t> dims(t.shape().dims().begin() + 1, t.shape().dims().end());
      const TensorShape element(dims);
      const int64_t size = element.num_elements();
      for (int64_t k = 0; k < n; ++k) {
        Tensor slice(t.dtype(), element);
        TROUPE_SWITCH_ALL(t.dtype(), T, std::copy_n(t.data<T>() + k * size, size, slice.data<T>()));
        tuples[k].push_back(std::move(slice));
      }
    }
    return tuples;
  }
};

// QueueDequeue (one tuple), QueueDequeueMany and QueueDequeueUpTo (n tuples, each component
// stacked along a new dimension 0; UpTo: fewer once the queue is closed).
enum class DequeueKind { kOne, kMany, kUpTo };

template <DequeueKind kKind>
class QueueDequeueKernel : public AsyncOpKernel {
 public:
  using AsyncOpKernel::AsyncOpKernel;

  void compute_async(OpKernelContext& ctx, DoneCallback done) override {
    TupleQueue* queue = queue_input(ctx);
    if (queue == nullptr) return done();
    if (queue->component_types().size() != static_cast<size_t>(ctx.num_outputs())) {
      ctx.fail_invalid("{} has {} components, the dequeue expects {}", queue->debug_name(),
                       queue->component_types().size(), ctx.num_outputs());
      return done();
    }
    int64_t count = 1;
    if constexpr (kKind != DequeueKind::kOne) {
      const Tensor& n = ctx.input(1);
      if (n.rank() != 0 || n.dtype() != DataType::kInt32 || n.scalar<int32_t>() < 0) {
        ctx.fail_invalid("n must be a non-negative int32 scalar, got {} of shape {}",
                         n.dtype() == DataType::kInt32 && n.num_elements() == 1
                             ? std::to_string(n.data<int32_t>()[0])
                             : dtype_name(n.dtype()),
                         n.shape().to_string());
        return done();
      }
      count = n.scalar<int32_t>();
      // As TensorFlow's: elements of one known shape per component, so that they stack
      // (a PaddingFIFOQueue pads those of one known rank).
      if (!all_shapes_known(*queue)) {
        ctx.fail_invalid("{}: a dequeue of many needs the components' shapes fully specified",
                         queue->debug_name());
        return done();
      }
    }
    wait_cancellably(
        ctx, ctx.input_ref_ptr(0), *queue,
        [&](std::function<void(const Status&)> finish) {
          return queue->dequeue(
              count, kKind == DequeueKind::kUpTo,
              [&ctx, queue, finish](const Status& status, std::vector<TupleQueue::Tuple> tuples) {
                if (status.ok()) {
                  if constexpr (kKind == DequeueKind::kOne) {
                    for (size_t i = 0; i < tuples[0].size(); ++i)
                      ctx.set_output(static_cast<int>(i), tuples[0][i]);
                  } else {
                    Status stacked = stack(ctx, *queue, tuples);
                    if (!stacked.ok()) return finish(stacked);
                  }
                }
                finish(status);
              });
        },
        std::move(done));
  }

 private:
  static bool all_shapes_known(const TupleQueue& queue) {
    if (queue.shapes().empty()) return false;
    for (const auto& shape : queue.shapes()) {
      if (queue.padded() ? !shape.rank_known() : !shape.is_fully_defined()) return false;
    }
    return true;
  }

  // Copies an element of dims `from_dims` into the corner of a zeroed one of `to_dims` (each
  // at least as large).
  template <class T>
  static void copy_padded(const T* from, const std::vector<int64_t>& from_dims, T* to,
                          const std::vector<int64_t>& to_dims) {
    const size_t rank = from_dims.size();
    if (rank == 0) {
      *to = *from;
      return;
    }
    const int64_t row = from_dims[rank - 1];
    int64_t rows = 1;
    for (size_t d = 0; d + 1 < rank; ++d)
      rows *= from_dims[d];
    if (row == 0) return;
    std::vector<int64_t> index(rank - 1, 0);
    for (int64_t i = 0; i < rows; ++i) {
      int64_t offset = 0;
      for (size_t d = 0; d + 1 < rank; ++d)
        offset = offset * to_dims[d] + index[d];
      std::copy_n(from + i * row, row, to + offset * to_dims[rank - 1]);
      for (size_t d = rank - 1; d-- > 0;) {
        if (++index[d] < from_dims[d]) break;
        index[d] = 0;
      }
    }
  }

  // A PaddingFIFOQueue's dequeue of many: each component as large as its largest element in
  // every dimension, the rest zeros (empty strings, false).
  static void stack_padded(OpKernelContext& ctx, const TupleQueue& queue,
                           const std::vector<TupleQueue::Tuple>& tuples) {
    for (size_t c = 0; c < queue.component_types().size(); ++c) {
      const DataType dtype = queue.component_types()[c];
      std::vector<int64_t> largest = queue.shapes()[c].dims();
      for (int64_t& d : largest)
        d = std::max<int64_t>(d, 0);  // unknown: the elements' largest, 0 without any
      for (const auto& tuple : tuples) {
        for (size_t d = 0; d < largest.size(); ++d)
          largest[d] = std::max(largest[d], tuple[c].shape().dim(static_cast<int>(d)));
      }
      std::vector<int64_t> dims = {static_cast<int64_t>(tuples.size())};
      dims.insert(dims.end(), largest.begin(), largest.end());
      Tensor out(dtype, TensorShape(dims));
      const int64_t size = TensorShape(largest).num_elements();
      TROUPE_SWITCH_ALL(dtype, T, {
        std::fill_n(out.data<T>(), out.num_elements(), T{});
        for (size_t k = 0; k < tuples.size(); ++k) {
          copy_padded(tuples[k][c].data<T>(), tuples[k][c].shape().dims(),
                      out.data<T>() + static_cast<int64_t>(k) * size, largest);
        }
      });
      ctx.set_output(static_cast<int>(c), std::move(out));
    }
  }

  // Each component's elements stacked into one output.
  static Status stack(OpKernelContext& ctx, const TupleQueue& queue,
                      const std::vector<TupleQueue::Tuple>& tuples) {
    if (queue.padded()) {
      stack_padded(ctx, queue, tuples);
      return Status::OK();
    }
    for (size_t c = 0; c < queue.component_types().size(); ++c) {
      const DataType dtype = queue.component_types()[c];
      TensorShape element = tuples.empty() ? queue.shapes()[c].to_shape() : tuples[0][c].shape();
      for (size_t k = 1; k < tuples.size(); ++k) {
        if (tuples[k][c].shape() != element) {
          return errors::InvalidArgument(
              "{}: a dequeue of many needs elements of one shape; component {} has {} and {}",
              queue.debug_name(), c, element.to_string(), tuples[k][c].shape().to_string());
        }
      }
      std::vector<int64_t> dims = {static_cast<int64_t>(tuples.size())};
      dims.insert(dims.end(), element.dims().begin(), element.dims().end());
      Tensor out(dtype, TensorShape(dims));
      const int64_t size = element.num_elements();
      for (size_t k = 0; k < tuples.size(); ++k) {
        TROUPE_SWITCH_ALL(dtype, T,
                          std::copy_n(tuples[k][c].data<T>(), size,
                                      out.data<T>() + static_cast<int64_t>(k) * size));
      }
      ctx.set_output(static_cast<int>(c), std::move(out));
    }
    return Status::OK();
  }
};

class QueueCloseKernel : public OpKernel {
 public:
  explicit QueueCloseKernel(const OpKernelConstruction& c)
      : OpKernel(c), cancel_pending_(c.attr<bool>("cancel_pending_enqueues")) {}
  void compute(OpKernelContext& ctx) override {
    if (TupleQueue* queue = queue_input(ctx)) queue->close(cancel_pending_);
  }

 private:
  bool cancel_pending_;
};

class QueueSizeKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void compute(OpKernelContext& ctx) override {
    if (TupleQueue* queue = queue_input(ctx)) {
      ctx.set_output(0, Tensor(static_cast<int32_t>(queue->size())));
    }
  }
};

// ---- readers ----

class ReaderResource : public Resource {
 public:
  ReaderResource(std::string name, data::RecordFormat format, data::RecordLayout layout)
      : name_(std::move(name)), format_(format), layout_(layout) {}
  std::string debug_name() const override { return "reader '" + name_ + "'"; }

  data::RecordFormat format() const { return format_; }
  // Opens the file a queue element names.
  Status open(const TupleQueue::Tuple& work) {
    if (work.size() != 1 || work[0].dtype() != DataType::kString || work[0].num_elements() != 1) {
      return errors::InvalidArgument("{}: the queue must hold file names (one string each)",
                                     debug_name());
    }
    TROUPE_ASSIGN_OR_RETURN(file, data::RecordFile::open(format_, work[0].flat<std::string>()[0],
                                                         layout_, debug_name()));
    return Status::OK();
  }
  void reset() {
    file.reset();
    produced = completed = 0;
  }

  std::unique_ptr<data::RecordFile> file;  // the file being read, if any
  int64_t produced = 0, completed = 0;

  // One read at a time, as TensorFlow's reader holds its lock across its wait for a file name:
  // two reads waiting on the queue at once would each open a file, and the second would drop
  // what is left of the first. The others wait here, in order; each is resumed with OK (its
  // turn) or a reason (its step was cancelled).
  bool reading = false;
  std::map<int64_t, std::function<void(const Status&)>> waiting;
  int64_t next_waiting = 0;

  // The read in progress is over: the next waiting one's turn, if any.
  void release() {
    if (waiting.empty()) {
      reading = false;
      return;
    }
    auto next = waiting.extract(waiting.begin());
    next.mapped()(Status::OK());  // `reading` stays set: handed over
  }

 private:
  std::string name_;
  data::RecordFormat format_;
  data::RecordLayout layout_;
};

template <data::RecordFormat kFormat>
class ReaderKernel : public OpKernel {
 public:
  explicit ReaderKernel(const OpKernelConstruction& c)
      : OpKernel(c),
        name_(c.attr<std::string>("shared_name").empty() ? c.name()
                                                         : c.attr<std::string>("shared_name")),
        container_(c.attr<std::string>("container")) {
    if constexpr (kFormat == data::RecordFormat::kTextLine) {
      layout_.skip_header_lines = c.attr<int64_t>("skip_header_lines");
    }
    if constexpr (kFormat == data::RecordFormat::kFixedLength) {
      layout_.header = c.attr<int64_t>("header_bytes");
      layout_.record = c.attr<int64_t>("record_bytes");
      layout_.footer = c.attr<int64_t>("footer_bytes");
      hop_bytes_ = c.attr<int64_t>("hop_bytes");
    }
    if constexpr (kFormat == data::RecordFormat::kTFRecord) {
      compression_ = parse_tfrecord_compression(c.attr<std::string>("compression_type"));
      if (compression_.ok()) layout_.compression = *compression_;
    }
  }

  void compute(OpKernelContext& ctx) override {
    if (layout_.skip_header_lines < 0) {
      return ctx.fail_invalid("skip_header_lines must be >= 0, got {}", layout_.skip_header_lines);
    }
    if (kFormat == data::RecordFormat::kFixedLength &&
        (layout_.record <= 0 || layout_.header < 0 || layout_.footer < 0)) {
      return ctx.fail_invalid(
          "record_bytes must be > 0 and header_bytes, footer_bytes >= 0; got {}, {}, {}",
          layout_.record, layout_.header, layout_.footer);
    }
    if (hop_bytes_ != 0) {
      return ctx.set_status(errors::Unimplemented(
          "node '{}' (FixedLengthRecordReader): hop_bytes is not supported by troupe",
          ctx.node().name()));
    }
    if constexpr (kFormat == data::RecordFormat::kTFRecord) {
      if (!compression_.ok()) return ctx.fail_invalid("{}", compression_.status().message());
    }
    const std::string& container = container_.empty() ? ctx.step().container : container_;
    auto reader = ctx.device().resources().lookup_or_create<ReaderResource>(
        container, name_,
        [&]() -> StatusOr<std::shared_ptr<ReaderResource>> {
          return std::make_shared<ReaderResource>(name_, kFormat, layout_);
        },
        [&](const ReaderResource& existing) -> Status {
          if (existing.format() == kFormat) return Status::OK();
          return errors::InvalidArgument("{} already exists as another kind of reader",
                                         existing.debug_name());
        });
    if (!reader.ok()) return ctx.fail_invalid("{}", reader.status().message());
    ctx.set_output_ref(0, std::move(reader).value());
  }

 private:
  std::string name_;
  std::string container_;
  data::RecordLayout layout_;
  int64_t hop_bytes_ = 0;
  StatusOr<TFRecordCompression> compression_ = TFRecordCompression::kNone;
};

ReaderResource* reader_input(OpKernelContext& ctx) {
  auto* reader = ctx.input_resource<ReaderResource>(0);
  if (reader == nullptr) {
    ctx.fail_invalid("input 0 is {}, not a reader", ctx.input_ref_ptr(0)->debug_name());
  }
  return reader;
}

// What one read collects: up to `want` records (ReaderRead: one, output as scalars).
struct ReadBatch {
  int64_t want = 1;
  bool scalars = true;
  std::vector<std::string> keys, values;
};

// ReaderRead (kUpTo false) and ReaderReadUpTo: records from the reader's file, taking file names
// from the queue as files end. ReaderReadUpTo, as TensorFlow's ReaderBase::ReadUpTo, returns
// fewer than num_records when a file ends after at least one record of this call.
template <bool kUpTo>
class ReaderReadKernel : public AsyncOpKernel {
 public:
  using AsyncOpKernel::AsyncOpKernel;

  void compute_async(OpKernelContext& ctx, DoneCallback done) override {
    ReaderResource* reader = reader_input(ctx);
    if (reader == nullptr) return done();
    auto* queue = ctx.input_resource<TupleQueue>(1);
    if (queue == nullptr) {
      ctx.fail_invalid("input 1 is {}, not a queue", ctx.input_ref_ptr(1)->debug_name());
      return done();
    }
    auto batch = std::make_shared<ReadBatch>();
    if constexpr (kUpTo) {
      const Tensor& count = ctx.input(2);
      if (count.dtype() != DataType::kInt64 || count.rank() != 0) {
        ctx.fail_invalid("num_records must be an int64 scalar, got {} of shape {}",
                         dtype_name(count.dtype()), count.shape().to_string());
        return done();
      }
      batch->want = count.scalar<int64_t>();
      batch->scalars = false;
      if (batch->want < 0) {
        ctx.fail_invalid("num_records must be >= 0, got {}", batch->want);
        return done();
      }
      if (batch->want == 0) return finish(ctx, *batch, std::move(done));
    }
    std::shared_ptr<Resource> reader_ref = ctx.input_ref_ptr(0), queue_ref = ctx.input_ref_ptr(1);
    if (!reader->reading) {
      reader->reading = true;
      // Whatever ends this read hands the reader to the next one.
      return read_next(ctx, reader_ref, queue_ref, batch, [reader_ref, done = std::move(done)] {
        static_cast<ReaderResource&>(*reader_ref).release();
        done();
      });
    }
    wait_for_turn(ctx, *reader, reader_ref, queue_ref, batch, std::move(done));
  }

 private:
  // The records read into ctx's outputs.
  static void finish(OpKernelContext& ctx, ReadBatch& batch, DoneCallback done) {
    if (batch.scalars) {
      ctx.set_output(0, Tensor(std::move(batch.keys[0])));
      ctx.set_output(1, Tensor(std::move(batch.values[0])));
      return done();
    }
    const int64_t n = static_cast<int64_t>(batch.keys.size());
    Tensor keys(DataType::kString, TensorShape({n})), values(DataType::kString, TensorShape({n}));
    for (int64_t i = 0; i < n; ++i) {
      keys.flat<std::string>()[i] = std::move(batch.keys[i]);
      values.flat<std::string>()[i] = std::move(batch.values[i]);
    }
    ctx.set_output(0, std::move(keys));
    ctx.set_output(1, std::move(values));
    done();
  }

  // Waits for the read in progress (and those before this one), then reads; a cancelled step
  // stops waiting.
  static void wait_for_turn(OpKernelContext& ctx, ReaderResource& reader,
                            std::shared_ptr<Resource> reader_ref,
                            std::shared_ptr<Resource> queue_ref, std::shared_ptr<ReadBatch> batch,
                            DoneCallback done) {
    CancellationManager& cancellation = ctx.step().cancellation;
    if (cancellation.is_cancelled()) {
      ctx.set_status(cancellation.reason());
      return done();
    }
    auto token =
        std::make_shared<CancellationManager::Token>(CancellationManager::kAlreadyCancelled);
    const int64_t id = reader.next_waiting++;
    auto schedule = ctx.step().schedule;
    // The entry holds the reader weakly: the reader holds the entry.
    std::weak_ptr<Resource> weak_reader = reader_ref;
    reader.waiting.emplace(id, [&ctx, &cancellation, token, weak_reader, queue_ref, schedule, batch,
                                done](const Status& status) {
      if (*token != CancellationManager::kAlreadyCancelled) cancellation.deregister(*token);
      std::shared_ptr<Resource> reader_ref = weak_reader.lock();
      if (!status.ok() || reader_ref == nullptr) {
        ctx.set_status(status.ok() ? errors::Aborted("the reader was deleted") : status);
        return done();
      }
      // Its turn (the reader is already marked as reading for it): on its own step's work.
      schedule([&ctx, reader_ref, queue_ref, batch, done] {
        read_next(ctx, reader_ref, queue_ref, batch, [reader_ref, done] {
          static_cast<ReaderResource&>(*reader_ref).release();
          done();
        });
      });
    });
    *token = cancellation.register_callback([reader_ref, id](const Status& reason) {
      auto& r = static_cast<ReaderResource&>(*reader_ref);
      auto it = r.waiting.find(id);
      if (it == r.waiting.end()) return;
      auto resume = std::move(it->second);
      r.waiting.erase(it);
      resume(reason);
    });
  }

  // The batch's records into ctx's outputs, taking file names from the queue as files end;
  // calls `done` once.
  static void read_next(OpKernelContext& ctx, std::shared_ptr<Resource> reader_ref,
                        std::shared_ptr<Resource> queue_ref, std::shared_ptr<ReadBatch> batch,
                        DoneCallback done) {
    auto& reader = static_cast<ReaderResource&>(*reader_ref);
    auto& queue = static_cast<TupleQueue&>(*queue_ref);
    while (reader.file != nullptr) {
      std::string record, key;
      bool end = false;
      if (Status read = reader.file->read(&record, &key, &end); !read.ok()) {
        reader.file.reset();
        ctx.set_status(read);
        return done();
      }
      if (!end) {
        batch->keys.push_back(std::move(key));
        batch->values.push_back(std::move(record));
        ++reader.produced;
        if (static_cast<int64_t>(batch->keys.size()) == batch->want) {
          return finish(ctx, *batch, std::move(done));
        }
        continue;
      }
      reader.file.reset();
      ++reader.completed;
      if (!batch->keys.empty()) return finish(ctx, *batch, std::move(done));
    }
    auto schedule = ctx.step().schedule;
    wait_cancellably(
        ctx, queue_ref, queue,
        [&](std::function<void(const Status&)> finish) {
          return queue.dequeue(
              1, false,
              [&reader, finish](const Status& status, std::vector<TupleQueue::Tuple> work) {
                finish(status.ok() ? reader.open(work[0]) : status);
              });
        },
        [&ctx, reader_ref, queue_ref, batch, done, schedule]() {
          if (!ctx.ok()) return done();
          // The new file's first record, on the step's work (not deeper in this stack: a run
          // of empty files would nest).
          schedule([&ctx, reader_ref, queue_ref, batch, done] {
            read_next(ctx, reader_ref, queue_ref, batch, done);
          });
        });
  }
};

template <bool kRecords>
class ReaderCountKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void compute(OpKernelContext& ctx) override {
    if (ReaderResource* reader = reader_input(ctx)) {
      ctx.set_output(0, Tensor(kRecords ? reader->produced : reader->completed));
    }
  }
};

class ReaderResetKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void compute(OpKernelContext& ctx) override {
    if (ReaderResource* reader = reader_input(ctx)) reader->reset();
  }
};

}  // namespace

void register_queue_kernels(KernelRegistry& r) {
  using data::RecordFormat;
  must_add_kernel(r, "TFRecordReader", kCpu,
                  simple_kernel<ReaderKernel<RecordFormat::kTFRecord>>());
  must_add_kernel(r, "TextLineReader", kCpu,
                  simple_kernel<ReaderKernel<RecordFormat::kTextLine>>());
  must_add_kernel(r, "FixedLengthRecordReader", kCpu,
                  simple_kernel<ReaderKernel<RecordFormat::kFixedLength>>());
  must_add_kernel(r, "WholeFileReader", kCpu,
                  simple_kernel<ReaderKernel<RecordFormat::kWholeFile>>());
  must_add_kernel(r, "ReaderRead", kCpu, simple_kernel<ReaderReadKernel<false>>());
  must_add_kernel(r, "ReaderReadUpTo", kCpu, simple_kernel<ReaderReadKernel<true>>());
  must_add_kernel(r, "ReaderNumRecordsProduced", kCpu, simple_kernel<ReaderCountKernel<true>>());
  must_add_kernel(r, "ReaderNumWorkUnitsCompleted", kCpu,
                  simple_kernel<ReaderCountKernel<false>>());
  must_add_kernel(r, "ReaderReset", kCpu, simple_kernel<ReaderResetKernel>());
  must_add_kernel(r, "FIFOQueue", kCpu, simple_kernel<QueueKernel<QueueKind::kFifo>>());
  must_add_kernel(r, "PaddingFIFOQueue", kCpu, simple_kernel<QueueKernel<QueueKind::kPadding>>());
  must_add_kernel(r, "RandomShuffleQueue", kCpu, simple_kernel<QueueKernel<QueueKind::kShuffle>>());
  must_add_kernel(r, "QueueEnqueue", kCpu, simple_kernel<QueueEnqueueKernel<false>>());
  must_add_kernel(r, "QueueEnqueueMany", kCpu, simple_kernel<QueueEnqueueKernel<true>>());
  must_add_kernel(r, "QueueDequeue", kCpu, simple_kernel<QueueDequeueKernel<DequeueKind::kOne>>());
  must_add_kernel(r, "QueueDequeueMany", kCpu,
                  simple_kernel<QueueDequeueKernel<DequeueKind::kMany>>());
  must_add_kernel(r, "QueueDequeueUpTo", kCpu,
                  simple_kernel<QueueDequeueKernel<DequeueKind::kUpTo>>());
  must_add_kernel(r, "QueueClose", kCpu, simple_kernel<QueueCloseKernel>());
  must_add_kernel(r, "QueueSize", kCpu, simple_kernel<QueueSizeKernel>());
}

}  // namespace troupe
