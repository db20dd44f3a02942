// Saver: gathering, writing, indexing and restoring checkpoints.
#include "troupe/apps/training/saver.hpp"

#include <algorithm>
#include <filesystem>
#include <regex>

#include <fmt/ranges.h>

#include "troupe/apps/training/checkpoint_index.hpp"
#include "troupe/devices/cpu/array_layout.hpp"
#include "troupe/graph/core/logging.hpp"
#include "troupe/graph/formats/npz.hpp"
#include "troupe/graph/ops/ops.hpp"

namespace troupe {
namespace fs = std::filesystem;
namespace {

// The checkpoint files `state` no longer keeps: removed once the new index is durable, so an
// index never names a file that is gone. A file that cannot be removed is only a warning.
void remove_checkpoints(const std::string& dir, const std::vector<std::string>& paths) {
  for (const std::string& path : paths) {
    std::error_code ec;
    fs::remove(checkpoint_path_in(dir, path), ec);
    if (ec) log_warning("cannot remove old checkpoint {}: {}", path, ec.message());
  }
}

// The block of a tensor of dimensions `whole` that starts at `offset`, as a strided view.
StridedView block_of(const std::vector<int64_t>& whole, const std::vector<int64_t>& offset) {
  StridedView view = dense_view(whole);
  for (size_t d = 0; d < offset.size(); ++d)
    view.offset += offset[d] * view.steps[d];
  return view;
}

}  // namespace

std::string default_checkpoint_prefix(const std::string& dir) {
  return (fs::path(dir) / "model.ckpt").string();
}

StatusOr<Saver> Saver::create(const Scope& scope, SaverOptions options) {
  if (options.max_to_keep < 0) {
    return errors::InvalidArgument("max_to_keep is {}, must be >= 0 (0: keep all)",
                                   options.max_to_keep);
  }
  Saver saver;
  std::vector<std::pair<std::string, std::string>> to_save = options.var_list;
  if (to_save.empty()) {
    for (const VariableRecord& r : global_variables(scope.graph()))
      to_save.emplace_back(r.slice ? r.slice->full_name : r.variable, r.variable);
  }
  saver.options_ = std::move(options);
  for (const auto& [given, variable] : to_save) {
    const Node* node = scope.graph().find(variable);
    if (node == nullptr || node->op_name() != "Variable") {
      return errors::InvalidArgument("Saver: '{}' is not a variable of the graph", variable);
    }
    // A shard listed under its own name (Saver(tf.global_variables())) is saved as part of
    // its whole variable, as TensorFlow saves it.
    const VariableRecord* record = scope.graph().variable_record(variable);
    const std::string& name =
        given == variable && record != nullptr && record->slice ? record->slice->full_name : given;
    const size_t index = std::ranges::find(saver.names_, name) - saver.names_.begin();
    if (index == saver.names_.size()) {
      saver.names_.push_back(name);
      saver.entries_.push_back(Entry{name, {}, {}});
    }
    Entry& entry = saver.entries_[index];
    TROUPE_RETURN_IF_ERROR(add_part(entry, Output(node, 0), record));
  }
  if (saver.names_.empty()) return errors::InvalidArgument("the graph has no variables to save");
  Scope save = scope.root().sub_scope("save");
  std::vector<Operation> assigns;
  for (Entry& entry : saver.entries_) {
    TROUPE_RETURN_IF_ERROR(check_tiling(entry));
    for (Part& part : entry.parts) {
      Scope at_var = save.colocate_with(part.variable.op());
      part.placeholder = ops::Placeholder(at_var, part.variable.dtype(), part.variable.shape());
      assigns.push_back(ops::Assign(at_var, part.variable, part.placeholder).op());
    }
  }
  saver.restore_all_ =
      ops::NoOp(save.with_op_name("restore_all").with_control_dependencies(assigns));
  TROUPE_RETURN_IF_ERROR(scope.status());
  return saver;
}

Status Saver::add_part(Entry& entry, const Output& variable, const VariableRecord* record) {
  const bool shard = record != nullptr && record->slice.has_value();
  const bool first = entry.parts.empty();
  const bool entry_is_sharded = !first && !entry.parts[0].offset.empty();
  if (!first && !(shard && entry_is_sharded)) {
    return errors::InvalidArgument("Saver: the checkpoint name '{}' is given twice", entry.name);
  }
  if (!shard) {
    entry.parts.push_back({variable, Output(), {}});
    return Status::OK();
  }
  const VariableSlice& slice = *record->slice;
  if (!first && (slice.full_shape != entry.full_shape ||
                 variable.dtype() != entry.parts[0].variable.dtype())) {
    return errors::InvalidArgument(
        "Saver: the shards of '{}' disagree: '{}' is a {} slice of [{}], '{}' a {} slice of [{}]",
        entry.name, variable.node()->name(), dtype_name(variable.dtype()),
        fmt::join(slice.full_shape, ","), entry.parts[0].variable.node()->name(),
        dtype_name(entry.parts[0].variable.dtype()), fmt::join(entry.full_shape, ","));
  }
  entry.full_shape = slice.full_shape;
  entry.parts.push_back({variable, Output(), slice.offset});
  return Status::OK();
}

// The shards of a partitioned variable must cover its whole shape exactly: each inside it, of
// known shape, no two overlapping, their sizes adding up to the whole's.
Status Saver::check_tiling(const Entry& entry) {
  if (entry.parts[0].offset.empty()) return Status::OK();
  const size_t rank = entry.full_shape.size();
  int64_t total = 1, covered = 0;
  for (int64_t d : entry.full_shape)
    total *= d;
  auto box = [](const Part& p) { return p.variable.shape().to_shape().dims(); };
  for (size_t k = 0; k < entry.parts.size(); ++k) {
    const Part& part = entry.parts[k];
    const PartialShape& shape = part.variable.shape();
    bool inside = shape.is_fully_defined() && static_cast<size_t>(shape.rank()) == rank;
    for (size_t d = 0; inside && d < rank; ++d) {
      inside = part.offset[d] >= 0 &&
               part.offset[d] + shape.dim(static_cast<int>(d)) <= entry.full_shape[d];
    }
    if (!inside) {
      return errors::InvalidArgument(
          "Saver: shard '{}' of '{}' (shape {}, offset [{}]) is not inside the whole shape [{}]",
          part.variable.node()->name(), entry.name, shape.to_string(), fmt::join(part.offset, ","),
          fmt::join(entry.full_shape, ","));
    }
    int64_t size = 1;
    for (int64_t d : box(part))
      size *= d;
    covered += size;
    for (size_t other = 0; other < k; ++other) {
      const std::vector<int64_t> a = box(part), b = box(entry.parts[other]);
      bool overlap = true;
      for (size_t d = 0; overlap && d < rank; ++d) {
        const int64_t a0 = part.offset[d], b0 = entry.parts[other].offset[d];
        overlap = a0 < b0 + b[d] && b0 < a0 + a[d];
      }
      if (overlap) {
        return errors::InvalidArgument("Saver: shards '{}' and '{}' of '{}' overlap",
                                       part.variable.node()->name(),
                                       entry.parts[other].variable.node()->name(), entry.name);
      }
    }
  }
  if (covered != total) {
    return errors::InvalidArgument(
        "Saver: the {} shards of '{}' hold {} of its {} elements (shape [{}])", entry.parts.size(),
        entry.name, covered, total, fmt::join(entry.full_shape, ","));
  }
  return Status::OK();
}

StatusOr<std::string> Saver::save(Session& session, const std::string& save_path,
                                  std::optional<int64_t> global_step) {
  fs::path prefix(save_path);
  if (save_path.empty() || prefix.filename().empty()) {
    return errors::InvalidArgument(
        "Saver.save: save_path '{}' must name a file prefix such as \"/dir/model.ckpt\"",
        save_path);
  }
  const std::string dir = prefix.has_parent_path() ? prefix.parent_path().string() : ".";
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    return errors::Unavailable("cannot create checkpoint directory {}: {}", dir, ec.message());
  std::vector<Output> variables;
  for (const Entry& entry : entries_) {
    for (const Part& part : entry.parts)
      variables.push_back(part.variable);
  }
  StatusOr<std::vector<Tensor>> read = session.run(variables);
  if (!read.ok()) return read.status().with_context("reading variables for a checkpoint");
  std::vector<Tensor> values = std::move(read).value();
  std::vector<std::pair<std::string, Tensor>> named;
  size_t next = 0;
  for (const Entry& entry : entries_) {
    if (entry.parts[0].offset.empty()) {
      named.emplace_back(entry.name, values[next++]);
      continue;
    }
    Tensor whole(entry.parts[0].variable.dtype(), TensorShape(entry.full_shape));
    for (const Part& part : entry.parts) {
      Tensor& value = values[next++];
      // The shapes were checked to tile the whole; a shard assigned another shape since
      // (validate_shape=False) would not fit.
      if (value.shape() != part.variable.shape().to_shape()) {
        return errors::FailedPrecondition(
            "saving '{}': shard '{}' holds a value of shape {}, not its declared {}", entry.name,
            part.variable.node()->name(), value.shape().to_string(),
            part.variable.shape().to_string());
      }
      strided_copy(value, dense_view(value.shape().dims()), whole,
                   block_of(entry.full_shape, part.offset), value.shape().dims());
    }
    named.emplace_back(entry.name, std::move(whole));
  }
  std::string file = prefix.filename().string() +
                     (global_step ? "-" + std::to_string(*global_step) : std::string()) + ".npz";
  std::string path = (fs::path(dir) / file).string();
  // The data first, durably; then the index that names it; then what the index dropped.
  TROUPE_ASSIGN_OR_RETURN(std::optional<CheckpointState> previous, recover_checkpoint_state(dir));
  Status saved = write_npz(path, named).with_context("saving a checkpoint");
  const auto now = std::chrono::system_clock::now();
  CheckpointState state;
  if (previous) state.all_model_checkpoint_paths = std::move(previous->all_model_checkpoint_paths);
  std::erase(state.all_model_checkpoint_paths, file);
  state.all_model_checkpoint_paths.push_back(file);
  std::vector<std::string> dropped;
  while (options_.max_to_keep > 0 &&
         static_cast<int>(state.all_model_checkpoint_paths.size()) > options_.max_to_keep) {
    std::string oldest = state.all_model_checkpoint_paths.front();
    state.all_model_checkpoint_paths.erase(state.all_model_checkpoint_paths.begin());
    // As TensorFlow: one checkpoint per keep_checkpoint_every_n_hours survives, unlisted.
    auto it = saved_at_.find(oldest);
    auto written = it != saved_at_.end() ? it->second : created_;
    auto every = std::chrono::duration_cast<std::chrono::system_clock::duration>(
        std::chrono::duration<double, std::ratio<3600>>(options_.keep_checkpoint_every_n_hours));
    if (written - last_preserved_ >= every) {
      last_preserved_ = written;
    } else {
      dropped.push_back(oldest);
    }
  }
  state.model_checkpoint_path = file;
  if (saved.ok()) {
    saved = write_checkpoint_index(dir, state).with_context("saving " + path);
  }
  if (!saved.ok()) {
    // A file no index names would stay on a full disk for good: remove it, unless the index
    // names it (it was renamed into place and only the directory's fsync failed, or this
    // step was saved before).
    auto index = read_checkpoint_index(dir);
    if (!index.ok() || !index->has_value() ||
        std::ranges::find((*index)->all_model_checkpoint_paths, file) ==
            (*index)->all_model_checkpoint_paths.end()) {
      std::error_code ec;
      if (fs::exists(path, ec)) remove_checkpoints(dir, {file});
    }
    return saved;
  }
  saved_at_[file] = now;
  for (const std::string& gone : dropped)
    saved_at_.erase(gone);
  remove_checkpoints(dir, dropped);
  return path;
}

Status Saver::restore(Session& session, const std::string& given) const {
  std::error_code ec;
  const std::string path =
      given.ends_with(".npz") || !fs::exists(given + ".npz", ec) ? given : given + ".npz";
  TROUPE_ASSIGN_OR_RETURN(auto arrays, read_npz(path));
  FeedDict feeds;
  for (const Entry& entry : entries_) {
    auto it = std::find_if(arrays.begin(), arrays.end(),
                           [&](const auto& a) { return a.first == entry.name; });
    if (it == arrays.end()) {
      return errors::NotFound("checkpoint {} has no value for variable '{}'", path, entry.name);
    }
    const Output& var = entry.parts[0].variable;
    const bool sharded = !entry.parts[0].offset.empty();
    const bool shape_ok = sharded ? it->second.shape() == TensorShape(entry.full_shape)
                                  : var.shape().matches(it->second.shape());
    if (it->second.dtype() != var.dtype() || !shape_ok) {
      return errors::InvalidArgument(
          "checkpoint {} holds variable '{}' as {} {}, the model has {} {}", path, entry.name,
          dtype_name(it->second.dtype()), it->second.shape().to_string(), dtype_name(var.dtype()),
          sharded ? TensorShape(entry.full_shape).to_string() : var.shape().to_string());
    }
    for (const Part& part : entry.parts) {
      if (!sharded) {
        feeds.emplace_back(part.placeholder, it->second);
        continue;
      }
      Tensor slice(var.dtype(), part.variable.shape().to_shape());
      strided_copy(it->second, block_of(entry.full_shape, part.offset), slice,
                   dense_view(slice.shape().dims()), slice.shape().dims());
      feeds.emplace_back(part.placeholder, std::move(slice));
    }
  }
  return session.run_targets({restore_all_}, feeds).with_context("restoring " + path);
}

Status prepare_checkpoint_directory(const std::string& dir) {
  std::error_code ec;
  fs::directory_iterator entries(dir, ec);
  if (ec == std::errc::no_such_file_or_directory) return Status::OK();
  if (ec) return errors::Unavailable("cannot list checkpoint directory {}: {}", dir, ec.message());
  static const std::regex unfinished(R"(^(.+-[0-9]+\.npz|checkpoint)\.tmp(\.[0-9]+\.[0-9]+)?$)");
  for (const auto& entry : entries) {
    if (!std::regex_match(entry.path().filename().string(), unfinished)) continue;
    fs::remove(entry.path(), ec);
    if (ec) {
      return errors::Unavailable("cannot remove unfinished checkpoint file {}: {}",
                                 entry.path().string(), ec.message());
    }
  }
  bool rebuilt = false;
  TROUPE_ASSIGN_OR_RETURN(std::optional<CheckpointState> state,
                          recover_checkpoint_state(dir, &rebuilt));
  if (rebuilt && state) TROUPE_RETURN_IF_ERROR(write_checkpoint_index(dir, *state));
  return Status::OK();
}

StatusOr<std::optional<std::string>> latest_checkpoint(const std::string& dir) {
  TROUPE_ASSIGN_OR_RETURN(std::optional<CheckpointState> state, recover_checkpoint_state(dir));
  if (!state) return std::optional<std::string>();
  return std::optional<std::string>(checkpoint_path_in(dir, state->model_checkpoint_path));
}

}  // namespace troupe
