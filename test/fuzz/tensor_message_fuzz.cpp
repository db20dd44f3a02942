// Fuzz target: a Tensor as it arrives inside an actor message (word count + flat Cap'n Proto
// message, actors/messages.cpp). Anything may be rejected; nothing may crash, and whatever is
// accepted must encode and decode back to the same tensor.
#include <caf/binary_deserializer.hpp>
#include <caf/binary_serializer.hpp>

#include "troupe/actors/messages.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  caf::binary_deserializer source(nullptr, reinterpret_cast<const char*>(data), size);
  troupe::Tensor tensor;
  if (troupe::detail::load_tensor(source, tensor)) return 0;
  std::vector<char> buffer;
  caf::binary_serializer sink(nullptr, buffer);
  if (troupe::detail::save_tensor(sink, tensor)) __builtin_trap();
  caf::binary_deserializer again(nullptr, buffer);
  troupe::Tensor back;
  if (troupe::detail::load_tensor(again, back) || !back.equals(tensor)) __builtin_trap();
  return 0;
}
