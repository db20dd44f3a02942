// The "counter" role of this example: tasks of the job it is registered for count the words of
// the texts any task of the cluster sends them, and answer with the count, their total so far
// and their own task name.
//
// Protocol of the role actor:
//   (count_words_atom, CountWords) -> WordCount
#pragma once

#include <cstdint>
#include <string>

#include <caf/atom.hpp>
#include <caf/meta/type_name.hpp>

#include <troupe/graph/core/status.hpp>

namespace word_count {

using count_words_atom = caf::atom_constant<caf::atom("countwords")>;

struct CountWords {
  std::string text;
};

struct WordCount {
  int64_t words = 0;       // in this text
  int64_t total = 0;       // in every text this task has counted
  std::string counted_by;  // the task, e.g. /job:counter/replica:0/task:0
};

// CAF serializes messages between processes with these.
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, CountWords& x) {
  return f(caf::meta::type_name("word_count.CountWords"), x.text);
}
template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, WordCount& x) {
  return f(caf::meta::type_name("word_count.WordCount"), x.words, x.total, x.counted_by);
}

// Registers the message types and the role for tasks of `job_name`. Every process of the
// cluster calls it once, before its first server starts.
troupe::Status register_word_count_role(const std::string& job_name = "counter");

}  // namespace word_count
