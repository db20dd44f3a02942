// CPU kernel of GatherTree (graph/ops/beam_search_ops.hpp): each beam followed back through its
// parents, then cut at its first end token.
#include <algorithm>

#include "troupe/devices/cpu/cpu_kernels.hpp"

namespace troupe {
namespace {

class GatherTreeKernel : public OpKernel {
 public:
  using OpKernel::OpKernel;

  void compute(OpKernelContext& ctx) override {
    const Tensor& step_ids = ctx.input(0);
    const Tensor& parent_ids = ctx.input(1);
    const Tensor& lengths = ctx.input(2);
    const Tensor& end_token = ctx.input(3);
    if (step_ids.rank() != 3) {
      ctx.fail_invalid("step_ids must be a 3-tensor, saw shape: {}", step_ids.shape().to_string());
      return;
    }
    if (lengths.rank() != 1) {
      ctx.fail_invalid("max_sequence_lengths must be a vector, saw shape: {}",
                       lengths.shape().to_string());
      return;
    }
    if (end_token.rank() != 0) {
      ctx.fail_invalid("end_token must be a scalar, saw shape: {}", end_token.shape().to_string());
      return;
    }
    if (step_ids.shape() != parent_ids.shape()) {
      ctx.fail_invalid("step_ids.shape must match parent_ids.shape.  but shapes are: {} and {}",
                       step_ids.shape().to_string(), parent_ids.shape().to_string());
      return;
    }
    if (step_ids.dim(1) != lengths.dim(0)) {
      ctx.fail_invalid(
          "batch size dimensions step_ids.shape[1] and max_sequence_lengths.shape[0] must "
          "match.  but shapes are: {} and {}",
          step_ids.shape().to_string(), lengths.shape().to_string());
      return;
    }
    const int64_t max_time = step_ids.dim(0), batch_size = step_ids.dim(1),
                  beam_width = step_ids.dim(2);
    const int32_t end = end_token.scalar<int32_t>();
    Tensor& beams = ctx.allocate_output(0, step_ids.shape());
    const int32_t* steps = step_ids.data<int32_t>();
    const int32_t* parents = parent_ids.data<int32_t>();
    int32_t* out = beams.data<int32_t>();
    std::fill(out, out + beams.num_elements(), end);
    auto at = [&](int64_t time, int64_t batch, int64_t beam) {
      return (time * batch_size + batch) * beam_width + beam;
    };
    for (int64_t batch = 0; batch < batch_size; ++batch) {
      const int64_t length = std::min<int64_t>(max_time, lengths.data<int32_t>()[batch]);
      if (length <= 0) continue;
      for (int64_t beam = 0; beam < beam_width; ++beam) {
        out[at(length - 1, batch, beam)] = steps[at(length - 1, batch, beam)];
        int32_t parent = parents[at(length - 1, batch, beam)];
        for (int64_t level = length - 2; level >= 0; --level) {
          if (parent < 0 || parent >= beam_width) {
            ctx.fail_invalid("Saw invalid parent id {} at (batch, time, beam) == ({}, {}, {})",
                             parent, batch, level, beam);
            return;
          }
          out[at(level, batch, beam)] = steps[at(level, batch, parent)];
          parent = parents[at(level, batch, parent)];
        }
        bool finished = false;
        for (int64_t time = 0; time < length; ++time) {
          if (finished) {
            out[at(time, batch, beam)] = end;
          } else if (out[at(time, batch, beam)] == end) {
            finished = true;
          }
        }
      }
    }
  }
};

}  // namespace

void register_beam_search_kernels(KernelRegistry& r) {
  must_add_kernel(r, "GatherTree", kCpu, simple_kernel<GatherTreeKernel>());
}

}  // namespace troupe
