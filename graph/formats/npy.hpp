// The .npy encoding of one tensor: numpy's array file format (NEP 1). A magic string, a
// version, the header (a Python dict literal: dtype, order, shape; npy_header.hpp) padded to
// 64 bytes, then the elements in C order.
//
// Written: version 1.0, little-endian. Read: versions 1.0, 2.0 and 3.0, either byte order.
// dtypes: float32 '<f4', float64 '<f8', int32 '<i4', int64 '<i8', bool '|b1'. Strings are not
// supported.
#pragma once

#include <string>
#include <string_view>

#include "troupe/graph/core/status.hpp"
#include "troupe/graph/core/tensor.hpp"

namespace troupe {

// The .npy encoding of `tensor`: encode_npy_header(tensor) followed by its bytes.
// InvalidArgument for an uninitialised or string tensor.
StatusOr<std::string> encode_npy(const Tensor& tensor);

// The part of encode_npy before the tensor's bytes, for writers that write the bytes from
// where they lie: magic, version 1.0, length, and the dict padded with spaces to a multiple of
// 64 bytes, ending in '\n'.
StatusOr<std::string> encode_npy_header(const Tensor& tensor);

// Decodes a .npy. `what` names the source in error messages. DataLoss for bytes that are not
// a .npy or disagree with its header (naming the byte or the element); InvalidArgument for a
// valid but unsupported array (another dtype, fortran_order True, a version above 3.0).
StatusOr<Tensor> decode_npy(std::string_view bytes, const std::string& what);

}  // namespace troupe
