// TROUPE_CHECK_OK: ends the process when a Status that only a bug in troupe can make is not
// OK — registering a built-in op twice, a built-in op spec that does not parse, a buffer that
// the code that made it sized wrongly. Never for input from a user, a file or the network:
// those are Status values returned to the caller.
#pragma once

#include "troupe/graph/core/status.hpp"

namespace troupe::internal {

// Prints "troupe: internal error at FILE:LINE: STATUS" to stderr and aborts.
[[noreturn]] void check_failed(const Status& status, const char* file, int line);

}  // namespace troupe::internal

#define TROUPE_CHECK_OK(expr)                                                     \
  do {                                                                            \
    const ::troupe::Status troupe_check_status_ = (expr);                         \
    if (!troupe_check_status_.ok()) {                                             \
      ::troupe::internal::check_failed(troupe_check_status_, __FILE__, __LINE__); \
    }                                                                             \
  } while (false)
