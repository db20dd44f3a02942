// The counter actor and its registration.
#include "word_count_role.hpp"

#include <sstream>

#include <caf/all.hpp>

#include <troupe/actors/role_registry.hpp>
#include <troupe/actors/runtime.hpp>

namespace word_count {
namespace {

struct CounterState {
  std::string task;
  int64_t total = 0;
  static inline const char* name = "word_count.counter";
};

caf::behavior counter(caf::stateful_actor<CounterState>* self, const std::string& task) {
  self->state.task = task;
  return {
      [=](count_words_atom, const CountWords& request) {
        std::istringstream words(request.text);
        int64_t count = 0;
        for (std::string word; words >> word;)
          ++count;
        self->state.total += count;
        return WordCount{count, self->state.total, self->state.task};
      },
  };
}

}  // namespace

troupe::Status register_word_count_role(const std::string& job_name) {
  troupe::Status types = troupe::Runtime::add_message_types([](caf::actor_system_config& config) {
    config.add_message_type<CountWords>("word_count.CountWords");
    config.add_message_type<WordCount>("word_count.WordCount");
  });
  if (!types.ok()) return types;
  return troupe::RoleRegistry::global().register_role(
      job_name, [](const troupe::RoleContext& context) {
        // Linked to the task actor: it stops with the task.
        return context.parent->spawn<caf::linked>(counter, context.server_def.task_name());
      });
}

}  // namespace word_count
