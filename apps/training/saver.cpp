// Saver: gathering, writing, indexing and restoring checkpoints.
#include "troupe/apps/training/saver.hpp"

#include <algorithm>
#include <filesystem>
#include <regex>

#include "troupe/apps/training/checkpoint_index.hpp"
#include "troupe/apps/training/formats/npz.hpp"
#include "troupe/graph/core/logging.hpp"
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
      to_save.emplace_back(r.variable, r.variable);
  }
  saver.options_ = std::move(options);
  Scope save = scope.root().sub_scope("save");
  std::vector<Operation> assigns;
  for (const auto& [name, variable] : to_save) {
    const Node* node = scope.graph().find(variable);
    if (node == nullptr || node->op_name() != "Variable") {
      return errors::InvalidArgument("Saver: '{}' is not a variable of the graph", variable);
    }
    if (std::ranges::find(saver.names_, name) != saver.names_.end()) {
      return errors::InvalidArgument("Saver: the checkpoint name '{}' is given twice", name);
    }
    Output var(node, 0);
    Scope at_var = save.colocate_with(var.op());
    Output value = ops::Placeholder(at_var, var.dtype(), var.shape());
    assigns.push_back(ops::Assign(at_var, var, value).op());
    saver.names_.push_back(name);
    saver.variables_.push_back(var);
    saver.placeholders_.push_back(value);
  }
  if (saver.names_.empty()) return errors::InvalidArgument("the graph has no variables to save");
  saver.restore_all_ =
      ops::NoOp(save.with_op_name("restore_all").with_control_dependencies(assigns));
  TROUPE_RETURN_IF_ERROR(scope.status());
  return saver;
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
  StatusOr<std::vector<Tensor>> read = session.run(variables_);
  if (!read.ok()) return read.status().with_context("reading variables for a checkpoint");
  std::vector<Tensor> values = std::move(read).value();
  std::vector<std::pair<std::string, Tensor>> named;
  for (size_t i = 0; i < names_.size(); ++i)
    named.emplace_back(names_[i], values[i]);
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
  for (size_t i = 0; i < names_.size(); ++i) {
    auto it = std::find_if(arrays.begin(), arrays.end(),
                           [&](const auto& a) { return a.first == names_[i]; });
    if (it == arrays.end()) {
      return errors::NotFound("checkpoint {} has no value for variable '{}'", path, names_[i]);
    }
    const Output& var = variables_[i];
    if (it->second.dtype() != var.dtype() || !var.shape().matches(it->second.shape())) {
      return errors::InvalidArgument(
          "checkpoint {} holds variable '{}' as {} {}, the model has {} {}", path, names_[i],
          dtype_name(it->second.dtype()), it->second.shape().to_string(), dtype_name(var.dtype()),
          var.shape().to_string());
    }
    feeds.emplace_back(placeholders_[i], it->second);
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
