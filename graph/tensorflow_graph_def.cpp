// Graph -> TensorFlow GraphDef bytes.
#include "troupe/graph/tensorflow_graph_def.hpp"

#include "troupe/graph/core/protobuf_wire.hpp"
#include "troupe/graph/core/tensor_proto.hpp"

namespace troupe {
namespace {

using proto::put_bytes;
using proto::put_float;
using proto::put_int;

std::string encode_attr(const AttrValue& value) {
  std::string out;
  std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, int64_t>) {
          put_int(out, 3, v);
        } else if constexpr (std::is_same_v<T, float>) {
          put_float(out, 4, v);
        } else if constexpr (std::is_same_v<T, bool>) {
          put_int(out, 5, v ? 1 : 0);
        } else if constexpr (std::is_same_v<T, std::string>) {
          put_bytes(out, 2, v);
        } else if constexpr (std::is_same_v<T, DataType>) {
          put_int(out, 6, tensorflow_dtype_number(v));
        } else if constexpr (std::is_same_v<T, PartialShape>) {
          put_bytes(out, 7, encode_tensor_shape_proto(v));
        } else if constexpr (std::is_same_v<T, Tensor>) {
          put_bytes(out, 8, encode_tensor_proto(v));
        } else if constexpr (std::is_same_v<T, std::monostate>) {
          // no value
        } else {
          std::string list;
          for (const auto& item : v) {
            using Item = std::decay_t<decltype(item)>;
            if constexpr (std::is_same_v<Item, std::string>) {
              put_bytes(list, 2, item);
            } else if constexpr (std::is_same_v<Item, int64_t>) {
              put_int(list, 3, item);
            } else if constexpr (std::is_same_v<Item, float>) {
              put_float(list, 4, item);
            } else if constexpr (std::is_same_v<Item, bool>) {
              put_int(list, 5, item ? 1 : 0);
            } else if constexpr (std::is_same_v<Item, DataType>) {
              put_int(list, 6, tensorflow_dtype_number(item));
            } else if constexpr (std::is_same_v<Item, PartialShape>) {
              put_bytes(list, 7, encode_tensor_shape_proto(item));
            }
          }
          put_bytes(out, 1, list);
        }
      },
      value.storage());
  return out;
}

// "x:0" -> "x", as TensorFlow names output 0.
std::string tensorflow_input_name(const std::string& input) {
  if (input.size() > 2 && input.ends_with(":0")) return input.substr(0, input.size() - 2);
  return input;
}

}  // namespace

std::string encode_tensorflow_graph_def(const Graph& graph) {
  std::string out;
  for (int i = 0; i < graph.num_nodes(); ++i) {
    const NodeDef& def = graph.node(i).def();
    std::string node;
    put_bytes(node, 1, def.name);
    put_bytes(node, 2, def.op);
    for (const std::string& input : def.inputs)
      put_bytes(node, 3, tensorflow_input_name(input));
    if (!def.device.empty()) put_bytes(node, 4, def.device);
    for (const auto& [key, value] : def.attrs) {
      std::string entry;
      put_bytes(entry, 1, key);
      put_bytes(entry, 2, encode_attr(value));
      put_bytes(node, 5, entry);
    }
    put_bytes(out, 1, node);
  }
  std::string versions;
  put_int(versions, 1, 27);  // producer: a TensorFlow 1.x GraphDef version
  put_bytes(out, 4, versions);
  return out;
}

}  // namespace troupe
