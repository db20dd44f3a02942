// Datasets that run a function of the graph on every element (devices/graph_function.hpp):
//   MapDataset     the element becomes what `f` returns for it (with the captured arguments
//                  after the element's components); results must have the declared dtypes
//   FilterDataset  keeps the elements for which `predicate` returns a true bool scalar
// The function is instantiated once per node, when its kernel is built, and runs on the thread
// that asks for the element. num_parallel_calls is accepted; calls run one at a time.
#include "troupe/devices/data/dataset_kernel.hpp"
#include "troupe/devices/graph_function.hpp"

namespace troupe::data {
namespace {

struct Body {
  std::shared_ptr<GraphFunction> function;
  Element captured;
  std::string container;

  StatusOr<Element> call(const Element& element) const {
    Element args = element;
    args.insert(args.end(), captured.begin(), captured.end());
    return function->call(std::move(args), container);
  }
};

class FunctionDataset : public DatasetBase {
 public:
  FunctionDataset(std::string node, std::vector<DataType> types,
                  std::shared_ptr<const DatasetBase> input, Body body, bool filter)
      : DatasetBase(std::move(node), std::move(types)),
        input_(std::move(input)),
        body_(std::move(body)),
        filter_(filter) {}

  std::unique_ptr<IteratorBase> make_iterator() const override {
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
};

class FunctionDatasetKernel : public DatasetOpKernel {
 public:
  FunctionDatasetKernel(const OpKernelConstruction& c, std::shared_ptr<GraphFunction> function,
                        bool filter)
      : DatasetOpKernel(c), function_(std::move(function)), filter_(filter) {}

  static KernelFactory factory(bool filter) {
    return [filter](const OpKernelConstruction& c) -> StatusOr<std::unique_ptr<OpKernel>> {
      const char* attr = filter ? "predicate" : "f";
      TROUPE_ASSIGN_OR_RETURN(auto function, GraphFunction::instantiate(
                                                 c.attr<std::string>(attr), c.device(),
                                                 fmt::format("node '{}' ({}): function {}",
                                                             c.name(), c.node().op_name(), attr)));
      return std::unique_ptr<OpKernel>(new FunctionDatasetKernel(c, std::move(function), filter));
    };
  }

 protected:
  StatusOr<std::shared_ptr<const DatasetBase>> make_dataset(OpKernelContext& ctx) override {
    TROUPE_ASSIGN_OR_RETURN(auto input, dataset_input(ctx, 0));
    Body body{function_, {}, ctx.step().container};
    for (int i = 1; i < ctx.num_inputs(); ++i)
      body.captured.push_back(ctx.input(i));
    int expected = static_cast<int>(input->output_types().size() + body.captured.size());
    if (function_->num_args() != expected) {
      return invalid(ctx,
                     "the function takes {} arguments; the element has {} components and {} "
                     "are captured",
                     function_->num_args(), input->output_types().size(), body.captured.size());
    }
    std::vector<DataType> types =
        filter_ ? input->output_types()
                : node().def().find_attr("output_types")->get<std::vector<DataType>>();
    return new_dataset<FunctionDataset>(node().name(), std::move(types), std::move(input),
                                        std::move(body), filter_);
  }

 private:
  std::shared_ptr<GraphFunction> function_;
  bool filter_;
};

}  // namespace

void register_function_dataset_kernels(KernelRegistry& r) {
  must_add_kernel(r, "MapDataset", kCpu, FunctionDatasetKernel::factory(false));
  must_add_kernel(r, "FilterDataset", kCpu, FunctionDatasetKernel::factory(true));
}

}  // namespace troupe::data
