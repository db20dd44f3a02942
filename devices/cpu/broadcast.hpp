// Broadcast: numpy broadcasting of two tensor shapes, and a walk over the result in runs along
// the last dimension (so element-wise kernels keep a tight inner loop).
#pragma once

#include <cstdint>
#include <vector>

#include "troupe/graph/core/tensor_shape.hpp"

namespace troupe {

class Broadcast {
 public:
  // InvalidArgument "shapes [..] and [..] cannot be broadcast together" if incompatible.
  static StatusOr<Broadcast> make(const TensorShape& a, const TensorShape& b);

  const TensorShape& output_shape() const { return output_shape_; }

  // Calls run(out_offset, a_offset, a_step, b_offset, b_step, count) for consecutive runs of
  // `count` output elements; a_step and b_step are 0 (repeated element) or 1.
  template <class Run>
  void for_each_run(Run&& run) const {
    const int rank = static_cast<int>(dims_.size());
    if (rank == 0) {
      run(int64_t{0}, int64_t{0}, int64_t{0}, int64_t{0}, int64_t{0}, int64_t{1});
      return;
    }
    const int64_t inner = dims_[rank - 1];
    const int64_t a_step = a_strides_[rank - 1], b_step = b_strides_[rank - 1];
    const int64_t total = output_shape_.num_elements();
    if (inner == 0 || total == 0) return;
    std::vector<int64_t> index(rank, 0);
    int64_t a_offset = 0, b_offset = 0;
    for (int64_t out = 0; out < total; out += inner) {
      run(out, a_offset, a_step, b_offset, b_step, inner);
      // Advance the odometer over the outer dimensions.
      for (int d = rank - 2; d >= 0; --d) {
        ++index[d];
        a_offset += a_strides_[d];
        b_offset += b_strides_[d];
        if (index[d] < dims_[d]) break;
        a_offset -= a_strides_[d] * dims_[d];
        b_offset -= b_strides_[d] * dims_[d];
        index[d] = 0;
      }
    }
  }

 private:
  TensorShape output_shape_;
  std::vector<int64_t> dims_;       // output dims
  std::vector<int64_t> a_strides_;  // element strides of a per output dim (0 if broadcast)
  std::vector<int64_t> b_strides_;
};

}  // namespace troupe
