// Status and StatusOr: troupe's one error type, with TensorFlow's error codes.
//
// A Status is either OK or a code plus a message naming what failed (node, device, address).
// It is a value type; it crosses actor messages unchanged (actors/error_bridge.hpp) and is
// what every call of the library that can fail returns. For tests and short programs,
// troupe/graph/core/throwing.hpp turns an error into an exception; the library never does.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include <fmt/format.h>

namespace troupe {

// TensorFlow's canonical codes, with TensorFlow's numbers so logs and tools agree.
enum class Code : uint8_t {
  kOk = 0,
  kCancelled = 1,
  kUnknown = 2,
  kInvalidArgument = 3,
  kDeadlineExceeded = 4,
  kNotFound = 5,
  kAlreadyExists = 6,
  kPermissionDenied = 7,
  kResourceExhausted = 8,
  kFailedPrecondition = 9,
  kAborted = 10,
  kOutOfRange = 11,
  kUnimplemented = 12,
  kInternal = 13,
  kUnavailable = 14,
  kDataLoss = 15,
  kUnauthenticated = 16,
};

inline constexpr uint8_t kMaxCode = 16;

// "InvalidArgument", "NotFound", ...
std::string_view code_name(Code code);
std::ostream& operator<<(std::ostream& os, Code code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Code code, std::string message);

  static Status OK() { return Status(); }

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }

  // "InvalidArgument: node 'x': ..." or "OK".
  std::string to_string() const;

  // Returns a copy whose message is prefixed with `context`, keeping the code.
  Status with_context(std::string_view context) const;

  bool operator==(const Status& other) const = default;

 private:
  Code code_ = Code::kOk;
  std::string message_;
};

std::ostream& operator<<(std::ostream& os, const Status& status);

// A value or the Status that explains why there is none.
template <class T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(T value) : state_(std::move(value)) {}  // NOLINT: implicit by design
  StatusOr(Status status) : state_(std::move(status)) {
    if (std::get<Status>(state_).ok()) {
      state_ = Status(Code::kInternal, "StatusOr constructed from an OK status without a value");
    }
  }

  bool ok() const { return std::holds_alternative<T>(state_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(state_);
  }
  T& value() & { return std::get<T>(state_); }
  const T& value() const& { return std::get<T>(state_); }
  // By value, so `for (x : make().value())` does not dangle.
  T value() && { return std::get<T>(std::move(state_)); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::variant<Status, T> state_;
};

// Constructors for each code: errors::InvalidArgument("node '{}': ...", name).
namespace errors {
#define TROUPE_DEFINE_ERROR(Name)                                                   \
  template <class... Args>                                                          \
  Status Name(fmt::format_string<Args...> format, Args&&... args) {                 \
    return Status(Code::k##Name, fmt::format(format, std::forward<Args>(args)...)); \
  }
TROUPE_DEFINE_ERROR(Cancelled)
TROUPE_DEFINE_ERROR(Unknown)
TROUPE_DEFINE_ERROR(InvalidArgument)
TROUPE_DEFINE_ERROR(DeadlineExceeded)
TROUPE_DEFINE_ERROR(NotFound)
TROUPE_DEFINE_ERROR(AlreadyExists)
TROUPE_DEFINE_ERROR(PermissionDenied)
TROUPE_DEFINE_ERROR(ResourceExhausted)
TROUPE_DEFINE_ERROR(FailedPrecondition)
TROUPE_DEFINE_ERROR(Aborted)
TROUPE_DEFINE_ERROR(OutOfRange)
TROUPE_DEFINE_ERROR(Unimplemented)
TROUPE_DEFINE_ERROR(Internal)
TROUPE_DEFINE_ERROR(Unavailable)
TROUPE_DEFINE_ERROR(DataLoss)
TROUPE_DEFINE_ERROR(Unauthenticated)
#undef TROUPE_DEFINE_ERROR
}  // namespace errors

}  // namespace troupe

// Returns from the enclosing function if `expr` yields a non-OK Status.
#define TROUPE_RETURN_IF_ERROR(expr)                 \
  do {                                               \
    ::troupe::Status troupe_status_ = (expr);        \
    if (!troupe_status_.ok()) return troupe_status_; \
  } while (0)

#define TROUPE_CONCAT_INNER(a, b) a##b
#define TROUPE_CONCAT(a, b) TROUPE_CONCAT_INNER(a, b)

// `TROUPE_ASSIGN_OR_RETURN(auto x, make_x());` declares x or returns make_x()'s Status.
#define TROUPE_ASSIGN_OR_RETURN(lhs, expr) \
  TROUPE_ASSIGN_OR_RETURN_IMPL(TROUPE_CONCAT(troupe_status_or_, __LINE__), lhs, expr)
#define TROUPE_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                 \
  if (!tmp.ok()) return tmp.status();                \
  lhs = std::move(tmp).value()
