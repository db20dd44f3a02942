// The PyFunc kernels: the handler's call, its results checked against Tout.
#include "troupe/devices/py_func.hpp"

#include <memory>
#include <mutex>

#include "troupe/devices/cpu/cpu_kernels.hpp"

namespace troupe {
namespace {

std::mutex handler_mutex;
std::shared_ptr<PyFuncHandler>& installed_handler() {
  static auto* handler = new std::shared_ptr<PyFuncHandler>();
  return *handler;
}

class PyFuncKernel : public OpKernel {
 public:
  explicit PyFuncKernel(const OpKernelConstruction& c)
      : OpKernel(c),
        token_(c.attr<std::string>("token")),
        types_(c.attr<std::vector<DataType>>("Tout")) {}

  void compute(OpKernelContext& ctx) override {
    std::shared_ptr<PyFuncHandler> handler;
    {
      std::lock_guard lock(handler_mutex);
      handler = installed_handler();
    }
    if (handler == nullptr) {
      ctx.set_status(errors::FailedPrecondition(
          "node '{}' ({}): no Python interpreter in this process to run '{}': a py_func runs "
          "in the process of the Python program that built it",
          node().name(), node().op_name(), token_));
      return;
    }
    std::vector<Tensor> args;
    for (int i = 0; i < ctx.num_inputs(); ++i)
      args.push_back(ctx.input(i));
    std::vector<Tensor> results;
    Status called = (*handler)(token_, std::move(args), &results);
    if (!called.ok()) {
      ctx.set_status(called.with_context(
          fmt::format("node '{}' ({}): {}", node().name(), node().op_name(), token_)));
      return;
    }
    if (results.size() != types_.size()) {
      ctx.fail_invalid("{} returned {} values, the op declares {}", token_, results.size(),
                       types_.size());
      return;
    }
    for (size_t i = 0; i < results.size(); ++i) {
      if (results[i].dtype() != types_[i]) {
        ctx.fail_invalid("{}-th value returned by {} is {}, but expects {}", i, token_,
                         dtype_name(results[i].dtype()), dtype_name(types_[i]));
        return;
      }
      ctx.set_output(static_cast<int>(i), std::move(results[i]));
    }
  }

 private:
  std::string token_;
  std::vector<DataType> types_;
};

}  // namespace

void set_py_func_handler(PyFuncHandler handler) {
  std::lock_guard lock(handler_mutex);
  installed_handler() = handler ? std::make_shared<PyFuncHandler>(std::move(handler)) : nullptr;
}

void register_py_func_kernels(KernelRegistry& r) {
  must_add_kernel(r, "PyFunc", kCpu, simple_kernel<PyFuncKernel>());
  must_add_kernel(r, "PyFuncStateless", kCpu, simple_kernel<PyFuncKernel>());
}

}  // namespace troupe
