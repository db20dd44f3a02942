// Datasets that run a function of the graph on every element (devices/graph_function.hpp):
//   MapDataset         the element becomes what `f` returns for it (with the captured arguments
//                      after the element's components); results must have the declared dtypes
//   FilterDataset      keeps the elements for which `predicate` returns a true bool scalar
//   FlatMapDataset     `f` returns a dataset for each element; their elements, one dataset
//                      after the other
//   InterleaveDataset  the same, cycle_length datasets open at a time, block_length elements
//                      from each in turn, a finished one replaced by the next element's (the
//                      order TensorFlow's interleave documents)
//   GeneratorDataset   init_func's results are a state; next_func(state) gives each element
//                      until it fails with OutOfRange (the end); finalize_func(state) runs at
//                      the end or when the iterator is dropped (Dataset.from_generator)
// The function is instantiated once per node, when its kernel is built, and runs on the thread
// that asks for the element; but MapDataset's with num_parallel_calls n > 1 (-1, AUTOTUNE: one
// per core) reads its input on a thread of its own and runs up to n calls at once on threads
// of its iterator (at most 64), ahead of the elements asked for, giving the results in the
// input's order (an error in its element's place).
// flat_map reads its datasets one at a time, as does interleave, but for one with
// num_parallel_calls n > 1 (-1: one per core): each of the first n datasets open at a time is
// read ahead on a thread of its own (a PrefetchIterator of 64 elements; at most 64 threads), so
// files are read at once while the elements keep interleave's deterministic order (errors
// included); random ops in the datasets' functions then draw in the order the threads reach them.
#include <algorithm>
#include <array>
#include <condition_variable>
#include <deque>
#include <functional>
#include <limits>
#include <mutex>
#include <thread>
#include <utility>

#include "troupe/devices/data/dataset_kernel.hpp"
#include "troupe/devices/data/prefetch_iterator.hpp"
#include "troupe/devices/graph_function.hpp"

namespace troupe::data {
namespace {

struct Body {
  std::shared_ptr<GraphFunction> function;
  Element captured;
  std::string container;

  StatusOr<Element> call(const Element& element) const {
    return function->call(arguments(element), container);
  }
  // For a body that returns a reference (flat_map's dataset).
  StatusOr<std::vector<std::shared_ptr<Resource>>> call_for_resources(
      const Element& element) const {
    return function->call_for_resources(arguments(element), container);
  }

 private:
  Element arguments(const Element& element) const {
    Element args = element;
    args.insert(args.end(), captured.begin(), captured.end());
    return args;
  }
};

// The function of attribute `attr`, instantiated for the kernel's device; errors name the node.
StatusOr<std::shared_ptr<GraphFunction>> instantiate(const OpKernelConstruction& c,
                                                     const char* attr) {
  return GraphFunction::instantiate(
      c.attr<std::string>(attr), c.device(),
      fmt::format("node '{}' ({}): function {}", c.name(), c.node().op_name(), attr));
}

// The body of a function applied to `input`'s elements, capturing inputs [first, end) of the
// node; InvalidArgument unless the function takes the element's components and those.
StatusOr<Body> element_body(OpKernelContext& ctx, const std::shared_ptr<GraphFunction>& function,
                            const DatasetBase& input, int first, int end) {
  Body body{function, {}, ctx.step().container};
  for (int i = first; i < end; ++i)
    body.captured.push_back(ctx.input(i));
  const size_t components = input.output_types().size();
  if (function->num_args() != static_cast<int>(components + body.captured.size())) {
    return invalid(ctx,
                   "the function takes {} arguments; the element has {} components and {} are "
                   "captured",
                   function->num_args(), components, body.captured.size());
  }
  return body;
}

class FunctionDataset : public DatasetBase {
 public:
  FunctionDataset(std::string node, std::vector<DataType> types,
                  std::shared_ptr<const DatasetBase> input, Body body, bool filter,
                  int64_t parallel_calls)
      : DatasetBase(std::move(node), std::move(types)),
        input_(std::move(input)),
        body_(std::move(body)),
        filter_(filter),
        parallel_calls_(parallel_calls) {}

  std::unique_ptr<IteratorBase> make_iterator() const override {
    if (!filter_ && parallel_calls_ > 1) {
      return std::make_unique<ParallelIterator>(self<FunctionDataset>());
    }
    return std::make_unique<Iterator>(self<FunctionDataset>());
  }

 private:
  class Iterator : public IteratorBase {
   public:
    explicit Iterator(std::shared_ptr<const FunctionDataset> dataset)
        : dataset_(std::move(dataset)), input_(dataset_->input_->make_iterator()) {}

    Status get_next(Element* out, bool* end) override {
      const FunctionDataset& d = *dataset_;
      for (;;) {
        TROUPE_RETURN_IF_ERROR(input_->get_next(out, end));
        if (*end) return Status::OK();
        TROUPE_ASSIGN_OR_RETURN(Element results, d.body_.call(*out));
        if (!d.filter_) return d.check_results(std::move(results), out);
        if (results.size() != 1 || results[0].dtype() != DataType::kBool ||
            results[0].rank() != 0) {
          return errors::InvalidArgument("{}: the filter predicate must return a bool scalar",
                                         d.node());
        }
        if (results[0].scalar<bool>()) return Status::OK();
      }
    }

   private:
    std::shared_ptr<const FunctionDataset> dataset_;
    std::unique_ptr<IteratorBase> input_;
  };

  // A map's iterator with parallel_calls_ calls in flight: a reader thread takes the input's
  // elements and queues a call for each while fewer than parallel_calls_ results wait; worker
  // threads run the calls; get_next waits for the oldest one only, so results leave in order.
  class ParallelIterator : public IteratorBase {
   public:
    explicit ParallelIterator(std::shared_ptr<const FunctionDataset> dataset)
        : dataset_(std::move(dataset)), input_(dataset_->input_->make_iterator()) {}

    ~ParallelIterator() override {
      {
        std::lock_guard lock(mutex_);
        stopping_ = true;
      }
      changed_.notify_all();
      if (reader_.joinable()) reader_.join();
      for (std::thread& thread : workers_)
        thread.join();
    }

    Status get_next(Element* out, bool* end) override {
      std::unique_lock lock(mutex_);
      if (!reader_.joinable()) start();
      changed_.wait(lock, [&] { return !pending_.empty() && pending_.front()->done; });
      std::shared_ptr<Call> call = pending_.front();
      if (call->end) {  // stays at the front: the end is returned to every later call too
        *end = true;
        return Status::OK();
      }
      pending_.pop_front();
      lock.unlock();
      changed_.notify_all();  // room for the reader
      *end = false;
      if (!call->result.ok()) return call->result.status();
      return dataset_->check_results(std::move(call->result).value(), out);
    }

   private:
    // At most this many threads run calls, whatever num_parallel_calls asks.
    static constexpr int64_t kMaxWorkers = 64;

    struct Call {
      Element element;
      StatusOr<Element> result = Status::OK();
      bool done = false;  // the result is there (or the end, or the input's error)
      bool end = false;
    };

    void start() {
      reader_ = std::thread([this] { read(); });
      const int64_t workers = std::min(dataset_->parallel_calls_, kMaxWorkers);
      for (int64_t i = 0; i < workers; ++i)
        workers_.emplace_back([this] { work(); });
    }

    // The reader: the input is read on this thread only.
    void read() {
      const size_t limit = static_cast<size_t>(dataset_->parallel_calls_);
      for (;;) {
        {
          std::unique_lock lock(mutex_);
          changed_.wait(lock, [&] { return stopping_ || pending_.size() < limit; });
          if (stopping_) return;
        }
        auto call = std::make_shared<Call>();
        Status read = input_->get_next(&call->element, &call->end);
        {
          std::lock_guard lock(mutex_);
          if (!read.ok()) {  // delivered in its element's place; reading goes on
            call->end = false;
            call->result = read;
            call->done = true;
          } else if (call->end) {
            call->done = true;
          } else {
            queued_.push_back(call);
          }
          pending_.push_back(call);
        }
        changed_.notify_all();
        if (read.ok() && call->end) return;
      }
    }

    void work() {
      for (;;) {
        std::shared_ptr<Call> call;
        {
          std::unique_lock lock(mutex_);
          changed_.wait(lock, [&] { return stopping_ || !queued_.empty(); });
          if (stopping_) return;
          call = std::move(queued_.front());
          queued_.pop_front();
        }
        StatusOr<Element> result = Status::OK();
        try {
          result = dataset_->body_.call(call->element);
        } catch (const std::exception& e) {
          result = errors::Internal("{}: the map function threw: {}", dataset_->node(), e.what());
        }
        {
          std::lock_guard lock(mutex_);
          call->result = std::move(result);
          call->done = true;
        }
        changed_.notify_all();
      }
    }

    std::shared_ptr<const FunctionDataset> dataset_;
    std::unique_ptr<IteratorBase> input_;  // read by the reader thread only
    std::mutex mutex_;
    std::condition_variable changed_;
    std::deque<std::shared_ptr<Call>> pending_;  // in the input's order, results to give
    std::deque<std::shared_ptr<Call>> queued_;   // calls no worker has taken yet
    bool stopping_ = false;
    std::thread reader_;
    std::vector<std::thread> workers_;
  };

  Status check_results(Element results, Element* out) const {
    bool match = results.size() == output_types().size();
    for (size_t i = 0; match && i < results.size(); ++i)
      match = results[i].dtype() == output_types()[i];
    if (!match) {
      std::vector<DataType> got;
      for (const Tensor& t : results)
        got.push_back(t.dtype());
      return errors::InvalidArgument("{}: the map function returned {}, declared {}", node(),
                                     types_string(got), types_string(output_types()));
    }
    *out = std::move(results);
    return Status::OK();
  }

  std::shared_ptr<const DatasetBase> input_;
  Body body_;
  bool filter_;
  int64_t parallel_calls_;
};

class FunctionDatasetKernel : public DatasetOpKernel {
 public:
  FunctionDatasetKernel(const OpKernelConstruction& c, std::shared_ptr<GraphFunction> function,
                        bool filter)
      : DatasetOpKernel(c), function_(std::move(function)), filter_(filter) {}

  static KernelFactory factory(bool filter) {
    return [filter](const OpKernelConstruction& c) -> StatusOr<std::unique_ptr<OpKernel>> {
      const char* attr = filter ? "predicate" : "f";
      TROUPE_ASSIGN_OR_RETURN(auto function, instantiate(c, attr));
      return std::unique_ptr<OpKernel>(new FunctionDatasetKernel(c, std::move(function), filter));
    };
  }

 protected:
  StatusOr<std::shared_ptr<const DatasetBase>> make_dataset(OpKernelContext& ctx) override {
    TROUPE_ASSIGN_OR_RETURN(auto input, dataset_input(ctx, 0));
    TROUPE_ASSIGN_OR_RETURN(Body body, element_body(ctx, function_, *input, 1, ctx.num_inputs()));
    std::vector<DataType> types =
        filter_ ? input->output_types()
                : node().def().find_attr("output_types")->get<std::vector<DataType>>();
    int64_t parallel_calls = 1;
    if (const AttrValue* calls = node().def().find_attr("num_parallel_calls")) {
      parallel_calls = calls->get<int64_t>();
    }
    if (parallel_calls == -1) {  // AUTOTUNE: a call per core this process may use
      parallel_calls = std::max(1, Device::available_cores());
    }
    if (parallel_calls < 1) {
      return invalid(ctx, "num_parallel_calls must be positive or -1 (AUTOTUNE), got {}",
                     parallel_calls);
    }
    return new_dataset<FunctionDataset>(node().name(), std::move(types), std::move(input),
                                        std::move(body), filter_, parallel_calls);
  }

 private:
  std::shared_ptr<GraphFunction> function_;
  bool filter_;
};

// FlatMapDataset and InterleaveDataset: the dataset f returns for each input element.
class NestedDataset : public DatasetBase {
 public:
  NestedDataset(std::string node, std::vector<DataType> types,
                std::shared_ptr<const DatasetBase> input, Body body, int64_t cycle_length,
                int64_t block_length, int64_t read_ahead)
      : DatasetBase(std::move(node), std::move(types)),
        input_(std::move(input)),
        body_(std::move(body)),
        cycle_length_(cycle_length),
        block_length_(block_length),
        read_ahead_(read_ahead) {}

  std::unique_ptr<IteratorBase> make_iterator() const override {
    return std::make_unique<Iterator>(self<NestedDataset>());
  }

 private:
  class Iterator : public IteratorBase {
   public:
    explicit Iterator(std::shared_ptr<const NestedDataset> dataset)
        : dataset_(std::move(dataset)),
          input_(dataset_->input_->make_iterator()),
          cycle_(static_cast<size_t>(dataset_->cycle_length_)),
          reading_ahead_(cycle_.size(), false),
          pending_(cycle_.size()),
          eager_(dataset_->read_ahead_ > 0) {}

    Status get_next(Element* out, bool* end) override {
      const NestedDataset& d = *dataset_;
      // Reading ahead, every slot is filled as soon as it is free (all of them at first), so
      // its reader starts at once; a slot is freed and refilled in the order the plain
      // interleave visits it again, so each takes the same input element as there. A failed
      // early opening waits in its slot for the visit where the plain interleave would have
      // failed, and slots are filled at their visits from then on, as there.
      if (eager_ && !filled_) {
        filled_ = true;
        for (size_t slot = 0; slot < cycle_.size() && eager_ && !end_of_input_; ++slot)
          open_early(slot);
      }
      while (!end_of_input_ || open_ > 0 || failed_ > 0) {
        auto& current = cycle_[index_];
        if (!pending_[index_].ok()) {
          --failed_;
          return std::exchange(pending_[index_], Status::OK());  // retried at this visit
        }
        if (current != nullptr) {
          if (block_ < d.block_length_) {
            bool done = false;
            TROUPE_RETURN_IF_ERROR(current->get_next(out, &done));
            if (!done) {
              ++block_;
              *end = false;
              return Status::OK();  // the dataset's types were checked when it was opened
            }
            current.reset();
            --open_;
            if (reading_ahead_[index_]) --read_ahead_;
            reading_ahead_[index_] = false;
            if (eager_ && !end_of_input_) open_early(index_);
          }
          advance();
        } else if (!end_of_input_) {
          TROUPE_RETURN_IF_ERROR(open_into(index_));
        } else {
          advance();
        }
      }
      *end = true;
      return Status::OK();
    }

   private:
    // open_into(slot) ahead of the slot's visit; a failure is kept for that visit, and ends
    // the early openings.
    void open_early(size_t slot) {
      Status status = open_into(slot);
      if (status.ok()) return;
      pending_[slot] = std::move(status);
      ++failed_;
      eager_ = false;
    }

    // Opens the dataset of the next input element in `slot` (read ahead on a thread of its
    // own while fewer than read_ahead_ are); at the input's end, sets end_of_input_.
    Status open_into(size_t slot) {
      const NestedDataset& d = *dataset_;
      Element element;
      TROUPE_RETURN_IF_ERROR(input_->get_next(&element, &end_of_input_));
      if (end_of_input_) return Status::OK();
      TROUPE_ASSIGN_OR_RETURN(cycle_[slot], d.open(element));
      ++open_;
      if (read_ahead_ < d.read_ahead_) {
        // 64 elements: a reader hands over in bursts (8 elements ran at half the speed).
        constexpr size_t capacity = 64;
        cycle_[slot] = std::make_unique<PrefetchIterator>(std::move(cycle_[slot]), capacity);
        reading_ahead_[slot] = true;
        ++read_ahead_;
      }
      return Status::OK();
    }

    void advance() {
      block_ = 0;
      index_ = (index_ + 1) % cycle_.size();
    }

    std::shared_ptr<const NestedDataset> dataset_;
    std::unique_ptr<IteratorBase> input_;
    std::vector<std::unique_ptr<IteratorBase>> cycle_;
    std::vector<bool> reading_ahead_;  // which of cycle_ are PrefetchIterators
    int64_t read_ahead_ = 0;           // how many
    size_t index_ = 0;
    int64_t block_ = 0;
    int64_t open_ = 0;
    bool end_of_input_ = false;
    std::vector<Status> pending_;  // a failed early opening, returned at its slot's visit
    int64_t failed_ = 0;           // how many of pending_ are errors
    bool eager_;                   // slots are filled early (until an early opening fails)
    bool filled_ = false;          // reading ahead: the slots were filled at the first call
  };

  // An iterator over the dataset `f` returns for `element`.
  StatusOr<std::unique_ptr<IteratorBase>> open(const Element& element) const {
    TROUPE_ASSIGN_OR_RETURN(auto refs, body_.call_for_resources(element));
    auto dataset =
        refs.size() == 1 ? std::dynamic_pointer_cast<const DatasetBase>(refs[0]) : nullptr;
    if (dataset == nullptr) {
      return errors::InvalidArgument("{}: the function must return a dataset", node());
    }
    if (dataset->output_types() != output_types()) {
      return errors::InvalidArgument("{}: the function returned a dataset of {}, declared {}",
                                     node(), types_string(dataset->output_types()),
                                     types_string(output_types()));
    }
    return dataset->make_iterator();
  }

  std::shared_ptr<const DatasetBase> input_;
  Body body_;
  int64_t cycle_length_, block_length_;
  int64_t read_ahead_;  // how many open datasets may be read ahead at once (0: none)
};

class NestedDatasetKernel : public DatasetOpKernel {
 public:
  NestedDatasetKernel(const OpKernelConstruction& c, std::shared_ptr<GraphFunction> function,
                      bool interleave)
      : DatasetOpKernel(c), function_(std::move(function)), interleave_(interleave) {}

  static KernelFactory factory(bool interleave) {
    return [interleave](const OpKernelConstruction& c) -> StatusOr<std::unique_ptr<OpKernel>> {
      TROUPE_ASSIGN_OR_RETURN(auto function, instantiate(c, "f"));
      if (function->num_rets() != 1) {
        return errors::InvalidArgument(
            "node '{}' ({}): function f returns {} values; it must "
            "return one dataset",
            c.name(), c.node().op_name(), function->num_rets());
      }
      return std::unique_ptr<OpKernel>(new NestedDatasetKernel(c, std::move(function), interleave));
    };
  }

 protected:
  StatusOr<std::shared_ptr<const DatasetBase>> make_dataset(OpKernelContext& ctx) override {
    TROUPE_ASSIGN_OR_RETURN(auto input, dataset_input(ctx, 0));
    const int captured_end = interleave_ ? ctx.num_inputs() - 2 : ctx.num_inputs();
    TROUPE_ASSIGN_OR_RETURN(Body body, element_body(ctx, function_, *input, 1, captured_end));
    // flat_map is an interleave of one dataset at a time, taken whole.
    int64_t cycle_length = 1, block_length = std::numeric_limits<int64_t>::max();
    if (interleave_) {
      TROUPE_ASSIGN_OR_RETURN(cycle_length,
                              scalar_input<int64_t>(ctx, captured_end, "cycle_length"));
      TROUPE_ASSIGN_OR_RETURN(block_length,
                              scalar_input<int64_t>(ctx, captured_end + 1, "block_length"));
      if (cycle_length == kAutotune) cycle_length = default_cycle_length();
      if (cycle_length <= 0) {
        return invalid(ctx, "cycle_length must be greater than zero, got {}", cycle_length);
      }
      if (block_length <= 0) {
        return invalid(ctx, "block_length must be greater than zero, got {}", block_length);
      }
    }
    int64_t read_ahead = 0;
    if (const AttrValue* calls = node().def().find_attr("num_parallel_calls")) {
      read_ahead = calls->get<int64_t>();
      if (read_ahead == kAutotune) read_ahead = std::max(1, Device::available_cores());
      if (read_ahead < 1) {
        return invalid(ctx, "num_parallel_calls must be positive or -1 (AUTOTUNE), got {}",
                       read_ahead);
      }
      if (read_ahead == 1) read_ahead = 0;  // one call: the datasets one at a time
      read_ahead = std::min<int64_t>(read_ahead, kMaxReadAhead);
    }
    auto types = node().def().find_attr("output_types")->get<std::vector<DataType>>();
    return new_dataset<NestedDataset>(node().name(), std::move(types), std::move(input),
                                      std::move(body), cycle_length, block_length,
                                      std::min<int64_t>(read_ahead, cycle_length));
  }

 private:
  static constexpr int64_t kAutotune = -1;      // tf.data.experimental.AUTOTUNE
  static constexpr int64_t kMaxReadAhead = 64;  // threads of one iterator, as parallel map's
  // TensorFlow's cycle_length for AUTOTUNE: the cores this process may run on.
  static int64_t default_cycle_length() {
    const unsigned cores = std::thread::hardware_concurrency();
    return cores == 0 ? 1 : static_cast<int64_t>(cores);
  }

  std::shared_ptr<GraphFunction> function_;
  bool interleave_;
};

class GeneratorDataset : public DatasetBase {
 public:
  GeneratorDataset(std::string node, std::vector<DataType> types, Body init, Body next,
                   Body finalize)
      : DatasetBase(std::move(node), std::move(types)),
        init_(std::move(init)),
        next_(std::move(next)),
        finalize_(std::move(finalize)) {}

  std::unique_ptr<IteratorBase> make_iterator() const override {
    return std::make_unique<Iterator>(self<GeneratorDataset>());
  }

 private:
  class Iterator : public IteratorBase {
   public:
    explicit Iterator(std::shared_ptr<const GeneratorDataset> dataset)
        : dataset_(std::move(dataset)) {}
    ~Iterator() override {
      if (started_ && !finished_) (void)finish();
    }

    Status get_next(Element* out, bool* end) override {
      const GeneratorDataset& d = *dataset_;
      if (finished_) {
        *end = true;
        return Status::OK();
      }
      if (!started_) {
        TROUPE_ASSIGN_OR_RETURN(state_, d.init_.call({}));
        started_ = true;
      }
      auto results = d.next_.call(state_);
      if (!results.ok() && results.status().code() == Code::kOutOfRange) {
        *end = true;
        return finish();
      }
      TROUPE_RETURN_IF_ERROR(results.status());
      if (results->size() != d.output_types().size()) {
        return errors::InvalidArgument("{}: next_func returned {} values, declared {}", d.node(),
                                       results->size(), types_string(d.output_types()));
      }
      for (size_t i = 0; i < results->size(); ++i) {
        if ((*results)[i].dtype() != d.output_types()[i]) {
          return errors::InvalidArgument("{}: next_func returned {} for component {}, declared {}",
                                         d.node(), dtype_name((*results)[i].dtype()), i,
                                         dtype_name(d.output_types()[i]));
        }
      }
      *out = std::move(results).value();
      *end = false;
      return Status::OK();
    }

   private:
    Status finish() {
      finished_ = true;
      return dataset_->finalize_.call(state_).status();
    }

    std::shared_ptr<const GeneratorDataset> dataset_;
    Element state_;
    bool started_ = false, finished_ = false;
  };

  Body init_, next_, finalize_;
};

class GeneratorDatasetKernel : public DatasetOpKernel {
 public:
  GeneratorDatasetKernel(const OpKernelConstruction& c,
                         std::array<std::shared_ptr<GraphFunction>, 3> functions)
      : DatasetOpKernel(c), functions_(std::move(functions)) {}

  static StatusOr<std::unique_ptr<OpKernel>> make(const OpKernelConstruction& c) {
    std::array<std::shared_ptr<GraphFunction>, 3> functions;
    const char* names[] = {"init_func", "next_func", "finalize_func"};
    for (int i = 0; i < 3; ++i) {
      TROUPE_ASSIGN_OR_RETURN(functions[i], instantiate(c, names[i]));
    }
    return std::unique_ptr<OpKernel>(new GeneratorDatasetKernel(c, std::move(functions)));
  }

 protected:
  StatusOr<std::shared_ptr<const DatasetBase>> make_dataset(OpKernelContext& ctx) override {
    const char* counts[] = {"Tinit_func_args", "Tnext_func_args", "Tfinalize_func_args"};
    std::array<Body, 3> bodies;
    int input = 0;
    for (int i = 0; i < 3; ++i) {
      bodies[i] = Body{functions_[i], {}, ctx.step().container};
      const auto n = node().def().find_attr(counts[i])->get<std::vector<DataType>>().size();
      for (size_t k = 0; k < n; ++k)
        bodies[i].captured.push_back(ctx.input(input++));
    }
    auto types = node().def().find_attr("output_types")->get<std::vector<DataType>>();
    return new_dataset<GeneratorDataset>(node().name(), std::move(types), std::move(bodies[0]),
                                         std::move(bodies[1]), std::move(bodies[2]));
  }

 private:
  std::array<std::shared_ptr<GraphFunction>, 3> functions_;
};

}  // namespace

void register_function_dataset_kernels(KernelRegistry& r) {
  must_add_kernel(r, "GeneratorDataset", kCpu, GeneratorDatasetKernel::make);
  must_add_kernel(r, "MapDataset", kCpu, FunctionDatasetKernel::factory(false));
  must_add_kernel(r, "FilterDataset", kCpu, FunctionDatasetKernel::factory(true));
  must_add_kernel(r, "FlatMapDataset", kCpu, NestedDatasetKernel::factory(false));
  must_add_kernel(r, "InterleaveDataset", kCpu, NestedDatasetKernel::factory(true));
}

}  // namespace troupe::data
