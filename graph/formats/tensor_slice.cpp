// Slices of checkpointed tensors: parsing TensorFlow's shape-and-slice strings, and copying
// the slice out of the whole tensor.
#include "troupe/graph/formats/tensor_slice.hpp"

#include <algorithm>
#include <charconv>
#include <cstring>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace troupe {
namespace {

// `text` split at each `separator`; empty parts are dropped if `skip_empty` (TensorFlow's
// SkipEmpty, as its slice parser splits).
std::vector<std::string_view> split(std::string_view text, char separator,
                                    bool skip_empty = false) {
  std::vector<std::string_view> parts;
  size_t begin = 0;
  while (true) {
    size_t end = text.find(separator, begin);
    std::string_view part = text.substr(begin, end - begin);
    if (!(skip_empty && part.empty())) parts.push_back(part);
    if (end == std::string_view::npos) return parts;
    begin = end + 1;
  }
}

bool parse_count(std::string_view text, int64_t* out) {
  if (text.empty()) return false;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return error == std::errc() && end == text.data() + text.size() && *out >= 0;
}

}  // namespace

StatusOr<TensorSliceSpec> parse_tensor_slice_spec(std::string_view spec) {
  TensorSliceSpec parsed;
  if (spec.empty()) return parsed;
  parsed.whole = false;
  auto bad = [&](std::string_view why) {
    return errors::InvalidArgument(
        "shape and slice '{}': {} (expected the whole tensor's dimensions, then one "
        "'start,length' or '-' per dimension, ':'-separated: '100 100 20,20:-')",
        spec, why);
  };
  std::vector<std::string_view> words = split(spec, ' ');
  if (words.size() < 2) return bad("no dimensions before the slice");
  const std::string_view slices = words.back();
  words.pop_back();
  for (std::string_view word : words) {
    int64_t dim = 0;
    if (!parse_count(word, &dim)) return bad(fmt::format("dimension '{}' is not a count", word));
    parsed.full_shape.push_back(dim);
  }
  std::vector<std::string_view> per_dim = split(slices, ':', /*skip_empty=*/true);
  if (per_dim.size() != parsed.full_shape.size()) {
    return bad(
        fmt::format("{} dimension(s) but a slice of {}", parsed.full_shape.size(), per_dim.size()));
  }
  for (size_t d = 0; d < per_dim.size(); ++d) {
    const int64_t dim = parsed.full_shape[d];
    if (per_dim[d] == "-") {
      parsed.start.push_back(0);
      parsed.length.push_back(dim);
      continue;
    }
    std::vector<std::string_view> pair = split(per_dim[d], ',', /*skip_empty=*/true);
    int64_t start = 0;
    int64_t length = 0;
    if (pair.size() != 2 || !parse_count(pair[0], &start) || !parse_count(pair[1], &length)) {
      return bad(fmt::format("'{}' is neither 'start,length' nor '-'", per_dim[d]));
    }
    if (length == 0) return bad(fmt::format("'{}' has no length (1 or more expected)", per_dim[d]));
    if (start > dim || length > dim - start) {
      return bad(
          fmt::format("slice {},{} of dimension {} ends past its size {}", start, length, d, dim));
    }
    parsed.start.push_back(start);
    parsed.length.push_back(length);
  }
  return parsed;
}

StatusOr<Tensor> slice_of(const Tensor& whole, const TensorSliceSpec& spec, std::string_view what) {
  if (spec.whole) return whole;
  if (whole.dtype() == DataType::kString) {
    return errors::InvalidArgument("{}: slices of string tensors are not supported", what);
  }
  const TensorShape full(spec.full_shape);
  if (whole.shape() != full) {
    return errors::InvalidArgument("{}: the tensor's shape is {}, the slice is of a {} tensor",
                                   what, whole.shape().to_string(), full.to_string());
  }
  Tensor out(whole.dtype(), TensorShape(spec.length));
  const int rank = whole.rank();
  if (out.num_elements() == 0 || rank == 0) {
    if (rank == 0) std::memcpy(out.raw_data(), whole.raw_data(), whole.total_bytes());
    return out;
  }
  // Row-major: copy runs of the last dimension, walking the outer dimensions' indices.
  const size_t element = dtype_size(whole.dtype());
  std::vector<int64_t> stride(rank, 1);
  for (int d = rank - 2; d >= 0; --d)
    stride[d] = stride[d + 1] * spec.full_shape[d + 1];
  const size_t run = static_cast<size_t>(spec.length[rank - 1]) * element;
  const auto* from = static_cast<const char*>(whole.raw_data());
  auto* to = static_cast<char*>(out.raw_data());
  std::vector<int64_t> index(rank, 0);  // within the slice; index[rank - 1] stays 0
  while (true) {
    int64_t offset = 0;
    for (int d = 0; d < rank; ++d)
      offset += (spec.start[d] + index[d]) * stride[d];
    std::memcpy(to, from + offset * element, run);
    to += run;
    int d = rank - 2;
    for (; d >= 0; --d) {
      if (++index[d] < spec.length[d]) break;
      index[d] = 0;
    }
    if (d < 0) return out;
  }
}

std::string tensor_slice_spec_string(const std::vector<int64_t>& full_shape,
                                     const std::vector<int64_t>& start,
                                     const std::vector<int64_t>& length) {
  std::vector<std::string> per_dim;
  for (size_t d = 0; d < full_shape.size(); ++d) {
    per_dim.push_back(start[d] == 0 && length[d] == full_shape[d]
                          ? std::string("-")
                          : fmt::format("{},{}", start[d], length[d]));
  }
  return fmt::format("{} {}", fmt::join(full_shape, " "), fmt::join(per_dim, ":"));
}

int64_t copy_overlap(const Tensor& src, const std::vector<int64_t>& src_start, Tensor& dst,
                     const std::vector<int64_t>& dst_start) {
  const int rank = dst.rank();
  if (rank == 0) {
    std::memcpy(dst.raw_data(), src.raw_data(), dst.total_bytes());
    return 1;
  }
  // The overlap, [lo, hi) in the whole tensor's coordinates.
  std::vector<int64_t> lo(rank), hi(rank);
  for (int d = 0; d < rank; ++d) {
    lo[d] = std::max(src_start[d], dst_start[d]);
    hi[d] = std::min(src_start[d] + src.dim(d), dst_start[d] + dst.dim(d));
    if (lo[d] >= hi[d]) return 0;
  }
  auto strides = [rank](const Tensor& t) {
    std::vector<int64_t> stride(rank, 1);
    for (int d = rank - 2; d >= 0; --d)
      stride[d] = stride[d + 1] * t.dim(d + 1);
    return stride;
  };
  const std::vector<int64_t> src_stride = strides(src), dst_stride = strides(dst);
  const size_t element = dtype_size(dst.dtype());
  const int64_t run = hi[rank - 1] - lo[rank - 1];
  const auto* from = static_cast<const char*>(src.raw_data());
  auto* to = static_cast<char*>(dst.raw_data());
  std::vector<int64_t> index = lo;  // in the whole; index[rank - 1] stays lo[rank - 1]
  int64_t copied = 0;
  while (true) {
    int64_t at_src = 0, at_dst = 0;
    for (int d = 0; d < rank; ++d) {
      at_src += (index[d] - src_start[d]) * src_stride[d];
      at_dst += (index[d] - dst_start[d]) * dst_stride[d];
    }
    std::memcpy(to + at_dst * element, from + at_src * element, run * element);
    copied += run;
    int d = rank - 2;
    for (; d >= 0; --d) {
      if (++index[d] < hi[d]) break;
      index[d] = lo[d];
    }
    if (d < 0) return copied;
  }
}

}  // namespace troupe
