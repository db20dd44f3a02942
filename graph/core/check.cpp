// check_failed: the end of a process whose invariant broke (graph/core/check.hpp).
#include "troupe/graph/core/check.hpp"

#include <cstdio>
#include <cstdlib>

namespace troupe::internal {

void check_failed(const Status& status, const char* file, int line) {
  std::fprintf(stderr, "troupe: internal error at %s:%d: %s\n", file, line,
               status.to_string().c_str());
  std::fflush(stderr);
  std::abort();
}

}  // namespace troupe::internal
