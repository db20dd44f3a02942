// The checkpoint index: TensorFlow's CheckpointState text format, written durably, rebuilt
// from the files on disk when it is lost or damaged.
#include "troupe/apps/training/checkpoint_index.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <regex>

#include "troupe/graph/core/logging.hpp"
#include "troupe/graph/formats/checkpoint_files.hpp"
#include "troupe/graph/formats/durable_file.hpp"
#include "troupe/graph/formats/file_io.hpp"
#include "troupe/graph/formats/npz.hpp"

namespace troupe {
namespace fs = std::filesystem;
namespace {

std::string index_path(const std::string& dir) {
  return (fs::path(dir) / kCheckpointIndexFile).string();
}

// A text-format string literal: "..." with \" \\ \n escaped.
std::string quoted(const std::string& value) {
  std::string out = "\"";
  for (char c : value) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

// The value of a string literal, or nullopt when `text` is not one.
std::optional<std::string> unquoted(std::string_view text) {
  if (text.size() < 2 || text.front() != '"' || text.back() != '"') return std::nullopt;
  std::string out;
  for (size_t i = 1; i + 1 < text.size(); ++i) {
    char c = text[i];
    if (c == '"') return std::nullopt;
    if (c == '\\') {
      if (++i + 1 >= text.size()) return std::nullopt;
      char e = text[i];
      c = e == 'n' ? '\n' : e == 't' ? '\t' : e;
    }
    out += c;
  }
  return out;
}

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())))
    s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())))
    s.remove_suffix(1);
  return s;
}

bool is_number(std::string_view s) {
  return !s.empty() && s.find_first_not_of("0123456789.eE+-") == std::string_view::npos;
}

}  // namespace

std::string checkpoint_path_in(const std::string& dir, const std::string& path) {
  if (fs::path(path).is_absolute()) return path;
  return (fs::path(dir) / path).string();
}

StatusOr<std::optional<CheckpointState>> read_checkpoint_index(const std::string& dir) {
  const std::string file = index_path(dir);
  StatusOr<std::string> bytes = read_whole_file(file, "checkpoint index", "no index");
  if (bytes.status().code() == Code::kNotFound) return std::optional<CheckpointState>();
  TROUPE_RETURN_IF_ERROR(bytes.status());
  CheckpointState state;
  bool has_newest = false;
  std::string_view text = *bytes;
  int line_number = 0;
  while (!text.empty()) {
    size_t end = text.find('\n');
    std::string_view line = trimmed(text.substr(0, end));
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    ++line_number;
    if (line.empty()) continue;
    size_t colon = line.find(':');
    std::string_view key = trimmed(line.substr(0, colon));
    std::string_view value = colon == std::string_view::npos ? "" : trimmed(line.substr(colon + 1));
    if (key == "all_model_checkpoint_timestamps" || key == "last_preserved_timestamp") {
      if (is_number(value)) continue;  // written by TensorFlow 1.14+; not used here
    } else if (key == "model_checkpoint_path" || key == "all_model_checkpoint_paths") {
      if (std::optional<std::string> path = unquoted(value); path && !path->empty()) {
        if (key == "model_checkpoint_path") {
          state.model_checkpoint_path = *path;
          has_newest = true;
        } else {
          state.all_model_checkpoint_paths.push_back(*path);
        }
        continue;
      }
    }
    return errors::DataLoss("checkpoint index {} is damaged: line {} is '{}'", file, line_number,
                            std::string(line.substr(0, 80)));
  }
  if (!has_newest) {
    return errors::DataLoss("checkpoint index {} is {}", file,
                            bytes->empty() ? "empty" : "damaged: it has no model_checkpoint_path");
  }
  // As TensorFlow: the newest is always one of all the checkpoints, and the last.
  std::erase(state.all_model_checkpoint_paths, state.model_checkpoint_path);
  state.all_model_checkpoint_paths.push_back(state.model_checkpoint_path);
  return std::optional<CheckpointState>(std::move(state));
}

Status write_checkpoint_index(const std::string& dir, const CheckpointState& state) {
  if (state.model_checkpoint_path.empty()) {
    return errors::InvalidArgument("a checkpoint index for {} must name a checkpoint", dir);
  }
  std::string text = "model_checkpoint_path: " + quoted(state.model_checkpoint_path) + "\n";
  for (const std::string& path : state.all_model_checkpoint_paths)
    text += "all_model_checkpoint_paths: " + quoted(path) + "\n";
  StatusOr<std::unique_ptr<DurableFile>> file = DurableFile::create(index_path(dir));
  Status written = file.ok() ? (*file)->append(text) : file.status();
  if (written.ok()) written = (*file)->commit();
  return written.with_context("writing the checkpoint index");
}

StatusOr<std::vector<std::string>> checkpoint_files_on_disk(const std::string& dir) {
  static const std::regex shard_name(R"(^(.+)\.shard-[0-9]{5}-of-[0-9]{5}\.npz$)");
  static const std::regex one_file_name(R"(^(.+)\.npz$)");
  static const std::regex with_step(R"(^.+-([0-9]{1,18})$)");
  std::map<std::string, int64_t> steps;  // by checkpoint prefix: one entry per checkpoint
  std::error_code ec;
  fs::directory_iterator entries(dir, ec);
  if (ec == std::errc::no_such_file_or_directory) return std::vector<std::string>();
  if (ec) return errors::Unavailable("cannot list checkpoint directory {}: {}", dir, ec.message());
  for (const auto& entry : entries) {
    std::string name = entry.path().filename().string();
    std::smatch match, step;
    if (!std::regex_match(name, match, shard_name) && !std::regex_match(name, match, one_file_name))
      continue;
    const std::string prefix = match[1].str();
    if (std::regex_match(prefix, step, with_step)) steps.emplace(prefix, std::stoll(step[1].str()));
  }
  std::vector<std::pair<int64_t, std::string>> found;
  for (const auto& [prefix, step] : steps) {
    // Complete checkpoints only, listed as the layout they are read in: "<prefix>.npz" for
    // one file, the prefix for a set of shards.
    auto files = checkpoint_data_files((fs::path(dir) / prefix).string());
    if (!files.ok()) continue;
    const bool one_file = fs::path(files->front()).filename().string() == prefix + ".npz";
    found.emplace_back(step, one_file ? prefix + ".npz" : prefix);
  }
  std::sort(found.begin(), found.end());
  std::vector<std::string> names;
  for (auto& [step, name] : found)
    names.push_back(std::move(name));
  return names;
}

StatusOr<std::optional<CheckpointState>> recover_checkpoint_state(const std::string& dir,
                                                                  bool* rebuilt) {
  if (rebuilt != nullptr) *rebuilt = false;
  StatusOr<std::optional<CheckpointState>> index = read_checkpoint_index(dir);
  std::string problem;
  if (!index.ok()) {
    if (index.status().code() != Code::kDataLoss) return index.status();
    problem = index.status().message();
  } else if (index->has_value()) {
    const std::string newest = checkpoint_path_in(dir, (*index)->model_checkpoint_path);
    if (checkpoint_data_files(newest).ok()) return index;
    problem =
        fmt::format("checkpoint index {} names {}, which is missing", index_path(dir), newest);
  }
  TROUPE_ASSIGN_OR_RETURN(std::vector<std::string> files, checkpoint_files_on_disk(dir));
  if (problem.empty() && files.empty()) return std::optional<CheckpointState>();
  if (problem.empty()) problem = fmt::format("{} is missing", index_path(dir));
  // The newest file that reads as a whole checkpoint is the newest checkpoint.
  while (!files.empty()) {
    Status readable = check_checkpoint_readable(checkpoint_path_in(dir, files.back()));
    if (readable.ok()) break;
    log_warning("checkpoint {} is not usable ({}); an older one is used", files.back(),
                readable.message());
    files.pop_back();
  }
  if (rebuilt != nullptr) *rebuilt = true;
  if (files.empty()) {
    log_warning("{}, and {} holds no complete checkpoint: starting without one", problem, dir);
    return std::optional<CheckpointState>();
  }
  log_warning("{}; rebuilt from the {} checkpoint file(s) on disk, the newest being {}", problem,
              files.size(), files.back());
  CheckpointState state;
  state.model_checkpoint_path = files.back();
  state.all_model_checkpoint_paths = std::move(files);
  return std::optional<CheckpointState>(std::move(state));
}

}  // namespace troupe
