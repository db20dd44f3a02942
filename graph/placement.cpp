// Placement: colocation groups (union-find), request merging and completion, device matching.
#include "troupe/graph/placement.hpp"

#include <algorithm>
#include <map>
#include <numeric>

#include <fmt/ranges.h>

#include "troupe/graph/core/logging.hpp"
#include "troupe/graph/scope.hpp"

namespace troupe {
namespace {

struct Candidate {
  DeviceName name;
  std::string full;
};

// GPU before CPU, then in the given order.
int type_rank(const DeviceName& d) {
  return d.type == "GPU" ? 0 : 1;
}

// Disjoint sets of node ids (plus ids for colocation targets missing from the graph); the root
// of a set is its smallest id, so a set holding a node has a node as root.
class UnionFind {
 public:
  explicit UnionFind(int size) : parent_(size) { std::iota(parent_.begin(), parent_.end(), 0); }
  int add() {
    parent_.push_back(static_cast<int>(parent_.size()));
    return parent_.back();
  }
  int find(int x) {
    while (parent_[x] != x) {
      parent_[x] = parent_[parent_[x]];
      x = parent_[x];
    }
    return x;
  }
  void unite(int a, int b) {
    a = find(a);
    b = find(b);
    if (a != b) parent_[std::max(a, b)] = std::min(a, b);
  }

 private:
  std::vector<int> parent_;
};

// The "loc:@<name>" targets of node's _class attribute. InvalidArgument if the attribute is not
// list(string) (an empty list of another kind is accepted: that is how an empty list reads back).
StatusOr<std::vector<std::string>> colocation_targets(const Node& node) {
  std::vector<std::string> targets;
  const AttrValue* attr = node.def().find_attr(kColocationAttr);
  if (attr == nullptr) return targets;
  if (!attr->holds<std::vector<std::string>>()) {
    if (attr->holds<std::vector<int64_t>>() && attr->get<std::vector<int64_t>>().empty()) {
      return targets;
    }
    return errors::InvalidArgument(
        "node '{}' ({}): attribute '{}' is {}, expected list(string) of \"{}<node name>\" entries",
        node.name(), node.op_name(), kColocationAttr, attr_type_name(attr->type()),
        kColocationGroupPrefix);
  }
  for (const std::string& entry : attr->get<std::vector<std::string>>()) {
    if (entry.starts_with(kColocationGroupPrefix)) {
      targets.push_back(entry.substr(kColocationGroupPrefix.size()));
    }
  }
  return targets;
}

bool has_ref_input_from(const Node& node, int producer) {
  for (int i = 0; i < node.num_inputs(); ++i) {
    if (node.input_is_ref(i) && node.inputs()[i].node == producer) return true;
  }
  return false;
}

bool names_in_class(const Node& node, const std::string& target) {
  auto targets = colocation_targets(node);
  return targets.ok() && std::find(targets->begin(), targets->end(), target) != targets->end();
}

// Why `a` and `b` must share a device, for error messages.
std::string colocation_reason(const Node& a, const Node& b) {
  if (has_ref_input_from(a, b.id()) || has_ref_input_from(b, a.id())) {
    const Node& user = has_ref_input_from(a, b.id()) ? a : b;
    const Node& owner = &user == &a ? b : a;
    return fmt::format(
        "'{}' takes a reference to '{}', so they must run on one device (build '{}' in "
        "Scope::colocate_with('{}') to give it the device of '{}')",
        user.name(), owner.name(), user.name(), owner.name(), owner.name());
  }
  if (names_in_class(a, b.name()) || names_in_class(b, a.name())) {
    return fmt::format("'{}' and '{}' are colocated by a '{}' attribute (Scope::colocate_with)",
                       a.name(), b.name(), kColocationAttr);
  }
  return fmt::format(
      "'{}' and '{}' are in one colocation group (joined by reference inputs and '{}' "
      "attributes), whose nodes must run on one device",
      a.name(), b.name(), kColocationAttr);
}

// The candidates, in order, and the same by task: a graph spread over every task of a large
// cluster would otherwise compare each group's request with every device.
struct CandidateIndex {
  std::vector<const Candidate*> all;
  std::map<std::pair<std::string, int>, std::vector<const Candidate*>> by_task;
  std::vector<const Candidate*> none;

  explicit CandidateIndex(const std::vector<Candidate>& candidates) {
    for (const Candidate& c : candidates) {
      all.push_back(&c);
      by_task[{*c.name.job, *c.name.task}].push_back(&c);
    }
  }
  // Those `want` could match (and maybe others), in order.
  const std::vector<const Candidate*>& for_request(const DeviceName& want) const {
    if (!want.job || !want.task) return all;
    auto it = by_task.find({*want.job, *want.task});
    return it == by_task.end() ? none : it->second;
  }
};

struct GroupContext {
  const Graph& graph;
  const PlacementOptions& options;
  const std::vector<Candidate>& candidates;
  const CandidateIndex& index;
  const std::vector<DeviceName>& requests;
  const std::vector<bool>& follows;  // runtime nodes whose own request does not count
};

// The device of one colocation group; `members` are node ids in increasing order.
StatusOr<std::string> place_group(const GroupContext& ctx, const std::vector<int>& members) {
  const Graph& graph = ctx.graph;
  // With soft placement the nodes that own state (their outputs are references) decide first.
  std::vector<int> order = members;
  if (ctx.options.allow_soft_placement) {
    auto owns_state = [&](int m) {
      const Node& node = graph.node(m);
      for (int i = 0; i < node.num_outputs(); ++i) {
        if (node.output_is_ref(i)) return true;
      }
      return false;
    };
    std::stable_partition(order.begin(), order.end(), owns_state);
  }
  DeviceName merged;
  const Node* requester = nullptr;  // the first member with a request
  for (size_t k = 0; k < order.size(); ++k) {
    int m = order[k];
    const DeviceName& request = ctx.requests[m];
    if (ctx.follows[m] || request == DeviceName{}) continue;
    auto next = DeviceName::merge(merged, request);
    if (!next.ok() && ctx.options.allow_soft_placement && requester != nullptr) continue;
    if (!next.ok()) {
      const Node& node = graph.node(m);
      // As TensorFlow's placer: a node that takes a reference to a member with a device (an
      // Assign built under another device scope, replica_device_setter's worker) runs with it.
      for (size_t j = 0; j < k; ++j) {
        int p = order[j];
        if (ctx.follows[p] || ctx.requests[p] == DeviceName{} || !has_ref_input_from(node, p)) {
          continue;
        }
        log_debug(
            "Ignoring device specification {} for node '{}' because the input edge from '{}' "
            "is a reference connection and already has a device field set to {}",
            request.to_string(), node.name(), graph.node(p).name(), ctx.requests[p].to_string());
        next = merged;
        break;
      }
    }
    if (!next.ok()) {
      const Node& node = graph.node(m);
      for (size_t j = 0; j < k; ++j) {
        int p = order[j];
        if (ctx.follows[p] || ctx.requests[p].is_compatible_with(request)) continue;
        const Node& other = graph.node(p);
        return errors::InvalidArgument(
            "node '{}' wants {} but is colocated with node '{}' which wants {}: {}", node.name(),
            request.to_string(), other.name(), ctx.requests[p].to_string(),
            colocation_reason(node, other));
      }
      return next.status().with_context(fmt::format(
          "node '{}' ({}) and the nodes colocated with it", node.name(), node.op_name()));
    }
    merged = *next;
    if (requester == nullptr) requester = &graph.node(m);
  }

  // Complete the request from the default task, then pick a device.
  DeviceName want = merged;
  if (!want.job) {
    want.job = ctx.options.default_device.job;
    if (!want.replica) want.replica = ctx.options.default_device.replica;
    if (!want.task) want.task = ctx.options.default_device.task;
  }
  auto has_kernel = [&](int m, const Candidate& c) {
    return !ctx.options.has_kernel || ctx.options.has_kernel(graph.node(m).op_name(), *c.name.type);
  };
  std::vector<const Candidate*> matching;
  for (const Candidate* c : ctx.index.for_request(want)) {
    if (!want.matches(c->name)) continue;
    matching.push_back(c);
    if (std::all_of(members.begin(), members.end(), [&](int m) { return has_kernel(m, *c); })) {
      return c->full;
    }
  }
  if (ctx.options.allow_soft_placement && (want.type || want.id)) {
    // Soft placement: any device of the requested task that can run the group.
    DeviceName any_device = want;
    any_device.type.reset();
    any_device.id.reset();
    for (const Candidate* c : ctx.index.for_request(any_device)) {
      if (!any_device.matches(c->name)) continue;
      if (std::all_of(members.begin(), members.end(), [&](int m) { return has_kernel(m, *c); })) {
        return c->full;
      }
    }
  }

  const Node& named = requester != nullptr ? *requester : graph.node(members.front());
  std::string group_note;
  if (members.size() > 1) {
    group_note = fmt::format(" (the request of its colocation group of {} nodes)", members.size());
  }
  if (matching.empty()) {
    std::string request = merged.to_string();
    std::string completed;
    if (want != merged) {
      completed = fmt::format(", completed from the default device to '{}'", want.to_string());
    }
    std::vector<std::string> known;
    for (const Candidate& c : ctx.candidates)
      known.push_back(c.full);
    return errors::InvalidArgument(
        "node '{}' ({}) is placed on device '{}'{}{}, which does not exist; known devices: {}",
        named.name(), named.op_name(), request, completed, group_note,
        known.empty() ? std::string("none") : fmt::format("{}", fmt::join(known, ", ")));
  }
  std::vector<std::string> matching_names;
  for (const Candidate* c : matching)
    matching_names.push_back(c->full);
  for (int m : members) {
    if (std::any_of(matching.begin(), matching.end(),
                    [&](const Candidate* c) { return has_kernel(m, *c); })) {
      continue;
    }
    const Node& node = graph.node(m);
    return errors::InvalidArgument(
        "node '{}': op '{}' has no kernel on any device matching '{}'{}; matching devices: {}",
        node.name(), node.op_name(), want.to_string(), group_note, fmt::join(matching_names, ", "));
  }
  std::vector<std::string> ops;
  for (int m : members)
    ops.push_back(fmt::format("'{}' ({})", graph.node(m).name(), graph.node(m).op_name()));
  return errors::InvalidArgument(
      "nodes {} are colocated, but no device matching '{}' has a kernel for each of their ops; "
      "matching devices: {}",
      fmt::join(ops, ", "), want.to_string(), fmt::join(matching_names, ", "));
}

}  // namespace

StatusOr<std::vector<std::string>> place(const Graph& graph, const PlacementOptions& options) {
  std::vector<Candidate> candidates;
  for (const std::string& full : options.devices) {
    auto name = DeviceName::parse(full);
    if (!name.ok()) return name.status().with_context("placement: a device of the cluster");
    if (!name->is_fully_specified()) {
      return errors::InvalidArgument(
          "placement: device '{}' of the cluster is not a full device name (expected "
          "/job:<name>/replica:<n>/task:<n>/device:<TYPE>:<n>)",
          full);
    }
    candidates.push_back({std::move(name).value(), full});
  }
  std::stable_sort(candidates.begin(), candidates.end(), [](const auto& a, const auto& b) {
    return type_rank(a.name) < type_rank(b.name);
  });

  const int n = graph.num_nodes();
  std::vector<DeviceName> requests(n);
  std::vector<int> first_consumer(n, -1);
  for (int id = 0; id < n; ++id) {
    const Node& node = graph.node(id);
    auto requested = DeviceName::parse(node.requested_device());
    if (!requested.ok()) {
      return requested.status().with_context(
          fmt::format("node '{}' ({}) device", node.name(), node.op_name()));
    }
    requests[id] = std::move(requested).value();
    for (const Edge& e : node.inputs()) {
      if (first_consumer[e.node] < 0) first_consumer[e.node] = id;
    }
  }

  UnionFind groups(n);
  std::vector<bool> follows(n, false);
  std::map<std::string, int> missing_targets;  // loc:@ name not in the graph -> its set id
  for (int id = 0; id < n; ++id) {
    const Node& node = graph.node(id);
    if (node.op_name() == "_Retval" && node.num_inputs() > 0) {
      follows[id] = true;
      groups.unite(id, node.inputs()[0].node);
    } else if (node.op_name() == "_Arg" && first_consumer[id] >= 0) {
      follows[id] = true;
      groups.unite(id, first_consumer[id]);
    }
    for (int i = 0; i < node.num_inputs(); ++i) {
      if (node.input_is_ref(i)) groups.unite(id, node.inputs()[i].node);
    }
    TROUPE_ASSIGN_OR_RETURN(auto targets, colocation_targets(node));
    for (const std::string& target : targets) {
      if (const Node* other = graph.find(target); other != nullptr) {
        groups.unite(id, other->id());
        continue;
      }
      if (!options.allow_missing_colocation_targets) {
        return errors::InvalidArgument(
            "node '{}' ({}) is colocated with node '{}' (its '{}' attribute has '{}{}'), which is "
            "not in the graph",
            node.name(), node.op_name(), target, kColocationAttr, kColocationGroupPrefix, target);
      }
      auto [it, inserted] = missing_targets.emplace(target, 0);
      if (inserted) it->second = groups.add();
      groups.unite(id, it->second);
    }
  }

  std::map<int, std::vector<int>> members;  // root -> node ids, increasing
  for (int id = 0; id < n; ++id)
    members[groups.find(id)].push_back(id);
  CandidateIndex index(candidates);
  GroupContext ctx{graph, options, candidates, index, requests, follows};
  std::vector<std::string> assigned(n);
  for (const auto& [root, ids] : members) {
    TROUPE_ASSIGN_OR_RETURN(std::string device, place_group(ctx, ids));
    for (int id : ids)
      assigned[id] = device;
  }
  return assigned;
}

}  // namespace troupe
