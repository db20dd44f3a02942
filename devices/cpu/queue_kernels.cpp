// CPU kernels for queues: FIFOQueue (find or create the queue), QueueEnqueue and QueueDequeue
// (async: they may wait, and a cancelled step ends the wait), QueueClose, QueueSize.
#include "troupe/devices/cpu/cpu_kernels.hpp"
#include "troupe/devices/fifo_queue.hpp"

namespace troupe {
namespace {

// The queue behind reference input 0, or nullptr after recording the error.
FifoQueue* queue_input(OpKernelContext& ctx) {
  auto* queue = ctx.input_resource<FifoQueue>(0);
  if (queue == nullptr) {
    ctx.fail_invalid("input 0 is {}, not a queue", ctx.input_ref_ptr(0)->debug_name());
  }
  return queue;
}

class FIFOQueueKernel : public OpKernel {
 public:
  explicit FIFOQueueKernel(const OpKernelConstruction& c)
      : OpKernel(c),
        name_(c.attr<std::string>("shared_name").empty() ? c.name()
                                                         : c.attr<std::string>("shared_name")),
        container_(c.attr<std::string>("container")),
        types_(c.attr<std::vector<DataType>>("component_types")),
        shapes_(c.attr<std::vector<PartialShape>>("shapes")),
        capacity_(c.attr<int64_t>("capacity")) {}

  void compute(OpKernelContext& ctx) override {
    const std::string& container = container_.empty() ? ctx.step().container : container_;
    auto queue = ctx.device().resources().lookup_or_create<FifoQueue>(
        container, name_,
        [&]() -> StatusOr<std::shared_ptr<FifoQueue>> {
          return std::make_shared<FifoQueue>(name_, types_, shapes_, capacity_);
        },
        [&](const FifoQueue& existing) -> Status {
          if (existing.component_types() == types_ && existing.capacity() == capacity_) {
            return Status::OK();
          }
          return errors::InvalidArgument(
              "{} already exists with other component types or "
              "capacity",
              existing.debug_name());
        });
    if (!queue.ok()) {
      ctx.fail_invalid("{}", queue.status().message());
      return;
    }
    ctx.set_output_ref(0, std::move(queue).value());
  }

 private:
  std::string name_;
  std::string container_;
  std::vector<DataType> types_;
  std::vector<PartialShape> shapes_;
  int64_t capacity_;
};

// Waits on `queue` through `start(done)`, ending the wait if the step is cancelled.
template <class Start>
void wait_cancellably(OpKernelContext& ctx, const std::shared_ptr<Resource>& keep_alive,
                      FifoQueue& queue, Start start, AsyncOpKernel::DoneCallback done) {
  CancellationManager& cancellation = ctx.step().cancellation;
  if (cancellation.is_cancelled()) {
    ctx.set_status(cancellation.reason());
    done();
    return;
  }
  auto token = std::make_shared<CancellationManager::Token>(CancellationManager::kAlreadyCancelled);
  FifoQueue::Waiter waiter = start([&ctx, &cancellation, token, done](const Status& status) {
    if (*token != CancellationManager::kAlreadyCancelled) cancellation.deregister(*token);
    if (!status.ok()) ctx.set_status(status);
    done();
  });
  if (waiter == FifoQueue::kServed) return;
  *token = cancellation.register_callback(
      [keep_alive, &queue, waiter](const Status& reason) { queue.cancel(waiter, reason); });
}

class QueueEnqueueKernel : public AsyncOpKernel {
 public:
  using AsyncOpKernel::AsyncOpKernel;

  void compute_async(OpKernelContext& ctx, DoneCallback done) override {
    FifoQueue* queue = queue_input(ctx);
    if (queue == nullptr) return done();
    FifoQueue::Tuple tuple;
    for (int i = 1; i < ctx.num_inputs(); ++i)
      tuple.push_back(ctx.input(i));
    if (Status valid = queue->validate(tuple); !valid.ok()) {
      ctx.fail_invalid("{}", valid.message());
      return done();
    }
    wait_cancellably(
        ctx, ctx.input_ref_ptr(0), *queue,
        [&](std::function<void(const Status&)> finish) {
          return queue->enqueue(std::move(tuple), std::move(finish));
        },
        std::move(done));
  }
};

class QueueDequeueKernel : public AsyncOpKernel {
 public:
  using AsyncOpKernel::AsyncOpKernel;

  void compute_async(OpKernelContext& ctx, DoneCallback done) override {
    FifoQueue* queue = queue_input(ctx);
    if (queue == nullptr) return done();
    if (queue->component_types().size() != static_cast<size_t>(ctx.num_outputs())) {
      ctx.fail_invalid("{} has {} components, the dequeue expects {}", queue->debug_name(),
                       queue->component_types().size(), ctx.num_outputs());
      return done();
    }
    wait_cancellably(
        ctx, ctx.input_ref_ptr(0), *queue,
        [&](std::function<void(const Status&)> finish) {
          return queue->dequeue([&ctx, finish](const Status& status, FifoQueue::Tuple tuple) {
            for (size_t i = 0; i < tuple.size(); ++i)
              ctx.set_output(static_cast<int>(i), tuple[i]);
            finish(status);
          });
        },
        std::move(done));
  }
};

class QueueCloseKernel : public OpKernel {
 public:
  explicit QueueCloseKernel(const OpKernelConstruction& c)
      : OpKernel(c), cancel_pending_(c.attr<bool>("cancel_pending_enqueues")) {}
  void compute(OpKernelContext& ctx) override {
    if (FifoQueue* queue = queue_input(ctx)) queue->close(cancel_pending_);
  }

 private:
  bool cancel_pending_;
};

class QueueSizeKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void compute(OpKernelContext& ctx) override {
    if (FifoQueue* queue = queue_input(ctx)) {
      ctx.set_output(0, Tensor(static_cast<int32_t>(queue->size())));
    }
  }
};

}  // namespace

void register_queue_kernels(KernelRegistry& r) {
  must_add_kernel(r, "FIFOQueue", kCpu, simple_kernel<FIFOQueueKernel>());
  must_add_kernel(r, "QueueEnqueue", kCpu, simple_kernel<QueueEnqueueKernel>());
  must_add_kernel(r, "QueueDequeue", kCpu, simple_kernel<QueueDequeueKernel>());
  must_add_kernel(r, "QueueClose", kCpu, simple_kernel<QueueCloseKernel>());
  must_add_kernel(r, "QueueSize", kCpu, simple_kernel<QueueSizeKernel>());
}

}  // namespace troupe
