// Status: names of codes, formatting, and the exception of the blocking API.
#include "troupe/graph/core/status.hpp"

namespace troupe {

std::string_view code_name(Code code) {
  switch (code) {
    case Code::kOk:
      return "OK";
    case Code::kCancelled:
      return "Cancelled";
    case Code::kUnknown:
      return "Unknown";
    case Code::kInvalidArgument:
      return "InvalidArgument";
    case Code::kDeadlineExceeded:
      return "DeadlineExceeded";
    case Code::kNotFound:
      return "NotFound";
    case Code::kAlreadyExists:
      return "AlreadyExists";
    case Code::kPermissionDenied:
      return "PermissionDenied";
    case Code::kResourceExhausted:
      return "ResourceExhausted";
    case Code::kFailedPrecondition:
      return "FailedPrecondition";
    case Code::kAborted:
      return "Aborted";
    case Code::kOutOfRange:
      return "OutOfRange";
    case Code::kUnimplemented:
      return "Unimplemented";
    case Code::kInternal:
      return "Internal";
    case Code::kUnavailable:
      return "Unavailable";
    case Code::kDataLoss:
      return "DataLoss";
    case Code::kUnauthenticated:
      return "Unauthenticated";
  }
  return "Unknown";
}

std::ostream& operator<<(std::ostream& os, Code code) {
  return os << code_name(code);
}

Status::Status(Code code, std::string message) : code_(code), message_(std::move(message)) {
  if (code_ == Code::kOk) message_.clear();
}

std::string Status::to_string() const {
  if (ok()) return "OK";
  return fmt::format("{}: {}", code_name(code_), message_);
}

Status Status::with_context(std::string_view context) const {
  if (ok()) return *this;
  return Status(code_, fmt::format("{}: {}", context, message_));
}

std::ostream& operator<<(std::ostream& os, const Status& status) {
  return os << status.to_string();
}

}  // namespace troupe
