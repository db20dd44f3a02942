// Iterators as resources of the device: Iterator (find or create one, not yet started),
// OneShotIterator (the same, started on its dataset the first time it runs), MakeIterator
// (start, or restart, an iterator on a dataset: the dtypes must be those it declares) and
// IteratorGetNext (the next element, checked against the declared shapes; OutOfRange
// "End of sequence" at the end, FailedPrecondition before MakeIterator), as TensorFlow's;
// IteratorToStringHandle and IteratorFromStringHandle, for feedable iterators: the handle is
// "<device>\n<container>\n<name>" and is found again on that device only.
#include <mutex>

#include "troupe/devices/data/dataset_kernel.hpp"

namespace troupe::data {
namespace {

class IteratorResource : public Resource {
 public:
  IteratorResource(std::string name, std::vector<DataType> types, std::vector<PartialShape> shapes)
      : name_(std::move(name)), types_(std::move(types)), shapes_(std::move(shapes)) {}

  std::string debug_name() const override { return "iterator '" + name_ + "'"; }
  const std::string& name() const { return name_; }
  // Where it is kept, for its string handle: the container, set when it is made.
  std::string container;
  const std::vector<DataType>& types() const { return types_; }
  const std::vector<PartialShape>& shapes() const { return shapes_; }

  // Starts over on `dataset`.
  Status make(const DatasetBase& dataset) {
    if (dataset.output_types() != types_) {
      return errors::InvalidArgument("{} yields elements of types {}; {} has elements of types {}",
                                     debug_name(), types_string(types_), dataset.debug_name(),
                                     types_string(dataset.output_types()));
    }
    auto iterator = dataset.make_iterator();
    std::lock_guard lock(mutex_);
    iterator_ = std::move(iterator);
    return Status::OK();
  }

  bool started() const {
    std::lock_guard lock(mutex_);
    return iterator_ != nullptr;
  }

  Status get_next(Element* out, bool* end) {
    std::lock_guard lock(mutex_);
    if (iterator_ == nullptr) {
      return errors::FailedPrecondition(
          "GetNext() failed because the iterator has not been initialized. Ensure that you "
          "have run the initializer operation for this iterator before getting the next "
          "element ({})",
          debug_name());
    }
    TROUPE_RETURN_IF_ERROR(iterator_->get_next(out, end));
    if (*end) return Status::OK();
    for (size_t i = 0; i < out->size() && i < shapes_.size(); ++i) {
      if (!shapes_[i].matches((*out)[i].shape())) {
        return errors::InvalidArgument("{}: component {} has shape {}, declared {}", debug_name(),
                                       i, (*out)[i].shape().to_string(), shapes_[i].to_string());
      }
    }
    return Status::OK();
  }

 private:
  std::string name_;
  std::vector<DataType> types_;
  std::vector<PartialShape> shapes_;
  mutable std::mutex mutex_;
  std::unique_ptr<IteratorBase> iterator_;
};

StatusOr<std::shared_ptr<IteratorResource>> find_or_create(
    OpKernelContext& ctx, const std::string& container_attr, const std::string& name,
    const std::vector<DataType>& types, const std::vector<PartialShape>& shapes) {
  const std::string& container = container_attr.empty() ? ctx.step().container : container_attr;
  return ctx.device().resources().lookup_or_create<IteratorResource>(
      container, name,
      [&]() -> StatusOr<std::shared_ptr<IteratorResource>> {
        auto made = std::make_shared<IteratorResource>(name, types, shapes);
        made->container = container;
        return made;
      },
      [&](const IteratorResource& existing) -> Status {
        if (existing.types() == types) return Status::OK();
        return invalid(ctx, "{} already exists with element types {}", existing.debug_name(),
                       types_string(existing.types()));
      });
}

class IteratorKernel : public OpKernel {
 public:
  explicit IteratorKernel(const OpKernelConstruction& c)
      : OpKernel(c),
        name_(c.attr<std::string>("shared_name").empty() ? c.name()
                                                         : c.attr<std::string>("shared_name")),
        container_(c.attr<std::string>("container")),
        types_(c.attr<std::vector<DataType>>("output_types")),
        shapes_(c.attr<std::vector<PartialShape>>("output_shapes")),
        one_shot_(c.node().op_name() == "OneShotIterator") {}

  void compute(OpKernelContext& ctx) override {
    auto iterator = find_or_create(ctx, container_, name_, types_, shapes_);
    if (!iterator.ok()) return ctx.set_status(iterator.status());
    if (one_shot_ && !(*iterator)->started()) {
      auto dataset = dataset_input(ctx, 0);
      if (!dataset.ok()) return ctx.set_status(dataset.status());
      if (Status made = (*iterator)->make(**dataset); !made.ok()) return ctx.set_status(made);
    }
    ctx.set_output_ref(0, std::move(iterator).value());
  }

 private:
  std::string name_;
  std::string container_;
  std::vector<DataType> types_;
  std::vector<PartialShape> shapes_;
  bool one_shot_;
};

IteratorResource* iterator_input(OpKernelContext& ctx, int i) {
  auto* iterator = ctx.input_resource<IteratorResource>(i);
  if (iterator == nullptr) {
    const auto& ref = ctx.input_ref_ptr(i);
    ctx.fail_invalid("input {} is {}, not an iterator", i,
                     ref ? ref->debug_name() : std::string("empty"));
  }
  return iterator;
}

class MakeIteratorKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void compute(OpKernelContext& ctx) override {
    auto dataset = dataset_input(ctx, 0);
    if (!dataset.ok()) return ctx.set_status(dataset.status());
    IteratorResource* iterator = iterator_input(ctx, 1);
    if (iterator == nullptr) return;
    if (Status made = iterator->make(**dataset); !made.ok()) ctx.set_status(made);
  }
};

class IteratorGetNextKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void compute(OpKernelContext& ctx) override {
    IteratorResource* iterator = iterator_input(ctx, 0);
    if (iterator == nullptr) return;
    Element element;
    bool end = false;
    if (Status status = iterator->get_next(&element, &end); !status.ok()) {
      return ctx.set_status(status);
    }
    if (end)
      return ctx.set_status(errors::OutOfRange("End of sequence ({})", iterator->debug_name()));
    if (static_cast<int>(element.size()) != ctx.num_outputs()) {
      return ctx.fail_invalid("{} yielded {} components, the node has {} outputs",
                              iterator->debug_name(), element.size(), ctx.num_outputs());
    }
    for (int i = 0; i < ctx.num_outputs(); ++i)
      ctx.set_output(i, std::move(element[i]));
  }
};

class IteratorToStringHandleKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;
  void compute(OpKernelContext& ctx) override {
    IteratorResource* iterator = iterator_input(ctx, 0);
    if (iterator == nullptr) return;
    ctx.set_output(0, Tensor(fmt::format("{}\n{}\n{}", ctx.device().name(), iterator->container,
                                         iterator->name())));
  }
};

class IteratorFromStringHandleKernel : public OpKernel {
 public:
  explicit IteratorFromStringHandleKernel(const OpKernelConstruction& c)
      : OpKernel(c), types_(c.attr<std::vector<DataType>>("output_types")) {}

  void compute(OpKernelContext& ctx) override {
    const Tensor& handle = ctx.input(0);
    if (handle.dtype() != DataType::kString || handle.rank() != 0) {
      return ctx.fail_invalid("string_handle must be a string scalar, got {} of shape {}",
                              dtype_name(handle.dtype()), handle.shape().to_string());
    }
    const std::string& text = handle.scalar<std::string>();
    size_t first = text.find('\n'), second = text.find('\n', first + 1);
    if (first == std::string::npos || second == std::string::npos) {
      return ctx.fail_invalid(
          "'{}' is not an iterator's string handle (make one with "
          "Iterator.string_handle())",
          text);
    }
    std::string device = text.substr(0, first);
    if (device != ctx.device().name()) {
      return ctx.fail_invalid(
          "the handle names an iterator of {}; this op runs on {} (build "
          "it on the iterator's device)",
          device, ctx.device().name());
    }
    std::string name = text.substr(second + 1);
    auto found = std::dynamic_pointer_cast<IteratorResource>(
        ctx.device().resources().find(text.substr(first + 1, second - first - 1), name));
    if (found == nullptr) {
      return ctx.set_status(
          errors::NotFound("node '{}': no iterator '{}' on {}", ctx.node().name(), name, device));
    }
    if (found->types() != types_) {
      return ctx.fail_invalid("{} yields elements of types {}; this iterator declares {}",
                              found->debug_name(), types_string(found->types()),
                              types_string(types_));
    }
    ctx.set_output_ref(0, std::move(found));
  }

 private:
  std::vector<DataType> types_;
};

}  // namespace

void register_iterator_kernels(KernelRegistry& r) {
  must_add_kernel(r, "IteratorToStringHandle", kCpu, simple_kernel<IteratorToStringHandleKernel>());
  must_add_kernel(r, "IteratorFromStringHandle", kCpu,
                  simple_kernel<IteratorFromStringHandleKernel>());
  must_add_kernel(r, "Iterator", kCpu, simple_kernel<IteratorKernel>());
  must_add_kernel(r, "OneShotIterator", kCpu, simple_kernel<IteratorKernel>());
  must_add_kernel(r, "MakeIterator", kCpu, simple_kernel<MakeIteratorKernel>());
  must_add_kernel(r, "IteratorGetNext", kCpu, simple_kernel<IteratorGetNextKernel>());
}

}  // namespace troupe::data
