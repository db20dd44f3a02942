// Throwing conveniences: thin wrappers that turn a failed Status into an exception, for tests,
// examples and short programs where an error should end the program with its message.
//
//   auto server = value_or_throw(Server::create_local_server());
//   throw_if_error(session->extend(graph));
//
// Everything in troupe's libraries returns Status or StatusOr and never calls these; they are
// the only place troupe throws. Use the Status API wherever an error is to be handled.
#pragma once

#include <exception>
#include <string>
#include <utility>

#include "troupe/graph/core/status.hpp"

namespace troupe {

// The exception the conveniences throw; it carries the Status unchanged.
class StatusError : public std::exception {
 public:
  explicit StatusError(Status status) : status_(std::move(status)), what_(status_.to_string()) {}
  const Status& status() const { return status_; }
  const char* what() const noexcept override { return what_.c_str(); }

 private:
  Status status_;
  std::string what_;
};

// Throws StatusError if `status` is not OK.
inline void throw_if_error(const Status& status) {
  if (!status.ok()) throw StatusError(status);
}

// The value of `result`, or throws StatusError with its Status.
template <class T>
T value_or_throw(StatusOr<T>&& result) {
  throw_if_error(result.status());
  return std::move(result).value();
}

}  // namespace troupe
