// Fuzz target: a checkpoint file (.npz: a ZIP of .npy arrays, possibly deflated), as
// MonitoredTrainingSession restores it. Anything may be rejected; nothing may crash.
#include <string_view>

#include "troupe/graph/formats/npz.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  (void)troupe::decode_npz(std::string_view(reinterpret_cast<const char*>(data), size), "input");
  return 0;
}
