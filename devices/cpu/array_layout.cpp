// Strided views and the copy between them (array_layout.hpp).
#include "troupe/devices/cpu/array_layout.hpp"

#include <algorithm>

namespace troupe {
namespace {

template <class T>
void copy_typed(const T* src, const StridedView& from, T* dst, const StridedView& to,
                const std::vector<int64_t>& dims) {
  const size_t rank = dims.size();
  for (int64_t d : dims) {
    if (d == 0) return;
  }
  if (rank == 0) {
    dst[to.offset] = src[from.offset];
    return;
  }
  const int64_t inner = dims.back();
  const int64_t from_step = from.steps.back(), to_step = to.steps.back();
  const bool contiguous = from_step == 1 && to_step == 1;
  std::vector<int64_t> index(rank - 1, 0);
  int64_t f = from.offset, t = to.offset;
  while (true) {
    if (contiguous) {
      std::copy_n(src + f, inner, dst + t);
    } else {
      for (int64_t i = 0; i < inner; ++i)
        dst[t + i * to_step] = src[f + i * from_step];
    }
    // The next row: advance the outer index, carrying as an odometer does.
    int d = static_cast<int>(rank) - 2;
    for (; d >= 0; --d) {
      ++index[d];
      f += from.steps[d];
      t += to.steps[d];
      if (index[d] < dims[d]) break;
      f -= from.steps[d] * dims[d];
      t -= to.steps[d] * dims[d];
      index[d] = 0;
    }
    if (d < 0) return;
  }
}

}  // namespace

std::vector<int64_t> row_major_strides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (int d = static_cast<int>(dims.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * dims[d + 1];
  return strides;
}

void strided_copy(const Tensor& src, const StridedView& from, Tensor& dst, const StridedView& to,
                  const std::vector<int64_t>& dims) {
  TROUPE_SWITCH_ALL(src.dtype(), T, copy_typed<T>(src.data<T>(), from, dst.data<T>(), to, dims));
}

void fill_with(Tensor& dst, const Tensor* value) {
  TROUPE_SWITCH_ALL(dst.dtype(), T, {
    const T fill = value != nullptr ? value->scalar<T>() : T{};
    std::fill_n(dst.data<T>(), dst.num_elements(), fill);
  });
}

std::vector<int64_t> int_values(const Tensor& t) {
  if (t.dtype() == DataType::kInt32) {
    auto v = t.flat<int32_t>();
    return std::vector<int64_t>(v.begin(), v.end());
  }
  return t.to_vector<int64_t>();
}

}  // namespace troupe
