// Builder for tf.contrib.seq2seq's GatherTree: the whole beams of a beam search, from the id and
// the parent beam each beam chose at each step (python/troupe/contrib/seq2seq/).
#pragma once

#include "troupe/graph/node_builder.hpp"

namespace troupe::ops {

// step_ids and parent_ids: int32 [max_time, batch_size, beam_width]; max_sequence_lengths: int32
// [batch_size]; end_token: an int32 scalar. beams[t, b, j] is the id at step t of the beam that
// ends in beam j at step max_sequence_lengths[b] - 1, found by following parent_ids back from
// there; after a beam's first end_token, and past max_sequence_lengths[b], it is end_token. A
// parent id outside [0, beam_width) is InvalidArgument naming it, as TensorFlow's CPU kernel
// (which lets beam_width itself through and reads past the beams).
Output GatherTree(const Scope& scope, const Input& step_ids, const Input& parent_ids,
                  const Input& max_sequence_lengths, const Input& end_token);

}  // namespace troupe::ops
