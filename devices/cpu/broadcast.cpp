// Broadcast: shape compatibility and per-dimension strides.
#include "troupe/devices/cpu/broadcast.hpp"

#include <fmt/format.h>

namespace troupe {
namespace {

// Row-major element strides of `shape` aligned to `rank` output dims; 0 where broadcast.
std::vector<int64_t> strides_for(const TensorShape& shape, const std::vector<int64_t>& out_dims) {
  const int rank = static_cast<int>(out_dims.size());
  std::vector<int64_t> strides(rank, 0);
  int64_t stride = 1;
  for (int d = shape.rank() - 1; d >= 0; --d) {
    int od = rank - shape.rank() + d;
    strides[od] = shape.dim(d) == 1 && out_dims[od] != 1 ? 0 : stride;
    stride *= shape.dim(d);
  }
  return strides;
}

}  // namespace

StatusOr<Broadcast> Broadcast::make(const TensorShape& a, const TensorShape& b) {
  const int rank = std::max(a.rank(), b.rank());
  std::vector<int64_t> dims(rank);
  for (int i = 0; i < rank; ++i) {
    int ia = a.rank() - rank + i, ib = b.rank() - rank + i;
    int64_t da = ia >= 0 ? a.dim(ia) : 1;
    int64_t db = ib >= 0 ? b.dim(ib) : 1;
    if (da != db && da != 1 && db != 1) {
      return errors::InvalidArgument("shapes {} and {} cannot be broadcast together", a.to_string(),
                                     b.to_string());
    }
    dims[i] = da == 1 ? db : da;
  }
  Broadcast result;
  result.output_shape_ = TensorShape(dims);
  result.a_strides_ = strides_for(a, dims);
  result.b_strides_ = strides_for(b, dims);
  result.dims_ = std::move(dims);
  return result;
}

}  // namespace troupe
