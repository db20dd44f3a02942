// GraphDef <-> Cap'n Proto, attribute by attribute.
#include "troupe/graph/graph_def_codec.hpp"

#include <capnp/serialize.h>

#include "troupe/graph/core/tensor_codec.hpp"

namespace troupe {
namespace {

capnp::Data::Reader bytes_of(const std::string& s) {
  return capnp::Data::Reader(reinterpret_cast<const kj::byte*>(s.data()), s.size());
}

std::string string_of(capnp::Data::Reader d) {
  return std::string(reinterpret_cast<const char*>(d.begin()), d.size());
}

template <class T, class List>
std::vector<T> vector_of(List list) {
  std::vector<T> values;
  values.reserve(list.size());
  for (auto v : list)
    values.push_back(v);
  return values;
}

template <class List, class Values>
void fill_list(List list, const Values& values) {
  for (size_t i = 0; i < values.size(); ++i)
    list.set(i, values[i]);
}

struct AttrWriter {
  wire::AttrValue::Builder out;
  void operator()(std::monostate) { out.setNone(); }
  void operator()(int64_t v) { out.setI(v); }
  void operator()(float v) { out.setF(v); }
  void operator()(bool v) { out.setB(v); }
  void operator()(const std::string& v) { out.setS(bytes_of(v)); }
  void operator()(DataType v) { out.setType(dtype_to_wire(v)); }
  void operator()(const PartialShape& v) { shape_to_wire(v, out.initShape()); }
  void operator()(const Tensor& v) {
    tensor_to_wire(v, out.initTensor(), capnp::Orphanage(), WireData::kCopy);
  }
  void operator()(const std::vector<int64_t>& v) { fill_list(out.initListI(v.size()), v); }
  void operator()(const std::vector<float>& v) { fill_list(out.initListF(v.size()), v); }
  void operator()(const std::vector<bool>& v) { fill_list(out.initListB(v.size()), v); }
  void operator()(const std::vector<std::string>& v) {
    auto list = out.initListS(v.size());
    for (size_t i = 0; i < v.size(); ++i)
      list.set(i, bytes_of(v[i]));
  }
  void operator()(const std::vector<DataType>& v) {
    auto list = out.initListType(v.size());
    for (size_t i = 0; i < v.size(); ++i)
      list.set(i, dtype_to_wire(v[i]));
  }
  void operator()(const std::vector<PartialShape>& v) {
    auto list = out.initListShape(v.size());
    for (size_t i = 0; i < v.size(); ++i)
      shape_to_wire(v[i], list[i]);
  }
};

}  // namespace

void attr_to_wire(const AttrValue& value, wire::AttrValue::Builder out) {
  std::visit(AttrWriter{out}, value.storage());
}

StatusOr<AttrValue> attr_from_wire(wire::AttrValue::Reader in) {
  using W = wire::AttrValue;
  switch (in.which()) {
    case W::NONE:
      return AttrValue();
    case W::I:
      return AttrValue(in.getI());
    case W::F:
      return AttrValue(in.getF());
    case W::B:
      return AttrValue(in.getB());
    case W::S:
      return AttrValue(string_of(in.getS()));
    case W::TYPE: {
      TROUPE_ASSIGN_OR_RETURN(DataType t, dtype_from_wire(in.getType()));
      return AttrValue(t);
    }
    case W::SHAPE:
      return AttrValue(shape_from_wire(in.getShape()));
    case W::TENSOR: {
      TROUPE_ASSIGN_OR_RETURN(Tensor t, tensor_from_wire(in.getTensor(), nullptr));
      return AttrValue(std::move(t));
    }
    case W::LIST_I:
      return AttrValue(vector_of<int64_t>(in.getListI()));
    case W::LIST_F:
      return AttrValue(vector_of<float>(in.getListF()));
    case W::LIST_B:
      return AttrValue(vector_of<bool>(in.getListB()));
    case W::LIST_S: {
      std::vector<std::string> values;
      for (auto s : in.getListS())
        values.push_back(string_of(s));
      return AttrValue(std::move(values));
    }
    case W::LIST_TYPE: {
      std::vector<DataType> values;
      for (auto t : in.getListType()) {
        TROUPE_ASSIGN_OR_RETURN(DataType dtype, dtype_from_wire(t));
        values.push_back(dtype);
      }
      return AttrValue(std::move(values));
    }
    case W::LIST_SHAPE: {
      std::vector<PartialShape> values;
      for (auto s : in.getListShape())
        values.push_back(shape_from_wire(s));
      return AttrValue(std::move(values));
    }
  }
  return errors::InvalidArgument("attribute of unknown kind {} on the wire",
                                 static_cast<int>(in.which()));
}

void graph_def_to_wire(const GraphDef& graph, wire::GraphDef::Builder out) {
  out.setVersion(graph.version);
  auto nodes = out.initNodes(graph.nodes.size());
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const NodeDef& node = graph.nodes[i];
    auto n = nodes[i];
    n.setName(node.name);
    n.setOp(node.op);
    n.setDevice(node.device);
    auto inputs = n.initInputs(node.inputs.size());
    for (size_t j = 0; j < node.inputs.size(); ++j)
      inputs.set(j, node.inputs[j]);
    auto attrs = n.initAttrs(node.attrs.size());
    size_t j = 0;
    for (const auto& [key, value] : node.attrs) {
      attrs[j].setKey(key);
      attr_to_wire(value, attrs[j].initValue());
      ++j;
    }
  }
}

StatusOr<GraphDef> graph_def_from_wire(wire::GraphDef::Reader in) {
  GraphDef graph;
  graph.version = in.getVersion();
  if (graph.version != kGraphVersion) {
    return errors::InvalidArgument("graph version {} is not supported: this build speaks {}",
                                   graph.version, kGraphVersion);
  }
  for (auto n : in.getNodes()) {
    NodeDef node;
    node.name = n.getName();
    node.op = n.getOp();
    node.device = n.getDevice();
    for (auto input : n.getInputs())
      node.inputs.emplace_back(input);
    for (auto attr : n.getAttrs()) {
      auto value = attr_from_wire(attr.getValue());
      if (!value.ok()) {
        return value.status().with_context(
            fmt::format("node '{}' attribute '{}'", node.name, attr.getKey().cStr()));
      }
      node.attrs.emplace(attr.getKey(), std::move(value).value());
    }
    graph.nodes.push_back(std::move(node));
  }
  return graph;
}

kj::Array<capnp::word> serialize_graph_def(const GraphDef& graph) {
  capnp::MallocMessageBuilder message;
  graph_def_to_wire(graph, message.initRoot<wire::GraphDef>());
  return capnp::messageToFlatArray(message);
}

StatusOr<GraphDef> parse_graph_def(kj::ArrayPtr<const capnp::word> flat) {
  try {
    capnp::ReaderOptions options;
    options.traversalLimitInWords = traversal_limit_for(flat.size());
    capnp::FlatArrayMessageReader reader(flat, options);
    return graph_def_from_wire(reader.getRoot<wire::GraphDef>());
  } catch (const kj::Exception& e) {
    return errors::InvalidArgument("malformed graph message: {}", e.getDescription().cStr());
  }
}

}  // namespace troupe
