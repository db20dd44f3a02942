// CPU kernels for the runtime's _Send and _Recv: the two ends of an edge between devices.
// _Send hands its tensor to the receiving device at once; _Recv waits for it (async), and a
// cancelled step ends the wait. A _Send whose input is dead (downstream of a cond's untaken
// side) sends an uninitialised Tensor, and the _Recv's output is then dead (executor.hpp).
#include "troupe/devices/cpu/cpu_kernels.hpp"

namespace troupe {
namespace {

struct EdgeAttrs {
  explicit EdgeAttrs(const OpKernelConstruction& c)
      : tensor_name(c.attr<std::string>("tensor_name")),
        send_device(c.attr<std::string>("send_device")),
        recv_device(c.attr<std::string>("recv_device")),
        key(rendezvous_key(send_device, recv_device, tensor_name)) {}
  std::string tensor_name, send_device, recv_device, key;
};

Rendezvous* rendezvous_of(OpKernelContext& ctx) {
  if (ctx.step().rendezvous == nullptr) {
    ctx.set_status(
        errors::Internal("node '{}': this step has no rendezvous for cross-device "
                         "edges",
                         ctx.node().name()));
  }
  return ctx.step().rendezvous;
}

class SendKernel : public OpKernel {
 public:
  explicit SendKernel(const OpKernelConstruction& c) : OpKernel(c), edge_(c) {}
  void compute(OpKernelContext& ctx) override {
    Rendezvous* rendezvous = rendezvous_of(ctx);
    if (rendezvous == nullptr) return;
    // An uninitialised tensor on the wire means "dead": a live one must have a value.
    if (!ctx.inputs_dead() && !ctx.input(0).is_initialized()) {
      return ctx.set_status(
          errors::Internal("node '{}' (_Send): its live input has no value", ctx.node().name()));
    }
    ctx.set_status(rendezvous->send(edge_.recv_device, ctx.step().step_id, edge_.key,
                                    ctx.inputs_dead() ? Tensor() : ctx.input(0)));
  }

 private:
  EdgeAttrs edge_;
};

class RecvKernel : public AsyncOpKernel {
 public:
  explicit RecvKernel(const OpKernelConstruction& c)
      : AsyncOpKernel(c), edge_(c), dtype_(c.attr<DataType>("tensor_type")) {}

  void compute_async(OpKernelContext& ctx, DoneCallback done) override {
    Rendezvous* rendezvous = rendezvous_of(ctx);
    if (rendezvous == nullptr) return done();
    int64_t step = ctx.step().step_id;
    CancellationManager& cancellation = ctx.step().cancellation;
    auto token = cancellation.register_callback(
        [rendezvous, step](const Status& reason) { rendezvous->abort_step(step, reason); });
    if (token == CancellationManager::kAlreadyCancelled) {
      ctx.set_status(cancellation.reason());
      return done();
    }
    rendezvous->recv(
        step, edge_.key,
        [this, &ctx, &cancellation, token, done](const Status& status, const Tensor& value) {
          cancellation.deregister(token);
          if (!status.ok()) {
            ctx.set_status(status);
          } else if (!value.is_initialized()) {
            ctx.set_output_dead(0);
          } else if (value.dtype() != dtype_) {
            ctx.set_status(errors::Internal("node '{}': received {} from {}, expected {}",
                                            node().name(), dtype_name(value.dtype()),
                                            edge_.send_device, dtype_name(dtype_)));
          } else {
            ctx.set_output(0, value);
          }
          done();
        });
  }

 private:
  EdgeAttrs edge_;
  DataType dtype_;
};

}  // namespace

void register_sendrecv_kernels(KernelRegistry& r) {
  must_add_kernel(r, "_Send", kCpu, simple_kernel<SendKernel>());
  must_add_kernel(r, "_Recv", kCpu, simple_kernel<RecvKernel>());
}

}  // namespace troupe
