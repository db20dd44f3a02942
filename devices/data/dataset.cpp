// DatasetBase's helpers and DatasetOpKernel.
#include "troupe/devices/data/dataset.hpp"

#include <fmt/format.h>

#include "troupe/devices/data/dataset_kernel.hpp"

namespace troupe::data {

std::string types_string(const std::vector<DataType>& types) {
  std::string out = "[";
  for (size_t i = 0; i < types.size(); ++i) {
    if (i > 0) out += ", ";
    out += dtype_name(types[i]);
  }
  return out + "]";
}

void DatasetOpKernel::compute(OpKernelContext& ctx) {
  auto dataset = make_dataset(ctx);
  if (!dataset.ok()) {
    ctx.set_status(dataset.status());
    return;
  }
  // Datasets are immutable; the reference edge type is not const.
  ctx.set_output_ref(0, std::const_pointer_cast<DatasetBase>(std::move(dataset).value()));
}

StatusOr<std::shared_ptr<const DatasetBase>> dataset_input(const OpKernelContext& ctx, int i) {
  auto dataset = std::dynamic_pointer_cast<const DatasetBase>(ctx.input_ref_ptr(i));
  if (dataset == nullptr) {
    const auto& ref = ctx.input_ref_ptr(i);
    return invalid(ctx, "input {} is {}, not a dataset", i,
                   ref ? ref->debug_name() : std::string("empty"));
  }
  return dataset;
}

}  // namespace troupe::data
