// What `troupe train`'s loop needs of a model and its data, whichever model it is: the tensors
// a step runs and logs, the examples each step feeds, the evaluation on held-out data and the
// line that reports it at the end.
#pragma once

#include <functional>
#include <string>

#include "troupe/actors/session.hpp"
#include "troupe/apps/training/hooks.hpp"
#include "troupe/graph/variables.hpp"

namespace troupe::cli {

struct TrainingProblem {
  Output loss;      // the batch's mean loss
  Output accuracy;  // the batch's fraction classified right
  Output training;  // bool scalar, false unless fed: the training steps feed true (dropout)
  ModelVariable global_step;
  // Adds the next step's examples to `feeds` (nothing when the graph reads its own input).
  std::function<void(FeedDict& feeds)> next_batch;
  EvaluationHook::Evaluate evaluate;
  // The chief's last line from the final evaluation's results ("test accuracy 0.87, ...").
  std::function<std::string(const EvaluationHook::Results&)> describe;
};

}  // namespace troupe::cli
