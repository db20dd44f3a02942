// Partitioning by device with _Send/_Recv pairs, and per-partition _Arg/_Retval numbering.
#include "troupe/graph/partition.hpp"

#include <map>

namespace troupe {
namespace {

class Partitioner {
 public:
  Partitioner(const Graph& graph, const std::vector<std::string>& devices)
      : graph_(graph), devices_(devices) {}

  StatusOr<std::vector<Partition>> run() {
    for (int id = 0; id < graph_.num_nodes(); ++id)
      partition_of(devices_[id]);
    for (int id = 0; id < graph_.num_nodes(); ++id) {
      const Node& node = graph_.node(id);
      size_t dst = partition_of(devices_[id]);
      NodeDef def = node.def();
      def.device = devices_[id];
      def.inputs.clear();
      for (int i = 0; i < node.num_inputs(); ++i) {
        const Edge& e = node.inputs()[i];
        if (devices_[e.node] == devices_[id]) {
          def.inputs.push_back(TensorId{graph_.node(e.node).name(), e.index}.to_string());
          continue;
        }
        if (node.input_is_ref(i)) {
          return errors::Internal("node '{}' takes a reference from '{}' on another device ({})",
                                  node.name(), graph_.node(e.node).name(), devices_[e.node]);
        }
        def.inputs.push_back(received_tensor(e, dst));
      }
      for (int c : node.control_inputs()) {
        def.inputs.push_back(devices_[c] == devices_[id] ? "^" + graph_.node(c).name()
                                                         : "^" + received_control(c, dst));
      }
      renumber(node, def, partitions_[dst]);
      partitions_[dst].graph.nodes.push_back(std::move(def));
    }
    return std::move(partitions_);
  }

 private:
  size_t partition_of(const std::string& device) {
    auto [it, inserted] = index_.emplace(device, partitions_.size());
    if (inserted) partitions_.push_back(Partition{device, {}, {}, {}});
    return it->second;
  }

  static void renumber(const Node& node, NodeDef& def, Partition& p) {
    if (node.op_name() == "_Arg") {
      p.feed_of_arg.push_back(static_cast<int>(def.find_attr("index")->get<int64_t>()));
      def.attrs["index"] = static_cast<int64_t>(p.feed_of_arg.size() - 1);
    } else if (node.op_name() == "_Retval") {
      p.fetch_of_ret.push_back(static_cast<int>(def.find_attr("index")->get<int64_t>()));
      def.attrs["index"] = static_cast<int64_t>(p.fetch_of_ret.size() - 1);
    }
  }

  // Adds a _Send of `tensor` on `src_device` and a _Recv of it in partition `dst`, named
  // <prefix>send_<stem>_<dst> and <prefix>recv_<stem>_<dst>; returns the _Recv's name.
  std::string add_pair(const std::string& tensor, const std::string& input, DataType dtype,
                       const PartialShape& shape, const std::string& src_device, size_t dst,
                       const std::string& prefix, const std::string& stem) {
    const std::string dst_device = partitions_[dst].device;
    std::string suffix = stem + "_" + std::to_string(dst);
    NodeDef send;
    send.name = prefix + "send_" + suffix;
    send.op = "_Send";
    send.device = src_device;
    send.inputs.push_back(input);
    send.attrs["T"] = dtype;
    send.attrs["tensor_name"] = tensor;
    send.attrs["send_device"] = src_device;
    send.attrs["recv_device"] = dst_device;
    partitions_[partition_of(src_device)].graph.nodes.push_back(std::move(send));

    NodeDef recv;
    recv.name = prefix + "recv_" + suffix;
    recv.op = "_Recv";
    recv.device = dst_device;
    recv.attrs["tensor_type"] = dtype;
    recv.attrs["tensor_name"] = tensor;
    recv.attrs["send_device"] = src_device;
    recv.attrs["recv_device"] = dst_device;
    recv.attrs["shape"] = shape;
    std::string name = recv.name;
    partitions_[dst].graph.nodes.push_back(std::move(recv));
    return name;
  }

  std::string received_tensor(const Edge& e, size_t dst) {
    auto key = std::make_tuple(e.node, e.index, dst);
    if (auto it = recvs_.find(key); it != recvs_.end()) return it->second;
    const Node& src = graph_.node(e.node);
    std::string tensor = TensorId{src.name(), e.index}.to_string();
    if (e.index == 0) tensor += ":0";
    std::string name =
        add_pair(tensor, TensorId{src.name(), e.index}.to_string(), src.output_type(e.index),
                 src.output_shape(e.index), devices_[e.node], dst, "_",
                 src.name() + "_" + std::to_string(e.index));
    recvs_.emplace(key, name);
    return name;
  }

  std::string received_control(int src_id, size_t dst) {
    auto key = std::make_tuple(src_id, -1, dst);
    if (auto it = recvs_.find(key); it != recvs_.end()) return it->second;
    const Node& src = graph_.node(src_id);
    const std::string& src_device = devices_[src_id];
    // A constant that runs after `src` carries the control edge as data.
    NodeDef trigger;
    trigger.name = "_ctrl_" + src.name() + "_" + std::to_string(dst);
    trigger.op = "Const";
    trigger.device = src_device;
    trigger.inputs.push_back("^" + src.name());
    trigger.attrs["dtype"] = DataType::kBool;
    trigger.attrs["value"] = Tensor(true);
    std::string trigger_name = trigger.name;
    partitions_[partition_of(src_device)].graph.nodes.push_back(std::move(trigger));
    std::string name = add_pair("^" + src.name(), trigger_name, DataType::kBool,
                                PartialShape::scalar(), src_device, dst, "_c", src.name());
    recvs_.emplace(key, name);
    return name;
  }

  const Graph& graph_;
  const std::vector<std::string>& devices_;
  std::vector<Partition> partitions_;
  std::map<std::string, size_t> index_;
  std::map<std::tuple<int, int, size_t>, std::string> recvs_;
};

}  // namespace

StatusOr<std::vector<Partition>> partition_by_device(const Graph& graph,
                                                     const std::vector<std::string>& devices) {
  return Partitioner(graph, devices).run();
}

}  // namespace troupe
