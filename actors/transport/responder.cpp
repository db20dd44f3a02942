// Calls on the tensor channel, called side (responder.hpp).
#include "troupe/actors/transport/responder.hpp"

#include <sys/socket.h>
#include <sys/uio.h>

#include <caf/all.hpp>

#include "troupe/actors/error_bridge.hpp"
#include "troupe/actors/transport/frame_format.hpp"
#include "troupe/actors/transport/stream_io.hpp"

namespace troupe {

CallResponder::CallResponder(caf::actor_config& config) : caf::monitorable_actor(config) {}

caf::strong_actor_ptr CallResponder::make(caf::actor_system& system,
                                          std::shared_ptr<AnswerLink> link) {
  caf::actor_config config{system.dummy_execution_unit()};
  auto handle = caf::actor_cast<caf::strong_actor_ptr>(caf::make_actor<CallResponder, caf::actor>(
      system.next_actor_id(), system.node(), &system, config));
  of(handle).link_ = std::move(link);
  return handle;
}

CallResponder& CallResponder::of(const caf::strong_actor_ptr& handle) {
  return static_cast<CallResponder&>(*caf::actor_cast<caf::abstract_actor*>(handle));
}

void CallResponder::enqueue(caf::mailbox_element_ptr what, caf::execution_unit*) {
  if (what == nullptr || !what->mid.is_response()) return;
  answer(what->mid.request_id().integer_value(), what->content());
}

void CallResponder::answer(uint64_t id, const caf::type_erased_tuple& content) {
  caf::actor_system& system = home_system();
  AnswerLink& link = *link_;
  std::vector<char> payload;
  Status failed;
  if (!frame::encode_payload(system, content, payload)) {
    failed = errors::Internal("the answer to a call could not be serialised");
  } else if (payload.size() > link.max_bytes) {
    failed = errors::InvalidArgument(
        "the answer to a call has {} bytes, over the limit of {} (max_message_bytes)",
        payload.size(), link.max_bytes);
  }
  if (!failed.ok()) {
    payload.clear();
    caf::message error = caf::make_message(to_caf_error(failed));
    frame::encode_payload(system, error.content(), payload);
  }
  frame::CallHead head{frame::kAnswerMagic, frame::kVersion, 0, 0, 0, id, payload.size()};
  std::vector<iovec> parts{{&head, sizeof head}, {payload.data(), payload.size()}};
  std::lock_guard lock(link.mutex);
  if (link.open && !send_all(link.fd, link.sealer.get(), parts, sizeof head + payload.size())) {
    shutdown(link.fd, SHUT_RDWR);
  }
}

void CallResponder::close() {
  {
    std::lock_guard lock(link_->mutex);  // no answer is being written after this
    link_->open = false;
  }
  cleanup(caf::exit_reason::remote_link_unreachable, nullptr);
}

void serve_call(ChannelContext& context, uint64_t id, const std::string& device,
                const std::vector<char>& payload, const caf::strong_actor_ptr& responder,
                caf::execution_unit* here) {
  auto refuse = [&](const Status& why) {
    caf::message error = caf::make_message(to_caf_error(why));
    CallResponder::of(responder).answer(id, error.content());
  };
  caf::actor receiver = context.find_device(device);
  if (receiver == nullptr) {
    return refuse(errors::NotFound("no device {} in the process of tensor channel {}", device,
                                   context.endpoint));
  }
  auto content = frame::decode_payload(context.system, payload);
  if (!content) {
    return refuse(errors::InvalidArgument("a call for {} could not be read: {}", device,
                                          context.system.render(content.error())));
  }
  ++context.counters.calls_served;
  caf::actor_cast<caf::abstract_actor*>(receiver)->enqueue(
      caf::make_mailbox_element(responder, caf::make_message_id(id), {}, std::move(*content)),
      here);
}

}  // namespace troupe
