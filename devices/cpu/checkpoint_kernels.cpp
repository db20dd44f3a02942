// RestoreV2: tensors (or slices of them) read from a .npz checkpoint on this device's task
// (graph/ops/io_ops.hpp). The archive is read once per run and only the named arrays are
// decoded.
#include <string>
#include <vector>

#include "troupe/devices/cpu/cpu_kernels.hpp"
#include "troupe/devices/kernel_registry.hpp"
#include "troupe/graph/formats/npz.hpp"
#include "troupe/graph/formats/tensor_slice.hpp"

namespace troupe {
namespace {

// Where the checkpoint `prefix` lies: "<prefix>.npz", or the prefix itself when it names the
// .npz file.
std::string checkpoint_file(const std::string& prefix) {
  return prefix.ends_with(".npz") ? prefix : prefix + ".npz";
}

class RestoreV2Kernel : public OpKernel {
 public:
  explicit RestoreV2Kernel(const OpKernelConstruction& c)
      : OpKernel(c), dtypes_(c.attr<std::vector<DataType>>("dtypes")) {}

  void compute(OpKernelContext& ctx) override {
    const Tensor& prefix = ctx.input(0);
    const Tensor& names = ctx.input(1);
    const Tensor& specs = ctx.input(2);
    if (prefix.num_elements() != 1) {
      ctx.fail_invalid("prefix must be one string, got shape {}", prefix.shape().to_string());
      return;
    }
    const auto count = static_cast<int64_t>(dtypes_.size());
    if (names.rank() != 1 || names.dim(0) != count || specs.rank() != 1 || specs.dim(0) != count) {
      ctx.fail_invalid(
          "tensor_names (shape {}) and shape_and_slices (shape {}) must be vectors "
          "of {} strings, one per dtype",
          names.shape().to_string(), specs.shape().to_string(), count);
      return;
    }
    const std::string file = checkpoint_file(prefix.flat<std::string>()[0]);
    const std::vector<std::string> wanted(names.flat<std::string>().begin(),
                                          names.flat<std::string>().end());
    const std::string where = fmt::format("node '{}' (RestoreV2)", node().name());
    StatusOr<std::vector<Tensor>> tensors = read_npz_tensors(file, wanted);
    if (!tensors.ok()) {
      ctx.set_status(tensors.status().with_context(where));
      return;
    }
    for (int64_t i = 0; i < count; ++i) {
      const Tensor& whole = (*tensors)[i];
      const std::string what =
          fmt::format("{}: tensor '{}' of checkpoint '{}'", where, wanted[i], file);
      if (whole.dtype() != dtypes_[i]) {
        ctx.set_status(errors::InvalidArgument("{} is {}, expected {} (dtypes[{}])", what,
                                               dtype_name(whole.dtype()), dtype_name(dtypes_[i]),
                                               i));
        return;
      }
      StatusOr<TensorSliceSpec> spec = parse_tensor_slice_spec(specs.flat<std::string>()[i]);
      if (!spec.ok()) {
        ctx.set_status(spec.status().with_context(what));
        return;
      }
      StatusOr<Tensor> slice = slice_of(whole, *spec, what);
      if (!slice.ok()) {
        ctx.set_status(slice.status());
        return;
      }
      ctx.set_output(static_cast<int>(i), *std::move(slice));
    }
  }

 private:
  std::vector<DataType> dtypes_;
};

}  // namespace

void register_checkpoint_kernels(KernelRegistry& r) {
  must_add_kernel(r, "RestoreV2", kCpu, simple_kernel<RestoreV2Kernel>());
}

}  // namespace troupe
