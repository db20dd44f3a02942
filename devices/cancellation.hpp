// CancellationManager: how a step stops the work it is waiting for. Async kernels that may
// wait (a Recv, a Dequeue) register a callback that finishes them with the reason; cancelling
// the step runs every callback once. Used only from the device's thread.
#pragma once

#include <cstdint>
#include <functional>
#include <map>

#include "troupe/graph/core/status.hpp"

namespace troupe {

class CancellationManager {
 public:
  using Token = int64_t;
  static constexpr Token kAlreadyCancelled = -1;

  // Registers `on_cancel`; returns kAlreadyCancelled (and registers nothing) if the step is
  // already cancelled, in which case the caller should fail at once with reason().
  Token register_callback(std::function<void(const Status&)> on_cancel);
  // Forgets a callback (its work finished normally). False if it was not registered.
  bool deregister(Token token);

  // Runs every registered callback with `reason`, once. Later calls do nothing.
  void start_cancel(const Status& reason);
  bool is_cancelled() const { return cancelled_; }
  const Status& reason() const { return reason_; }

 private:
  std::map<Token, std::function<void(const Status&)>> callbacks_;
  Token next_ = 0;
  bool cancelled_ = false;
  Status reason_;
};

}  // namespace troupe
