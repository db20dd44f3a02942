// WAV encoding: the RIFF header and 16-bit samples.
#include "troupe/devices/cpu/summary/wav_encoder.hpp"

#include <algorithm>
#include <cmath>

namespace troupe::summary {
namespace {

void put_le(std::string& out, uint32_t v, int bytes) {
  for (int i = 0; i < bytes; ++i)
    out.push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

}  // namespace

StatusOr<std::string> encode_wav(const float* samples, int64_t frames, int channels,
                                 int sample_rate) {
  constexpr int kBytesPerSample = 2;
  const uint64_t data_bytes = static_cast<uint64_t>(frames) * channels * kBytesPerSample;
  if (channels < 1 || channels > 0xffff || sample_rate < 1 || frames < 0 ||
      data_bytes > 0xffffffffu - 36) {
    return errors::InvalidArgument(
        "a WAV cannot hold {} frames of {} channels at {} samples per second", frames, channels,
        sample_rate);
  }
  std::string wav = "RIFF";
  put_le(wav, static_cast<uint32_t>(36 + data_bytes), 4);
  wav += "WAVEfmt ";
  put_le(wav, 16, 4);  // fmt chunk size
  put_le(wav, 1, 2);   // PCM
  put_le(wav, static_cast<uint32_t>(channels), 2);
  put_le(wav, static_cast<uint32_t>(sample_rate), 4);
  put_le(wav, static_cast<uint32_t>(sample_rate) * channels * kBytesPerSample, 4);  // byte rate
  put_le(wav, static_cast<uint32_t>(channels * kBytesPerSample), 2);                // block align
  put_le(wav, 8 * kBytesPerSample, 2);                                              // bits
  wav += "data";
  put_le(wav, static_cast<uint32_t>(data_bytes), 4);
  wav.reserve(wav.size() + data_bytes);
  for (int64_t i = 0; i < frames * channels; ++i) {
    float scaled = std::round(samples[i] * 32768.0f);
    auto sample = static_cast<int16_t>(std::clamp(scaled, -32768.0f, 32767.0f));
    put_le(wav, static_cast<uint16_t>(sample), 2);
  }
  return wav;
}

}  // namespace troupe::summary
