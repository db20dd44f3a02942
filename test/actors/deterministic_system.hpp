// DeterministicSystem: an actor system whose actors run one message at a time, on the test's
// thread, in an order the test controls (CAF 0.17's test coordinator, the scheduler behind
// caf/test/dsl.hpp). Nothing runs unless the test says so, timeouts fire only when it
// triggers them, and every hop is recorded, so a test can check a protocol's messages in
// order, stop a step halfway, or lose a task between two chosen messages.
//
// The system has troupe's message types and no network module: tasks of another "process"
// are task actors of this system registered in the local registry under their address.
// Kernels still run on their device's Eigen pool, called from the actor's turn.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include <boost/test/unit_test.hpp>
#include <caf/all.hpp>
#include <caf/scheduler/test_coordinator.hpp>

#include "troupe/actors/error_bridge.hpp"
#include "troupe/actors/message_types.hpp"

namespace troupe::testing {

// One message taken out of a mailbox: "sender -> receiver: what". What is the message's atom
// ("runpart", "regpart", ...), "answer" or "error" for a response, "exit" or "down" for those
// system messages, "other" for anything else.
struct Hop {
  std::string sender;
  std::string receiver;
  std::string what;

  std::string to_string() const { return sender + " -> " + receiver + ": " + what; }
};

class DeterministicSystem {
 public:
  DeterministicSystem()
      : system_(configure(config_)),
        scheduler_(dynamic_cast<caf::scheduler::test_coordinator&>(system_.scheduler())),
        client_(system_, /*hide=*/true) {
    label(caf::actor_cast<caf::actor>(client_), "client");
  }

  // Stops every actor the test owns, lets them finish, and lets the system go without
  // waiting for actors nothing will schedule any more.
  ~DeterministicSystem() {
    for (const caf::actor& actor : owned_)
      caf::anon_send_exit(actor, caf::exit_reason::user_shutdown);
    run();
    system_.await_actors_before_shutdown(false);
  }

  caf::actor_system& system() { return system_; }
  caf::scoped_actor& client() { return client_; }
  caf::scheduler::test_coordinator& scheduler() { return scheduler_; }

  // Names `actor` in the trace; owned actors are stopped when the system goes.
  void label(const caf::actor& actor, std::string name) { labels_[actor->id()] = std::move(name); }
  void own(const caf::actor& actor, std::string name) {
    label(actor, std::move(name));
    owned_.push_back(actor);
  }

  // Runs one message of the actor the scheduler would run next; false when none waits.
  bool step() {
    if (!scheduler_.has_job()) return false;
    auto* actor = dynamic_cast<caf::abstract_actor*>(scheduler_.jobs.front());
    if (actor != nullptr) {
      if (caf::mailbox_element* next = actor->peek_at_next_mailbox_element())
        trace_.push_back(Hop{name_of(next->sender), name_of(actor->id()), describe(*next)});
    }
    return scheduler_.try_run_once();
  }

  // Runs messages until `done()` holds (true) or nothing is left to run (false).
  bool run_until(const std::function<bool()>& done, size_t max_messages = 1000000) {
    for (size_t i = 0; i < max_messages; ++i) {
      if (done()) return true;
      if (!step()) return done();
    }
    BOOST_FAIL("still running after " << max_messages << " messages");
    return false;
  }

  // Runs until no actor has a message left.
  void run() {
    run_until([] { return false; });
  }

  // Runs until `receiver` is about to take a message `what` (which stays in its mailbox).
  bool run_until_next(const std::string& receiver, const std::string& what) {
    return run_until([&] {
      if (!scheduler_.has_job()) return false;
      auto* actor = dynamic_cast<caf::abstract_actor*>(scheduler_.jobs.front());
      if (actor == nullptr || name_of(actor->id()) != receiver) return false;
      caf::mailbox_element* next = actor->peek_at_next_mailbox_element();
      return next != nullptr && describe(*next) == what;
    });
  }

  const std::vector<Hop>& trace() const { return trace_; }
  void clear_trace() { trace_.clear(); }
  // Hops of the trace that `receiver` took, as "sender: what".
  std::vector<std::string> received_by(const std::string& receiver) const {
    std::vector<std::string> hops;
    for (const Hop& hop : trace_)
      if (hop.receiver == receiver) hops.push_back(hop.sender + ": " + hop.what);
    return hops;
  }
  // Whether the trace holds `hops` ("sender -> receiver: what") in this order, others between.
  bool in_order(const std::vector<std::string>& hops) const {
    size_t next = 0;
    for (const Hop& hop : trace_)
      if (next < hops.size() && hop.to_string() == hops[next]) ++next;
    return next == hops.size();
  }
  std::string trace_text() const {
    std::string text;
    for (const Hop& hop : trace_)
      text += "  " + hop.to_string() + "\n";
    return text;
  }

  // Sends a request from the client, runs until nothing is left, and returns the answer, or
  // DeadlineExceeded when none came (the test keeps the actors from answering).
  template <class T, class... Ts>
  StatusOr<T> ask(const caf::actor& to, Ts&&... xs) {
    auto handle = client_->request(to, caf::infinite, std::forward<Ts>(xs)...);
    run();
    if (client_->mailbox().empty()) return errors::DeadlineExceeded("no answer came");
    StatusOr<T> result = errors::Internal("unexpected answer");
    handle.receive([&](T& value) { result = std::move(value); },
                   [&](caf::error& error) { result = from_caf_error(error); });
    return result;
  }
  Status ask_unit(const caf::actor& to, auto&&... xs) {
    auto handle = client_->request(to, caf::infinite, std::forward<decltype(xs)>(xs)...);
    run();
    if (client_->mailbox().empty()) return errors::DeadlineExceeded("no answer came");
    Status result;
    handle.receive([] {}, [&](caf::error& error) { result = from_caf_error(error); });
    return result;
  }

 private:
  static caf::actor_system_config& configure(caf::actor_system_config& config) {
    config.set("scheduler.policy", caf::atom("testing"));
    config.set("logger.file-verbosity", caf::atom("quiet"));
    add_troupe_types(config);
    return config;
  }

  std::string name_of(caf::actor_id id) const {
    auto it = labels_.find(id);
    return it != labels_.end() ? it->second : "actor#" + std::to_string(id);
  }
  std::string name_of(const caf::strong_actor_ptr& sender) const {
    return sender ? name_of(sender->id()) : "anonymous";
  }

  static std::string describe(caf::mailbox_element& element) {
    const caf::type_erased_tuple& content = element.content();
    if (content.match_element<caf::exit_msg>(0)) return "exit";
    if (content.match_element<caf::down_msg>(0)) return "down";
    if (element.mid.is_response()) return content.match_element<caf::error>(0) ? "error" : "answer";
    if (!content.empty() && content.match_element<caf::atom_value>(0))
      return caf::to_string(content.get_as<caf::atom_value>(0));
    return "other";
  }

  caf::actor_system_config config_;
  caf::actor_system system_;
  caf::scheduler::test_coordinator& scheduler_;
  caf::scoped_actor client_;
  std::map<caf::actor_id, std::string> labels_;
  std::vector<caf::actor> owned_;
  std::vector<Hop> trace_;
};

}  // namespace troupe::testing
