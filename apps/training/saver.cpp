// Saver: gathering, writing, indexing and restoring checkpoints.
#include "troupe/apps/training/saver.hpp"

#include <filesystem>
#include <fstream>
#include <regex>

#include "troupe/apps/training/formats/npz.hpp"
#include "troupe/graph/ops/ops.hpp"

namespace troupe {
namespace fs = std::filesystem;
namespace {

constexpr const char* kIndexFile = "checkpoint";

std::vector<std::string> read_index(const std::string& dir) {
  std::vector<std::string> paths;
  std::ifstream in(fs::path(dir) / kIndexFile);
  std::string line;
  std::regex entry(R"(^all_model_checkpoint_paths: \"(.*)\"$)");
  std::smatch match;
  while (std::getline(in, line)) {
    if (std::regex_match(line, match, entry)) paths.push_back(match[1]);
  }
  return paths;
}

Status write_index(const std::string& dir, const std::vector<std::string>& paths) {
  std::string tmp = (fs::path(dir) / (std::string(kIndexFile) + ".tmp")).string();
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << "model_checkpoint_path: \"" << paths.back() << "\"\n";
    for (const auto& p : paths)
      out << "all_model_checkpoint_paths: \"" << p << "\"\n";
    if (!out) return errors::Unavailable("cannot write checkpoint index {}", tmp);
  }
  std::error_code ec;
  fs::rename(tmp, fs::path(dir) / kIndexFile, ec);
  if (ec) return errors::Unavailable("cannot write checkpoint index in {}: {}", dir, ec.message());
  return Status::OK();
}

}  // namespace

StatusOr<Saver> Saver::create(const Scope& scope, int max_to_keep) {
  if (max_to_keep < 1)
    return errors::InvalidArgument("max_to_keep is {}, must be >= 1", max_to_keep);
  Saver saver;
  saver.max_to_keep_ = max_to_keep;
  Scope save = scope.root().sub_scope("save");
  std::vector<Operation> assigns;
  for (const VariableRecord& r : global_variables(scope.graph())) {
    Output var(scope.graph().find(r.variable), 0);
    Scope at_var = save.colocate_with(var.op());
    Output value = ops::Placeholder(at_var, var.dtype(), var.shape());
    assigns.push_back(ops::Assign(at_var, var, value).op());
    saver.names_.push_back(r.variable);
    saver.variables_.push_back(var);
    saver.placeholders_.push_back(value);
  }
  if (saver.names_.empty()) return errors::InvalidArgument("the graph has no variables to save");
  saver.restore_all_ =
      ops::NoOp(save.with_op_name("restore_all").with_control_dependencies(assigns));
  TROUPE_RETURN_IF_ERROR(scope.status());
  return saver;
}

StatusOr<std::string> Saver::save(Session& session, const std::string& dir, int64_t global_step) {
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
  std::string file = "model.ckpt-" + std::to_string(global_step) + ".npz";
  std::string path = (fs::path(dir) / file).string();
  TROUPE_RETURN_IF_ERROR(write_npz(path, named));

  std::vector<std::string> kept = read_index(dir);
  std::erase(kept, file);
  kept.push_back(file);
  while (static_cast<int>(kept.size()) > max_to_keep_) {
    fs::remove(fs::path(dir) / kept.front(), ec);
    kept.erase(kept.begin());
  }
  TROUPE_RETURN_IF_ERROR(write_index(dir, kept));
  return path;
}

Status Saver::restore(Session& session, const std::string& path) const {
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

Status remove_unfinished_checkpoints(const std::string& dir) {
  std::error_code ec;
  fs::directory_iterator entries(dir, ec);
  if (ec == std::errc::no_such_file_or_directory) return Status::OK();
  if (ec) return errors::Unavailable("cannot list checkpoint directory {}: {}", dir, ec.message());
  static const std::regex unfinished(R"(^(model\.ckpt-[0-9]+\.npz|checkpoint)\.tmp$)");
  for (const auto& entry : entries) {
    if (!std::regex_match(entry.path().filename().string(), unfinished)) continue;
    fs::remove(entry.path(), ec);
    if (ec) {
      return errors::Unavailable("cannot remove unfinished checkpoint file {}: {}",
                                 entry.path().string(), ec.message());
    }
  }
  return Status::OK();
}

StatusOr<std::optional<std::string>> latest_checkpoint(const std::string& dir) {
  std::ifstream in(fs::path(dir) / kIndexFile);
  if (!in) return std::optional<std::string>();
  std::string line;
  std::regex latest(R"(^model_checkpoint_path: \"(.*)\"$)");
  std::smatch match;
  while (std::getline(in, line)) {
    if (!std::regex_match(line, match, latest)) continue;
    fs::path path = fs::path(dir) / match[1].str();
    if (!fs::exists(path)) {
      return errors::DataLoss("checkpoint index in {} names {}, which is missing", dir,
                              path.string());
    }
    return std::optional<std::string>(path.string());
  }
  return std::optional<std::string>();
}

}  // namespace troupe
