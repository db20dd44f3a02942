// Test helpers for errors: check a Status's code and message, and catch a StatusError (the
// throwing conveniences of troupe/graph/core/throwing.hpp come with this header).
#pragma once

#include <functional>
#include <string>

#include <boost/test/unit_test.hpp>

#include "troupe/graph/core/status.hpp"
#include "troupe/graph/core/throwing.hpp"

namespace troupe::testing {

// Requires `status` to have `code` and its message to mention `needle`.
inline void check_error(const Status& status, Code code, const std::string& needle) {
  BOOST_TEST(status.code() == code, status.to_string());
  BOOST_TEST(status.message().find(needle) != std::string::npos,
             "'" << needle << "' not in: " << status.to_string());
}

// The Status of the StatusError `call` throws, or OK.
inline Status status_of(const std::function<void()>& call) {
  try {
    call();
  } catch (const StatusError& e) {
    return e.status();
  }
  return Status::OK();
}

}  // namespace troupe::testing
