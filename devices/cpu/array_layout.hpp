// How the array kernels address elements: row-major strides, strided views of a tensor, and one
// copy between two views that the joining, splitting, slicing, padding and reordering kernels
// share (each is a copy between views). Elements are copied as their C++ type (strings too);
// a run contiguous in both views is one std::copy_n.
#pragma once

#include <cstdint>
#include <vector>

#include "troupe/graph/core/tensor.hpp"

namespace troupe {

// Element (i_0, ..., i_{k-1}) of a view is element offset + sum(i_d * steps[d]) of its tensor.
struct StridedView {
  int64_t offset = 0;
  std::vector<int64_t> steps;
};

// Row-major strides (in elements) of a tensor of dimensions `dims`.
std::vector<int64_t> row_major_strides(const std::vector<int64_t>& dims);

// The whole of a tensor of dimensions `dims`, in row-major order.
inline StridedView dense_view(const std::vector<int64_t>& dims) {
  return {0, row_major_strides(dims)};
}

// Copies every element of the index space `dims` from view `from` of `src` to view `to` of
// `dst`; both tensors have one dtype, and both views stay inside their tensors.
void strided_copy(const Tensor& src, const StridedView& from, Tensor& dst, const StridedView& to,
                  const std::vector<int64_t>& dims);

// Fills `dst` with the scalar `value` (of dst's dtype), or with zeros (empty strings, false)
// when `value` is null.
void fill_with(Tensor& dst, const Tensor* value);

// The values of an int32 or int64 tensor of any rank, as int64.
std::vector<int64_t> int_values(const Tensor& t);

}  // namespace troupe
