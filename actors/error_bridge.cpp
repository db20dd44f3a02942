// Status <-> caf::error conversion.
#include "troupe/actors/error_bridge.hpp"

#include <caf/exit_reason.hpp>
#include <caf/message.hpp>
#include <caf/sec.hpp>

namespace troupe {
namespace {

Status from_sec(caf::sec code, std::string_view context) {
  std::string what = caf::to_string(code);
  auto with_context = [&](std::string text) {
    return context.empty() ? text : fmt::format("{}: {}", context, text);
  };
  switch (code) {
    case caf::sec::request_timeout:
      return Status(Code::kDeadlineExceeded, with_context("no reply before the deadline"));
    case caf::sec::request_receiver_down:
      return Status(Code::kUnavailable, with_context("the receiving actor is down"));
    case caf::sec::unexpected_message:
      // What a receiver in another process answers when it could not decode the message's
      // content (it then logs why); troupe's own actors handle every message they are sent.
      return Status(Code::kInvalidArgument,
                    with_context("the receiver could not decode the message (a tensor or graph "
                                 "over its --max_message_bytes limit, or malformed: its log "
                                 "says which)"));
    case caf::sec::cannot_connect_to_node:
    case caf::sec::no_route_to_receiving_node:
    case caf::sec::remote_linking_failed:
    case caf::sec::bad_function_call:
      return Status(Code::kUnavailable, with_context(what));
    default:
      return Status(Code::kInternal, with_context(what));
  }
}

}  // namespace

caf::error to_caf_error(const Status& status) {
  return caf::error(static_cast<uint8_t>(status.code()), kErrorCategory,
                    caf::make_message(status.message()));
}

Status from_caf_error(const caf::error& error, std::string_view context) {
  if (!error) return Status::OK();
  if (error.category() == kErrorCategory) {
    std::string message;
    if (error.context().match_elements<std::string>())
      message = error.context().get_as<std::string>(0);
    uint8_t code = error.code();
    if (code == 0 || code > kMaxCode) {
      return errors::Internal("peer sent troupe error code {}: {}", code, message);
    }
    return Status(static_cast<Code>(code), std::move(message));
  }
  if (error.category() == caf::atom("system")) {
    return from_sec(static_cast<caf::sec>(error.code()), context);
  }
  if (error.category() == caf::atom("exit")) {
    auto reason = static_cast<caf::exit_reason>(error.code());
    std::string text = fmt::format("{}{}actor exited ({})", context, context.empty() ? "" : ": ",
                                   caf::to_string(reason));
    if (reason == caf::exit_reason::user_shutdown) return Status(Code::kCancelled, text);
    return Status(Code::kUnavailable, text);
  }
  return errors::Internal("{}{}unexpected error category {} code {}", context,
                          context.empty() ? "" : ": ", caf::to_string(error.category()),
                          error.code());
}

void register_error_category(caf::actor_system_config& config) {
  config.add_error_category(
      kErrorCategory, [](uint8_t code, caf::atom_value, const caf::message& context) {
        std::string message;
        if (context.match_elements<std::string>()) message = context.get_as<std::string>(0);
        return fmt::format("{}: {}", code_name(static_cast<Code>(code)), message);
      });
}

}  // namespace troupe
