// CancellationManager: callback registry.
#include "troupe/devices/cancellation.hpp"

namespace troupe {

CancellationManager::Token CancellationManager::register_callback(
    std::function<void(const Status&)> on_cancel) {
  if (cancelled_) return kAlreadyCancelled;
  Token token = next_++;
  callbacks_.emplace(token, std::move(on_cancel));
  return token;
}

bool CancellationManager::deregister(Token token) {
  return callbacks_.erase(token) > 0;
}

void CancellationManager::start_cancel(const Status& reason) {
  if (cancelled_) return;
  cancelled_ = true;
  reason_ = reason;
  auto callbacks = std::move(callbacks_);
  callbacks_.clear();
  for (auto& [token, callback] : callbacks)
    callback(reason);
}

}  // namespace troupe
