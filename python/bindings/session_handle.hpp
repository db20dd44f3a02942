// SessionHandle: a troupe Session as Python holds it — its own (troupe.Session) or one lent to a
// hook for the length of one call (after_create_session, end), which is cut off when the call
// returns so that a hook keeping it cannot reach a session that has gone.
#pragma once

#include <memory>

#include "troupe/actors/session.hpp"

namespace troupe::python {

struct SessionHandle {
  std::shared_ptr<Session> owned;  // null for a lent session
  Session* session = nullptr;      // null once closed or cut off

  // The session; FailedPrecondition (raised) when closed or cut off.
  Session& get() const;
};

}  // namespace troupe::python
