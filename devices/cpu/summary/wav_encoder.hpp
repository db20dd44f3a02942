// WAV encoding of audio for audio summaries: RIFF/WAVE, 16-bit PCM, little-endian, samples
// interleaved by channel, each float scaled by 32768, rounded and clamped to int16's range
// (TensorFlow's encoding). `samples` holds frames x channels values.
#pragma once

#include <cstdint>
#include <string>

#include "troupe/graph/core/status.hpp"

namespace troupe::summary {

// InvalidArgument for a rate or size a WAV header cannot hold.
StatusOr<std::string> encode_wav(const float* samples, int64_t frames, int channels,
                                 int sample_rate);

}  // namespace troupe::summary
