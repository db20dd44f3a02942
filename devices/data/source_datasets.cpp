// Datasets made from tensors: TensorSliceDataset (one element per row of its components),
// TensorDataset (one element: the components), RangeDataset (int64 start, start + step, ...
// before stop). They hold their input tensors without copying them; an element is a copy.
#include <utility>

#include "troupe/devices/cpu/array_layout.hpp"
#include "troupe/devices/data/dataset_kernel.hpp"

namespace troupe::data {
namespace {

std::vector<DataType> dtypes_of(const Element& tensors) {
  std::vector<DataType> types;
  for (const Tensor& t : tensors)
    types.push_back(t.dtype());
  return types;
}

Element input_tensors(const OpKernelContext& ctx) {
  Element tensors;
  for (int i = 0; i < ctx.num_inputs(); ++i)
    tensors.push_back(ctx.input(i));
  return tensors;
}

// Row `row` of `t` (whose first dimension it indexes), copied.
Tensor row_of(const Tensor& t, int64_t row) {
  std::vector<int64_t> rest(t.shape().dims().begin() + 1, t.shape().dims().end());
  Tensor out(t.dtype(), TensorShape(rest));
  int64_t size = out.num_elements();
  if (size > 0) strided_copy(t, {row * size, {1}}, out, {0, {1}}, {size});
  return out;
}

class TensorSliceDataset : public DatasetBase {
 public:
  TensorSliceDataset(std::string node, Element components)
      : DatasetBase(std::move(node), dtypes_of(components)),
        components_(std::move(components)),
        rows_(components_.front().dim(0)) {}

  std::unique_ptr<IteratorBase> make_iterator() const override {
    return std::make_unique<Iterator>(self<TensorSliceDataset>());
  }

 private:
  class Iterator : public IteratorBase {
   public:
    explicit Iterator(std::shared_ptr<const TensorSliceDataset> dataset)
        : dataset_(std::move(dataset)) {}
    Status get_next(Element* out, bool* end) override {
      *end = next_ >= dataset_->rows_;
      if (*end) return Status::OK();
      out->clear();
      for (const Tensor& component : dataset_->components_)
        out->push_back(row_of(component, next_));
      ++next_;
      return Status::OK();
    }

   private:
    std::shared_ptr<const TensorSliceDataset> dataset_;
    int64_t next_ = 0;
  };

  Element components_;
  int64_t rows_;
};

class TensorSliceDatasetKernel : public DatasetOpKernel {
 public:
  using DatasetOpKernel::DatasetOpKernel;

 protected:
  StatusOr<std::shared_ptr<const DatasetBase>> make_dataset(OpKernelContext& ctx) override {
    Element components = input_tensors(ctx);
    if (components.empty()) return invalid(ctx, "no components to slice");
    for (size_t i = 0; i < components.size(); ++i) {
      if (components[i].rank() == 0) {
        return invalid(ctx, "component {} is a scalar: slicing needs at least one dimension", i);
      }
      if (components[i].dim(0) != components[0].dim(0)) {
        return invalid(ctx,
                       "components must have the same first dimension: component 0 has shape "
                       "{}, component {} has shape {}",
                       components[0].shape().to_string(), i, components[i].shape().to_string());
      }
    }
    return new_dataset<TensorSliceDataset>(node().name(), std::move(components));
  }
};

class TensorDataset : public DatasetBase {
 public:
  TensorDataset(std::string node, Element components)
      : DatasetBase(std::move(node), dtypes_of(components)), components_(std::move(components)) {}

  std::unique_ptr<IteratorBase> make_iterator() const override {
    return std::make_unique<Iterator>(self<TensorDataset>());
  }

 private:
  class Iterator : public IteratorBase {
   public:
    explicit Iterator(std::shared_ptr<const TensorDataset> dataset)
        : dataset_(std::move(dataset)) {}
    Status get_next(Element* out, bool* end) override {
      *end = done_;
      if (!done_) *out = dataset_->components_;
      done_ = true;
      return Status::OK();
    }

   private:
    std::shared_ptr<const TensorDataset> dataset_;
    bool done_ = false;
  };

  Element components_;
};

class TensorDatasetKernel : public DatasetOpKernel {
 public:
  using DatasetOpKernel::DatasetOpKernel;

 protected:
  StatusOr<std::shared_ptr<const DatasetBase>> make_dataset(OpKernelContext& ctx) override {
    Element components = input_tensors(ctx);
    if (components.empty()) return invalid(ctx, "an element needs at least one component");
    return new_dataset<TensorDataset>(node().name(), std::move(components));
  }
};

class RangeDataset : public DatasetBase {
 public:
  RangeDataset(std::string node, int64_t start, int64_t stop, int64_t step)
      : DatasetBase(std::move(node), {DataType::kInt64}), start_(start), stop_(stop), step_(step) {}

  std::unique_ptr<IteratorBase> make_iterator() const override {
    return std::make_unique<Iterator>(self<RangeDataset>());
  }

 private:
  class Iterator : public IteratorBase {
   public:
    explicit Iterator(std::shared_ptr<const RangeDataset> dataset)
        : dataset_(std::move(dataset)), next_(dataset_->start_) {}
    Status get_next(Element* out, bool* end) override {
      *end = dataset_->step_ > 0 ? next_ >= dataset_->stop_ : next_ <= dataset_->stop_;
      if (*end) return Status::OK();
      *out = {Tensor(next_)};
      next_ += dataset_->step_;
      return Status::OK();
    }

   private:
    std::shared_ptr<const RangeDataset> dataset_;
    int64_t next_;
  };

  int64_t start_, stop_, step_;
};

class RangeDatasetKernel : public DatasetOpKernel {
 public:
  using DatasetOpKernel::DatasetOpKernel;

 protected:
  StatusOr<std::shared_ptr<const DatasetBase>> make_dataset(OpKernelContext& ctx) override {
    TROUPE_ASSIGN_OR_RETURN(int64_t start, scalar_input<int64_t>(ctx, 0, "start"));
    TROUPE_ASSIGN_OR_RETURN(int64_t stop, scalar_input<int64_t>(ctx, 1, "stop"));
    TROUPE_ASSIGN_OR_RETURN(int64_t step, scalar_input<int64_t>(ctx, 2, "step"));
    if (step == 0) return invalid(ctx, "step must be a non-zero integer");
    return new_dataset<RangeDataset>(node().name(), start, stop, step);
  }
};

}  // namespace

void register_source_dataset_kernels(KernelRegistry& r) {
  must_add_kernel(r, "TensorSliceDataset", kCpu, simple_kernel<TensorSliceDatasetKernel>());
  must_add_kernel(r, "TensorDataset", kCpu, simple_kernel<TensorDatasetKernel>());
  must_add_kernel(r, "RangeDataset", kCpu, simple_kernel<RangeDatasetKernel>());
}

}  // namespace troupe::data
