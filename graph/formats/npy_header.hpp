// The header of a .npy array is a Python literal, a dict such as
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// parse_npy_header reads exactly that subset of Python: a dict of the three keys, with quoted
// strings (single or double quotes, backslash escapes), True/False, and a tuple of
// non-negative integers (Python 2's trailing 'L' allowed). Nothing is evaluated.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "troupe/graph/core/status.hpp"

namespace troupe {

struct NpyHeader {
  std::string descr;  // numpy's dtype string: '<f4', '>i8', '|b1', ...
  bool fortran_order = false;
  std::vector<int64_t> shape;
};

// Parses `text`, the dict of a .npy header (without the magic and length). DataLoss naming
// `what` and the byte where it went wrong for text that is not such a dict (a key missing,
// unknown or malformed, text after the closing brace); InvalidArgument for a structured dtype
// (a list as 'descr'), which is valid numpy but not supported.
StatusOr<NpyHeader> parse_npy_header(std::string_view text, const std::string& what);

}  // namespace troupe
