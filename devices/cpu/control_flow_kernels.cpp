// CPU kernels for Switch, Merge, Assert, CheckNumerics and While (graph/ops/control_flow_ops.hpp).
// Switch forwards its data to the taken side and marks the other dead. Merge never runs as a
// kernel: the executor forwards its live input itself (devices/executor.hpp), so this kernel only
// reports a misuse.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

#include "troupe/devices/cpu/cpu_kernels.hpp"
#include "troupe/devices/graph_function.hpp"

namespace troupe {
namespace {

class SwitchKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void compute(OpKernelContext& ctx) override {
    const Tensor& pred = ctx.input(1);
    if (pred.rank() != 0) {
      ctx.fail_invalid("pred must be a scalar, got shape {}", pred.shape().to_string());
      return;
    }
    const bool taken = pred.scalar<bool>();
    ctx.set_output(taken ? 1 : 0, ctx.input(0));
    ctx.set_output_dead(taken ? 0 : 1);
  }
};

class MergeKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void compute(OpKernelContext& ctx) override {
    ctx.set_status(
        errors::Internal("node '{}' (Merge) ran as a kernel: the executor forwards "
                         "Merge's live input",
                         node().name()));
  }
};

class AssertKernel : public OpKernel {
 public:
  explicit AssertKernel(const OpKernelConstruction& c)
      : OpKernel(c), summarize_(static_cast<int>(c.attr<int64_t>("summarize"))) {}

  void compute(OpKernelContext& ctx) override {
    const Tensor& condition = ctx.input(0);
    if (condition.rank() != 0) {
      ctx.fail_invalid("condition must be a scalar, got shape {}", condition.shape().to_string());
      return;
    }
    if (condition.scalar<bool>()) return;
    // As TensorFlow's: each data tensor in brackets; a string scalar as it is.
    std::string message = "assertion failed:";
    for (int i = 1; i < ctx.num_inputs(); ++i) {
      const Tensor& t = ctx.input(i);
      message += " [";
      message += t.dtype() == DataType::kString && t.rank() == 0 ? t.scalar<std::string>()
                                                                 : t.summarize(summarize_);
      message += "]";
    }
    ctx.set_status(errors::InvalidArgument("node '{}' (Assert): {}", node().name(), message));
  }

 private:
  int summarize_;
};

class CheckNumericsKernel : public OpKernel {
 public:
  explicit CheckNumericsKernel(const OpKernelConstruction& c)
      : OpKernel(c), message_(c.attr<std::string>("message")) {}

  void compute(OpKernelContext& ctx) override {
    const Tensor& t = ctx.input(0);
    bool nan = false, inf = false;
    if (t.dtype() == DataType::kFloat) {
      scan(t.flat<float>(), &nan, &inf);
    } else if (t.dtype() == DataType::kDouble) {
      scan(t.flat<double>(), &nan, &inf);
    } else {
      ctx.fail_invalid("CheckNumerics takes a floating-point tensor, got {}",
                       dtype_name(t.dtype()));
      return;
    }
    if (nan || inf) {
      // TensorFlow's wording.
      ctx.set_status(errors::InvalidArgument("node '{}' (CheckNumerics): {} : Tensor had {} values",
                                             node().name(), message_,
                                             nan && inf ? "NaN and Inf"
                                             : nan      ? "NaN"
                                                        : "Inf"));
      return;
    }
    ctx.set_output(0, t);
  }

 private:
  template <class Values>
  static void scan(const Values& values, bool* nan, bool* inf) {
    for (auto v : values) {
      if (std::isnan(v)) *nan = true;
      if (std::isinf(v)) *inf = true;
    }
  }

  std::string message_;
};

// tf.while_loop: cond and body are functions, called one after the other until cond is false
// (graph/ops/control_flow_ops.cpp, While). The loop runs in slices of about kSlice on the
// device's thread and goes back to the device between slices (StepContext::schedule), so a
// cancelled step (its deadline passed, its client went away) ends a long or endless loop,
// and the device serves other work meanwhile.
class WhileKernel : public AsyncOpKernel {
 public:
  static KernelFactory factory() {
    return [](const OpKernelConstruction& c) -> StatusOr<std::unique_ptr<OpKernel>> {
      auto function = [&](const char* attr) {
        return GraphFunction::instantiate(
            c.attr<std::string>(attr), c.device(),
            fmt::format("node '{}' ({}): function {}", c.name(), c.node().op_name(), attr));
      };
      TROUPE_ASSIGN_OR_RETURN(auto cond, function("cond"));
      TROUPE_ASSIGN_OR_RETURN(auto body, function("body"));
      return std::unique_ptr<OpKernel>(new WhileKernel(c, std::move(cond), std::move(body)));
    };
  }

  void compute_async(OpKernelContext& ctx, DoneCallback done) override {
    for (int64_t i : unstacked_) {
      if (i < 0 || i >= static_cast<int64_t>(types_.size())) {
        ctx.set_status(
            invalid("unstacked names loop variable {}, not one of the {}", i, types_.size()));
        return done();
      }
    }
    auto loop = std::make_shared<Loop>(*this, ctx, std::move(done));
    loop->advance(loop);
  }

 private:
  static constexpr auto kSlice = std::chrono::milliseconds(2);

  // One run of the loop: its variables, and what the gradient needs recorded.
  struct Loop {
    Loop(const WhileKernel& kernel, OpKernelContext& ctx, DoneCallback done)
        : kernel(kernel), ctx(ctx), done(std::move(done)) {
      const int n = static_cast<int>(kernel.types_.size());
      const int n_cond = static_cast<int>(kernel.cond_types_.size());
      for (int i = 0; i < n; ++i)
        vars.push_back(ctx.input(i));
      for (int i = n; i < n + n_cond; ++i)
        cond_captured.push_back(ctx.input(i));
      for (int i = n + n_cond; i < ctx.num_inputs(); ++i)
        body_captured.push_back(ctx.input(i));
    }

    // Runs iterations for a slice; then finishes, fails, or comes back later.
    void advance(const std::shared_ptr<Loop>& self) {
      auto until = std::chrono::steady_clock::now() + kSlice;
      const int64_t slice_iterations = ctx.step().slice_iterations;
      for (int64_t in_slice = 1;; ++in_slice) {
        if (ctx.step().cancellation.is_cancelled()) {
          return fail(ctx.step().cancellation.reason().with_context(fmt::format(
              "node '{}' (While), after {} iterations", kernel.node().name(), iterations)));
        }
        StatusOr<bool> more = false;
        try {  // a later slice runs outside the executor's guard
          more = iterate();
        } catch (const std::bad_alloc&) {
          more = errors::ResourceExhausted("node '{}' (While), iteration {}: out of memory",
                                           kernel.node().name(), iterations + 1);
        } catch (const std::exception& e) {
          more = errors::Internal("node '{}' (While), iteration {}: kernel threw: {}",
                                  kernel.node().name(), iterations + 1, e.what());
        }
        if (!more.ok()) return fail(more.status());
        if (!*more) return finish();
        if (slice_iterations > 0 ? in_slice >= slice_iterations
                                 : std::chrono::steady_clock::now() >= until) {
          ctx.step().schedule([self] { self->advance(self); });
          return;
        }
      }
    }

    // One test of cond and, if it holds, one call of body: whether it held.
    StatusOr<bool> iterate() {
      std::vector<Tensor> args = vars;
      args.insert(args.end(), cond_captured.begin(), cond_captured.end());
      TROUPE_ASSIGN_OR_RETURN(auto verdict,
                              kernel.cond_->call(std::move(args), ctx.step().container));
      if (verdict.size() != 1 || verdict[0].dtype() != DataType::kBool ||
          verdict[0].shape().rank() != 0) {
        std::string first = verdict.empty() ? ""
                                            : fmt::format(" (the first {} of shape {})",
                                                          dtype_name(verdict[0].dtype()),
                                                          verdict[0].shape().to_string());
        return kernel.invalid("cond must return one scalar bool, got {} values{}", verdict.size(),
                              first);
      }
      if (!verdict[0].scalar<bool>()) return false;
      if (iterations == std::numeric_limits<int32_t>::max()) {
        return kernel.invalid("more than {} iterations", iterations);
      }
      if (kernel.record_) {
        history.push_back(vars);
        for (int64_t i : kernel.unstacked_)
          history.back()[i] = Tensor();  // not kept: the gradient does not read it
      }
      args = vars;
      if (kernel.body_takes_iteration_) args.push_back(Tensor::scalar<int32_t>(iterations));
      args.insert(args.end(), body_captured.begin(), body_captured.end());
      TROUPE_ASSIGN_OR_RETURN(auto next, kernel.body_->call(std::move(args), ctx.step().container));
      const int n = static_cast<int>(vars.size());
      const size_t num_drawn = kernel.drawn_types_.size();
      if (next.size() != n + num_drawn) {
        return kernel.invalid("body returned {} values for {} loop variables and {} draws",
                              next.size(), n, num_drawn);
      }
      if (num_drawn > 0) {
        draws.emplace_back(std::make_move_iterator(next.begin() + n),
                           std::make_move_iterator(next.end()));
        next.resize(n);
      }
      for (int i = 0; i < n; ++i) {
        const Tensor& value = next[i];
        if (value.dtype() != kernel.types_[i]) {
          return kernel.invalid("body returned {} for loop variable {}, which is {}",
                                dtype_name(value.dtype()), i, dtype_name(kernel.types_[i]));
        }
        const PartialShape& allowed = i < static_cast<int>(kernel.shapes_.size())
                                          ? kernel.shapes_[i]
                                          : PartialShape(ctx.input(i).shape());
        if (!allowed.compatible_with(PartialShape(value.shape()))) {
          return kernel.invalid(
              "loop variable {} enters the loop with shape {}, but has shape {} after iteration "
              "{} (allowed: {}); to let a shape vary, give tf.while_loop's shape_invariants",
              i, ctx.input(i).shape().to_string(), value.shape().to_string(), iterations + 1,
              allowed.to_string());
        }
      }
      vars = std::move(next);
      ++iterations;
      return true;
    }

    void finish() {
      const int n = static_cast<int>(vars.size());
      for (int i = 0; i < n; ++i)
        ctx.set_output(i, vars[i]);
      if (kernel.record_) {
        for (int i = 0; i < n; ++i) {
          if (Status s = stack(i); !s.ok()) return fail(s);
        }
      }
      for (size_t j = 0; j < kernel.drawn_types_.size(); ++j) {
        if (Status s = stack_draw(j); !s.ok()) return fail(s);
      }
      ctx.set_output(ctx.num_outputs() - 1, Tensor::scalar<int32_t>(iterations));
      done();
    }

    // Output `stacked` i: variable i entering each iteration, on a new first axis.
    Status stack(int i) {
      const int n = static_cast<int>(vars.size());
      if (std::find(kernel.unstacked_.begin(), kernel.unstacked_.end(), i) !=
          kernel.unstacked_.end()) {
        std::vector<int64_t> dims = vars[i].shape().dims();
        dims.insert(dims.begin(), 0);
        ctx.allocate_output(n + i, TensorShape(dims));
        return Status::OK();
      }
      const TensorShape& first =
          history.empty() ? ctx.input(i).shape() : history.front()[i].shape();
      std::vector<int64_t> dims = first.dims();
      dims.insert(dims.begin(), iterations);
      Tensor& stacked = ctx.allocate_output(n + i, TensorShape(dims));
      const int64_t each = first.num_elements();
      for (int32_t k = 0; k < iterations; ++k) {
        const Tensor& value = history[k][i];
        if (value.shape() != first) {
          return kernel.invalid(
              "loop variable {} has shape {} in iteration {} and {} in iteration 1: its "
              "gradient needs one shape in every iteration",
              i, value.shape().to_string(), k + 1, first.to_string());
        }
        TROUPE_SWITCH_ALL(kernel.types_[i], T,
                          std::copy_n(value.data<T>(), each, stacked.data<T>() + k * each));
      }
      return Status::OK();
    }

    // Outputs `drawn` j and `drawn_shapes` j: draw j of every iteration, flattened one after
    // the other, and in row k its number of elements in iteration k, then its shape (zeros
    // where it was not drawn: its branch of a cond was not taken, and the replay's is not
    // either). Its rank must not change.
    Status stack_draw(size_t j) {
      int rank = -1;
      int64_t total = 0;
      for (int32_t k = 0; k < iterations; ++k) {
        const Tensor& value = draws[k][j];
        if (!value.is_initialized()) continue;
        if (rank < 0) rank = value.shape().rank();
        if (value.shape().rank() != rank) {
          return kernel.invalid(
              "random op '{}' in its body drew a tensor of rank {} in iteration {} and of rank "
              "{} before: the loop's gradient replays each draw and needs one rank (build the "
              "loop with back_prop=False if it needs no gradient)",
              kernel.drawn_from_[j], value.shape().rank(), k + 1, rank);
        }
        total += value.num_elements();
      }
      const int n = static_cast<int>(vars.size());
      const int num_drawn = static_cast<int>(kernel.drawn_types_.size());
      const int index = n + (kernel.record_ ? n : 0) + static_cast<int>(j);
      Tensor& flat = ctx.allocate_output(index, TensorShape{total});
      const int64_t columns = 1 + std::max(rank, 0);
      Tensor& shapes = ctx.allocate_output(index + num_drawn, TensorShape{iterations, columns});
      int64_t* shape_rows = shapes.data<int64_t>();
      std::fill_n(shape_rows, shapes.num_elements(), int64_t{0});
      int64_t at = 0;
      for (int32_t k = 0; k < iterations; ++k) {
        const Tensor& value = draws[k][j];
        if (!value.is_initialized()) continue;
        shape_rows[k * columns] = value.num_elements();
        std::copy_n(value.shape().dims().begin(), rank, shape_rows + k * columns + 1);
        TROUPE_SWITCH_ALL(kernel.drawn_types_[j], T,
                          std::copy_n(value.data<T>(), value.num_elements(), flat.data<T>() + at));
        at += value.num_elements();
      }
      return Status::OK();
    }

    void fail(Status status) {
      ctx.set_status(std::move(status));
      done();
    }

    const WhileKernel& kernel;
    OpKernelContext& ctx;
    DoneCallback done;
    std::vector<Tensor> vars, cond_captured, body_captured;
    std::vector<std::vector<Tensor>> history;  // the variables entering each iteration
    std::vector<std::vector<Tensor>> draws;    // each iteration's draws (Tdrawn)
    int32_t iterations = 0;
  };

  WhileKernel(const OpKernelConstruction& c, std::shared_ptr<GraphFunction> cond,
              std::shared_ptr<GraphFunction> body)
      : AsyncOpKernel(c),
        types_(c.attr<std::vector<DataType>>("T")),
        cond_types_(c.attr<std::vector<DataType>>("Tcond")),
        shapes_(c.attr<std::vector<PartialShape>>("output_shapes")),
        record_(!c.attr<std::vector<DataType>>("Tstacked").empty()),
        unstacked_(c.attr<std::vector<int64_t>>("unstacked")),
        drawn_types_(c.attr<std::vector<DataType>>("Tdrawn")),
        drawn_from_(c.attr<std::vector<std::string>>("drawn_from")),
        body_takes_iteration_(c.attr<bool>("body_takes_iteration")),
        cond_(std::move(cond)),
        body_(std::move(body)) {}

  // InvalidArgument naming the node.
  template <class... Args>
  Status invalid(fmt::format_string<Args...> format, Args&&... args) const {
    return errors::InvalidArgument("node '{}' (While): {}", node().name(),
                                   fmt::format(format, std::forward<Args>(args)...));
  }

  std::vector<DataType> types_;
  std::vector<DataType> cond_types_;
  std::vector<PartialShape> shapes_;
  bool record_;
  std::vector<int64_t> unstacked_;       // loop variables whose history is not kept
  std::vector<DataType> drawn_types_;    // the body's random draws, recorded for the gradient
  std::vector<std::string> drawn_from_;  // the random op of each draw
  bool body_takes_iteration_;
  std::shared_ptr<GraphFunction> cond_;
  std::shared_ptr<GraphFunction> body_;
};

}  // namespace

void register_control_flow_kernels(KernelRegistry& r) {
  must_add_kernel(r, "While", kCpu, WhileKernel::factory());
  must_add_kernel(r, "Switch", kCpu, simple_kernel<SwitchKernel>());
  must_add_kernel(r, "Merge", kCpu, simple_kernel<MergeKernel>());
  must_add_kernel(r, "Assert", kCpu, simple_kernel<AssertKernel>());
  must_add_kernel(r, "CheckNumerics", kCpu, simple_kernel<CheckNumericsKernel>());
}

}  // namespace troupe
