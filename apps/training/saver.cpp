// Saver: gathering, writing, indexing and restoring checkpoints.
#include "troupe/apps/training/saver.hpp"

#include <algorithm>
#include <filesystem>
#include <regex>

#include <fmt/ranges.h>

#include "troupe/apps/training/checkpoint_index.hpp"
#include "troupe/devices/cpu/array_layout.hpp"
#include "troupe/graph/core/logging.hpp"
#include "troupe/graph/formats/checkpoint_files.hpp"
#include "troupe/graph/formats/npz.hpp"
#include "troupe/graph/ops/io_ops.hpp"
#include "troupe/graph/ops/ops.hpp"

namespace troupe {
namespace fs = std::filesystem;
namespace {

// The checkpoints `state` no longer keeps (each one file or a set of shards): removed once the
// new index is durable, so an index never names a file that is gone. A file that cannot be
// removed is only a warning.
void remove_checkpoints(const std::string& dir, const std::vector<std::string>& paths) {
  for (const std::string& path : paths) {
    for (const std::string& file : checkpoint_files_present(checkpoint_path_in(dir, path))) {
      std::error_code ec;
      fs::remove(file, ec);
      if (ec) log_warning("cannot remove old checkpoint file {}: {}", file, ec.message());
    }
  }
}

// Removes the data files of checkpoint `path` other than `keep`: what an earlier save under
// the same name left in the other layout.
void remove_files_of(const std::string& path, const std::vector<std::string>& keep) {
  for (const std::string& file : checkpoint_files_present(path)) {
    if (std::ranges::find(keep, file) != keep.end()) continue;
    std::error_code ec;
    fs::remove(file, ec);
    if (ec) log_warning("cannot remove stale checkpoint file {}: {}", file, ec.message());
  }
}

Tensor string_vector(const std::vector<std::string>& values) {
  Tensor t(DataType::kString, TensorShape{static_cast<int64_t>(values.size())});
  for (size_t i = 0; i < values.size(); ++i)
    t.data<std::string>()[i] = values[i];
  return t;
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
    if (name.empty() || name.find('@') != std::string::npos) {
      return errors::InvalidArgument(
          "Saver: the checkpoint name '{}' of variable '{}' is empty or has an '@' (a checkpoint "
          "file stores a variable's slices as '<name>@<slice>')",
          name, variable);
    }
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
  if (saver.options_.sharded) TROUPE_RETURN_IF_ERROR(saver.build_sharded(save));
  TROUPE_RETURN_IF_ERROR(scope.status());
  return saver;
}

// One SaveV2 and one RestoreV2 per device holding variables (by the device each variable
// asks for, as TensorFlow's sharded saver groups them), colocated with that device's first
// variable; a shard of a partitioned variable is saved as its slice of the whole.
Status Saver::build_sharded(const Scope& save) {
  std::vector<std::string> devices;
  std::vector<std::vector<const Part*>> parts_of;
  std::vector<std::vector<std::string>> names_of, specs_of;
  for (const Entry& entry : entries_) {
    for (const Part& part : entry.parts) {
      const std::string& device = part.variable.node()->requested_device();
      size_t d = std::ranges::find(devices, device) - devices.begin();
      if (d == devices.size()) {
        devices.push_back(device);
        parts_of.emplace_back();
        names_of.emplace_back();
        specs_of.emplace_back();
      }
      parts_of[d].push_back(&part);
      names_of[d].push_back(entry.name);
      specs_of[d].push_back(
          part.offset.empty() ? std::string()
                              : tensor_slice_spec_string(entry.full_shape, part.offset,
                                                         part.variable.shape().to_shape().dims()));
    }
  }
  std::vector<Operation> assigns;
  for (size_t d = 0; d < devices.size(); ++d) {
    const Scope at =
        save.sub_scope(fmt::format("shard_{}", d)).colocate_with(parts_of[d][0]->variable.op());
    DeviceShard shard;
    shard.prefix =
        ops::Placeholder(at.with_op_name("prefix"), DataType::kString, PartialShape::scalar());
    Output names = ops::Const(at.with_op_name("tensor_names"), string_vector(names_of[d]));
    Output specs = ops::Const(at.with_op_name("shape_and_slices"), string_vector(specs_of[d]));
    std::vector<Input> tensors;
    std::vector<DataType> dtypes;
    for (const Part* part : parts_of[d]) {
      tensors.emplace_back(part->variable);
      dtypes.push_back(part->variable.dtype());
    }
    shard.save = ops::SaveV2(at.with_op_name("SaveV2"), shard.prefix, names, specs, tensors);
    std::vector<Output> restored =
        ops::RestoreV2(at.with_op_name("RestoreV2"), shard.prefix, names, specs, dtypes);
    TROUPE_RETURN_IF_ERROR(save.status());
    for (size_t k = 0; k < parts_of[d].size(); ++k) {
      const Output& variable = parts_of[d][k]->variable;
      assigns.push_back(ops::Assign(save.colocate_with(variable.op()).with_op_name("restore_shard"),
                                    variable, restored[k],
                                    {.validate_shape = variable.shape().is_fully_defined()})
                            .op());
    }
    shards_.push_back(shard);
  }
  restore_shards_ =
      ops::NoOp(save.with_op_name("restore_shards").with_control_dependencies(assigns));
  return save.status();
}

// Runs every device's SaveV2 at once, writing `files` (the shards of `prefix`); then checks
// that this task sees every shard (a directory every task shares).
Status Saver::write_shards(Session& session, const std::string& prefix,
                           const std::vector<std::string>& files) {
  const int n = static_cast<int>(shards_.size());
  FeedDict feeds;
  std::vector<Operation> targets;
  for (int i = 0; i < n; ++i) {
    // SaveV2 writes "<its prefix>.npz"; absolute, as the tasks' working directories may differ.
    const std::string shard = fs::absolute(files[i]).string();
    feeds.emplace_back(shards_[i].prefix, Tensor(shard.substr(0, shard.size() - 4)));
    targets.push_back(shards_[i].save);
  }
  TROUPE_RETURN_IF_ERROR(session.run_targets(targets, feeds).with_context("saving " + prefix));
  size_t seen = 0;
  for (const std::string& file : files) {
    std::error_code ec;
    seen += fs::is_regular_file(file, ec) ? 1 : 0;
  }
  if (seen != files.size()) {
    return errors::FailedPrecondition(
        "saving {}: the tasks holding the variables wrote its {} shard(s), but this task sees "
        "{} of them: a sharded checkpoint needs a directory every task shares, as TensorFlow's "
        "sharded saver does (or save without sharded)",
        prefix, files.size(), seen);
  }
  return Status::OK();
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
  const std::string name = prefix.filename().string() +
                           (global_step ? "-" + std::to_string(*global_step) : std::string());
  if (options_.sharded) {
    TROUPE_ASSIGN_OR_RETURN(std::optional<CheckpointState> previous, recover_checkpoint_state(dir));
    const std::string path = (fs::path(dir) / name).string();
    std::vector<std::string> files;
    for (int i = 0; i < static_cast<int>(shards_.size()); ++i)
      files.push_back(checkpoint_shard_file(path, i, static_cast<int>(shards_.size())));
    Status written = write_shards(session, path, files);
    return index_checkpoint(dir, name, files, std::move(previous), written);
  }
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
  const std::string file = name + ".npz";
  // The data first, durably; then the index that names it; then what the index dropped.
  TROUPE_ASSIGN_OR_RETURN(std::optional<CheckpointState> previous, recover_checkpoint_state(dir));
  const std::string path = (fs::path(dir) / file).string();
  Status saved = write_npz(path, named).with_context("saving a checkpoint");
  return index_checkpoint(dir, file, {path}, std::move(previous), saved);
}

// Names the checkpoint `file` (relative to `dir`: a file, or the prefix of a set of shards)
// newest in the index once its data (`data_files`) is durable (`saved`), then removes what the
// index drops and what an earlier save of the same name left in another layout; on failure
// removes `data_files` (never another layout's files), unless the index names `file` itself.
StatusOr<std::string> Saver::index_checkpoint(const std::string& dir, const std::string& file,
                                              const std::vector<std::string>& data_files,
                                              std::optional<CheckpointState> previous,
                                              Status saved) {
  const std::string path = (fs::path(dir) / file).string();
  const auto now = std::chrono::system_clock::now();
  CheckpointState state;
  if (previous) state.all_model_checkpoint_paths = std::move(previous->all_model_checkpoint_paths);
  // The same checkpoint saved before (as one file or as shards) is now this one.
  std::erase_if(state.all_model_checkpoint_paths, [&](const std::string& kept) {
    return checkpoint_prefix_of(kept) == checkpoint_prefix_of(file);
  });
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
      for (const std::string& data : data_files) {
        std::error_code ec;
        fs::remove(data, ec);
      }
    }
    return saved;
  }
  // What an earlier save of this name left in the other layout (or another number of shards)
  // is not this checkpoint's data: gone once the index names this one.
  remove_files_of(path, data_files);
  saved_at_[file] = now;
  for (const std::string& gone : dropped)
    saved_at_.erase(gone);
  remove_checkpoints(dir, dropped);
  return path;
}

Status Saver::restore(Session& session, const std::string& given) const {
  const std::string prefix = checkpoint_prefix_of(given);
  if (options_.sharded) {
    // Read on each device: the values never pass through this task.
    TROUPE_ASSIGN_OR_RETURN(std::vector<std::string> files, checkpoint_data_files(given));
    const std::string path = checkpoint_shown(files, prefix);
    FeedDict feeds;
    for (const DeviceShard& shard : shards_)
      feeds.emplace_back(shard.prefix, Tensor(fs::absolute(prefix).string()));
    return session.run_targets({restore_shards_}, feeds).with_context("restoring " + path);
  }
  std::string path;  // as messages name the checkpoint
  std::vector<std::string> names;
  for (const Entry& entry : entries_)
    names.push_back(entry.name);
  TROUPE_ASSIGN_OR_RETURN(
      std::vector<Tensor> arrays,
      read_checkpoint_tensors(given, names, std::vector<TensorSliceSpec>(names.size()), &path));
  FeedDict feeds;
  for (size_t e = 0; e < entries_.size(); ++e) {
    const Entry& entry = entries_[e];
    const Tensor& value = arrays[e];
    const Output& var = entry.parts[0].variable;
    const bool sharded = !entry.parts[0].offset.empty();
    const bool shape_ok = sharded ? value.shape() == TensorShape(entry.full_shape)
                                  : var.shape().matches(value.shape());
    if (value.dtype() != var.dtype() || !shape_ok) {
      return errors::InvalidArgument(
          "checkpoint {} holds variable '{}' as {} {}, the model has {} {}", path, entry.name,
          dtype_name(value.dtype()), value.shape().to_string(), dtype_name(var.dtype()),
          sharded ? TensorShape(entry.full_shape).to_string() : var.shape().to_string());
    }
    for (const Part& part : entry.parts) {
      if (!sharded) {
        feeds.emplace_back(part.placeholder, value);
        continue;
      }
      Tensor slice(var.dtype(), part.variable.shape().to_shape());
      strided_copy(value, block_of(entry.full_shape, part.offset), slice,
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
  static const std::regex unfinished(
      R"(^(.+-[0-9]+(\.shard-[0-9]{5}-of-[0-9]{5})?\.npz|checkpoint)\.tmp(\.[0-9]+\.[0-9]+)?$)");
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
