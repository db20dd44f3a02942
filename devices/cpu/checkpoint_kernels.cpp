// SaveV2 and RestoreV2: tensors (or slices of them) written to and read from a checkpoint on
// this device's task (graph/ops/io_ops.hpp, graph/formats/checkpoint_files.hpp). A read
// decodes only the arrays it needs.
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "troupe/devices/cpu/cpu_kernels.hpp"
#include "troupe/devices/kernel_registry.hpp"
#include "troupe/graph/formats/checkpoint_files.hpp"
#include "troupe/graph/formats/npz.hpp"
#include "troupe/graph/formats/tensor_slice.hpp"

namespace troupe {
namespace {

// SaveV2's and RestoreV2's first three inputs: one prefix, then `count` tensor names and as
// many shape-and-slice specs, one per `each`. False (the step failed) otherwise.
bool check_checkpoint_arguments(OpKernelContext& ctx, int64_t count, std::string_view each) {
  const Tensor& prefix = ctx.input(0);
  const Tensor& names = ctx.input(1);
  const Tensor& specs = ctx.input(2);
  if (prefix.num_elements() != 1) {
    ctx.fail_invalid("prefix must be one string, got shape {}", prefix.shape().to_string());
    return false;
  }
  if (names.rank() != 1 || names.dim(0) != count || specs.rank() != 1 || specs.dim(0) != count) {
    ctx.fail_invalid(
        "tensor_names (shape {}) and shape_and_slices (shape {}) must be vectors of {} strings, "
        "one per {}",
        names.shape().to_string(), specs.shape().to_string(), count, each);
    return false;
  }
  return true;
}

class SaveV2Kernel : public OpKernel {
 public:
  explicit SaveV2Kernel(const OpKernelConstruction& c) : OpKernel(c) {}

  void compute(OpKernelContext& ctx) override {
    const Tensor& prefix = ctx.input(0);
    const Tensor& names = ctx.input(1);
    const Tensor& specs = ctx.input(2);
    const int64_t count = ctx.num_inputs() - 3;
    if (!check_checkpoint_arguments(ctx, count, "tensor")) return;
    NamedTensors named;
    std::set<std::string> seen;
    for (int64_t i = 0; i < count; ++i) {
      const std::string& name = names.flat<std::string>()[i];
      const std::string& spec_text = specs.flat<std::string>()[i];
      const Tensor& value = ctx.input(static_cast<int>(3 + i));
      if (name.empty() || name.find('@') != std::string::npos) {
        ctx.fail_invalid("tensor_names[{}] is '{}': expected a non-empty name without '@'", i,
                         name);
        return;
      }
      StatusOr<TensorSliceSpec> spec = parse_tensor_slice_spec(spec_text);
      if (!spec.ok()) {
        ctx.fail_invalid("shape_and_slices[{}] of '{}': {}", i, name, spec.status().message());
        return;
      }
      if (!spec->whole && value.shape() != TensorShape(spec->length)) {
        ctx.fail_invalid("tensor '{}' has shape {}, its slice '{}' is {}", name,
                         value.shape().to_string(), spec_text,
                         TensorShape(spec->length).to_string());
        return;
      }
      std::string key = spec->whole ? name : checkpoint_slice_key(name, spec_text);
      if (!seen.insert(key).second) {
        ctx.fail_invalid("tensor '{}' is given twice", key);
        return;
      }
      named.emplace_back(std::move(key), value);
    }
    const std::string file = prefix.flat<std::string>()[0] + ".npz";
    // As TensorFlow's SaveV2, the directory is made if need be (on this task's file system:
    // the saver then checks that its own task sees the file).
    std::error_code ec;
    const std::filesystem::path dir = std::filesystem::path(file).parent_path();
    if (!dir.empty()) std::filesystem::create_directories(dir, ec);
    Status written = write_npz(file, named);
    if (!written.ok()) {
      ctx.set_status(written.with_context(fmt::format("node '{}' (SaveV2)", node().name())));
    }
  }
};

class RestoreV2Kernel : public OpKernel {
 public:
  explicit RestoreV2Kernel(const OpKernelConstruction& c)
      : OpKernel(c), dtypes_(c.attr<std::vector<DataType>>("dtypes")) {}

  void compute(OpKernelContext& ctx) override {
    const Tensor& prefix = ctx.input(0);
    const Tensor& names = ctx.input(1);
    const Tensor& specs = ctx.input(2);
    const auto count = static_cast<int64_t>(dtypes_.size());
    if (!check_checkpoint_arguments(ctx, count, "dtype")) return;
    const std::string file = prefix.flat<std::string>()[0];
    const std::vector<std::string> wanted(names.flat<std::string>().begin(),
                                          names.flat<std::string>().end());
    const std::string where = fmt::format("node '{}' (RestoreV2)", node().name());
    std::vector<TensorSliceSpec> slices;
    for (int64_t i = 0; i < count; ++i) {
      StatusOr<TensorSliceSpec> spec = parse_tensor_slice_spec(specs.flat<std::string>()[i]);
      if (!spec.ok()) {
        ctx.set_status(spec.status().with_context(
            fmt::format("{}: tensor '{}' of checkpoint '{}'", where, wanted[i], file)));
        return;
      }
      slices.push_back(*std::move(spec));
    }
    std::string shown;
    StatusOr<std::vector<Tensor>> tensors = read_checkpoint_tensors(file, wanted, slices, &shown);
    if (!tensors.ok()) {
      ctx.set_status(tensors.status().with_context(where));
      return;
    }
    for (int64_t i = 0; i < count; ++i) {
      Tensor& value = (*tensors)[i];
      if (value.dtype() != dtypes_[i]) {
        ctx.set_status(errors::InvalidArgument(
            "{}: tensor '{}' of checkpoint '{}' is {}, expected {} (dtypes[{}])", where, wanted[i],
            shown, dtype_name(value.dtype()), dtype_name(dtypes_[i]), i));
        return;
      }
      ctx.set_output(static_cast<int>(i), std::move(value));
    }
  }

 private:
  std::vector<DataType> dtypes_;
};

}  // namespace

void register_checkpoint_kernels(KernelRegistry& r) {
  must_add_kernel(r, "RestoreV2", kCpu, simple_kernel<RestoreV2Kernel>());
  must_add_kernel(r, "SaveV2", kCpu, simple_kernel<SaveV2Kernel>());
}

}  // namespace troupe
