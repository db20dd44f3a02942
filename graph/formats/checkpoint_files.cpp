// Checkpoint files: one archive or a set of shards, and tensors read from either, assembled
// from slices where needed.
#include "troupe/graph/formats/checkpoint_files.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <regex>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "troupe/graph/formats/npz.hpp"
#include "troupe/graph/formats/zip_archive.hpp"

namespace troupe {
namespace fs = std::filesystem;
namespace {

constexpr std::string_view kNpz = ".npz";
constexpr std::string_view kNpy = ".npy";

// The shard files of `prefix` in its directory, by (shard, number of shards).
std::map<std::pair<int, int>, std::string> shard_files(const std::string& prefix) {
  std::map<std::pair<int, int>, std::string> found;
  const fs::path path(prefix);
  const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
  const std::string base = path.filename().string() + ".shard-";
  static const std::regex numbers(R"(^([0-9]{5})-of-([0-9]{5})\.npz$)");
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (!name.starts_with(base)) continue;
    const std::string rest = name.substr(base.size());
    std::smatch m;
    if (!std::regex_match(rest, m, numbers)) continue;
    found[{std::stoi(m[1]), std::stoi(m[2])}] = (dir / name).string();
  }
  return found;
}

// The arrays of each file, by key, from the archives' directories alone.
StatusOr<std::map<std::string, size_t>> keys_of(const std::vector<std::string>& files) {
  std::map<std::string, size_t> where;
  for (size_t i = 0; i < files.size(); ++i) {
    Status listed = Status::OK();
    TROUPE_RETURN_IF_ERROR(read_zip_members(
        files[i],
        [&](const std::string& member) {
          if (!member.ends_with(kNpy) || !listed.ok()) return false;
          std::string key = member.substr(0, member.size() - kNpy.size());
          auto [it, fresh] = where.emplace(std::move(key), i);
          if (!fresh) {
            listed = errors::DataLoss("checkpoint files '{}' and '{}' both hold '{}'",
                                      files[it->second], files[i], it->first);
          }
          return false;
        },
        fmt::format("checkpoint file '{}' does not exist", files[i]),
        [](const std::string&, std::string_view, const std::string&) { return Status::OK(); }));
    TROUPE_RETURN_IF_ERROR(listed);
  }
  return where;
}

// One stored slice of a tensor.
struct StoredSlice {
  std::string key;
  TensorSliceSpec spec;
};

// What the checkpoint holds of one tensor: itself whole, or slices.
struct Holding {
  std::string whole_key;  // empty when the tensor is stored in slices
  std::vector<StoredSlice> slices;
};

StatusOr<Holding> holding_of(const std::map<std::string, size_t>& keys, const std::string& name,
                             const std::string& shown) {
  Holding holding;
  if (keys.count(name) > 0) {
    holding.whole_key = name;
    return holding;
  }
  const std::string start = name + "@";
  for (auto it = keys.lower_bound(start); it != keys.end() && it->first.starts_with(start); ++it) {
    StatusOr<TensorSliceSpec> spec = parse_tensor_slice_spec(it->first.substr(start.size()));
    if (!spec.ok() || spec->whole) {
      return errors::DataLoss("checkpoint '{}': array '{}' is not a slice of '{}': {}", shown,
                              it->first, name,
                              spec.ok() ? std::string("no slice") : spec.status().message());
    }
    if (!holding.slices.empty() && spec->full_shape != holding.slices[0].spec.full_shape) {
      return errors::DataLoss(
          "checkpoint '{}': slices of '{}' disagree on its shape ([{}] and [{}])", shown, name,
          fmt::join(spec->full_shape, ","), fmt::join(holding.slices[0].spec.full_shape, ","));
    }
    holding.slices.push_back({it->first, *std::move(spec)});
  }
  if (holding.slices.empty()) {
    return errors::NotFound("Key {} not found in checkpoint '{}'", name, shown);
  }
  // Stored slices never overlap (the saver writes a tiling): an overlap would make the
  // coverage count of read_checkpoint_tensors lie.
  for (size_t a = 0; a < holding.slices.size(); ++a) {
    for (size_t b = 0; b < a; ++b) {
      const TensorSliceSpec& x = holding.slices[a].spec;
      const TensorSliceSpec& y = holding.slices[b].spec;
      bool overlap = true;
      for (size_t d = 0; overlap && d < x.start.size(); ++d) {
        overlap = x.start[d] < y.start[d] + y.length[d] && y.start[d] < x.start[d] + x.length[d];
      }
      if (overlap) {
        return errors::DataLoss("checkpoint '{}': slices '{}' and '{}' overlap", shown,
                                holding.slices[a].key, holding.slices[b].key);
      }
    }
  }
  return holding;
}

}  // namespace

std::string checkpoint_shard_file(const std::string& prefix, int shard, int num_shards) {
  return fmt::format("{}.shard-{:05d}-of-{:05d}.npz", prefix, shard, num_shards);
}

std::string checkpoint_shown(const std::vector<std::string>& files, const std::string& prefix) {
  return files.size() == 1 ? files[0] : prefix;
}

std::string checkpoint_slice_key(const std::string& name, const std::string& spec) {
  return name + "@" + spec;
}

std::string checkpoint_prefix_of(const std::string& path) {
  static const std::regex shard(R"(^(.*)\.shard-[0-9]{5}-of-[0-9]{5}\.npz$)");
  std::smatch m;
  if (std::regex_match(path, m, shard)) return m[1].str();
  if (path.ends_with(kNpz)) return path.substr(0, path.size() - kNpz.size());
  return path;
}

StatusOr<std::vector<std::string>> checkpoint_data_files(const std::string& given) {
  const std::string prefix = checkpoint_prefix_of(given);
  const std::string single = prefix + std::string(kNpz);
  std::error_code ec;
  // The complete layouts under this name: the one file, and each complete set of shards.
  std::vector<std::vector<std::string>> complete;
  if (fs::is_regular_file(single, ec)) complete.push_back({single});
  std::map<int, std::map<int, std::string>> sets;  // by number of shards
  for (auto& [shard, file] : shard_files(prefix))
    sets[shard.second][shard.first] = file;
  std::string incomplete;
  for (auto& [total, files] : sets) {
    std::vector<std::string> set;
    for (int i = 0; i < total; ++i) {
      auto it = files.find(i);
      if (it == files.end()) {
        if (incomplete.empty()) {
          incomplete = fmt::format("checkpoint {} is incomplete: shard {} of {} ({}) is missing",
                                   prefix, i, total, checkpoint_shard_file(prefix, i, total));
        }
        break;
      }
      set.push_back(it->second);
    }
    if (static_cast<int>(set.size()) == total) complete.push_back(std::move(set));
  }
  if (complete.empty()) {
    if (!incomplete.empty()) return errors::DataLoss("{}", incomplete);
    return errors::NotFound(
        "no checkpoint {}: neither {} nor its shards ({}.shard-NNNNN-of-NNNNN.npz) exist", prefix,
        single, prefix);
  }
  // Two layouts under one name are a save of that name in another layout interrupted before it
  // removed the older one: the newest written is the checkpoint.
  auto written = [](const std::vector<std::string>& files) {
    fs::file_time_type newest = fs::file_time_type::min();
    for (const std::string& file : files) {
      std::error_code error;
      newest = std::max(newest, fs::last_write_time(file, error));
    }
    return newest;
  };
  return *std::max_element(complete.begin(), complete.end(),
                           [&](const auto& a, const auto& b) { return written(a) < written(b); });
}

std::vector<std::string> checkpoint_files_present(const std::string& given) {
  const std::string prefix = checkpoint_prefix_of(given);
  std::vector<std::string> files;
  std::error_code ec;
  if (fs::exists(prefix + std::string(kNpz), ec)) files.push_back(prefix + std::string(kNpz));
  for (auto& [shard, file] : shard_files(prefix))
    files.push_back(file);
  return files;
}

StatusOr<std::vector<Tensor>> read_checkpoint_tensors(const std::string& given,
                                                      const std::vector<std::string>& names,
                                                      const std::vector<TensorSliceSpec>& slices,
                                                      std::string* shown_as) {
  const std::string prefix = checkpoint_prefix_of(given);
  TROUPE_ASSIGN_OR_RETURN(std::vector<std::string> files, checkpoint_data_files(prefix));
  TROUPE_ASSIGN_OR_RETURN(auto keys, keys_of(files));
  const std::string shown = checkpoint_shown(files, prefix);
  if (shown_as != nullptr) *shown_as = shown;
  std::vector<Holding> holdings;
  std::vector<std::vector<std::string>> wanted(files.size());
  for (const std::string& name : names) {
    TROUPE_ASSIGN_OR_RETURN(Holding holding, holding_of(keys, name, shown));
    if (!holding.whole_key.empty()) wanted[keys.at(holding.whole_key)].push_back(name);
    for (const StoredSlice& s : holding.slices)
      wanted[keys.at(s.key)].push_back(s.key);
    holdings.push_back(std::move(holding));
  }
  std::map<std::string, Tensor> arrays;
  for (size_t f = 0; f < files.size(); ++f) {
    std::vector<std::string>& keys_here = wanted[f];
    std::sort(keys_here.begin(), keys_here.end());
    keys_here.erase(std::unique(keys_here.begin(), keys_here.end()), keys_here.end());
    if (keys_here.empty()) continue;
    TROUPE_ASSIGN_OR_RETURN(std::vector<Tensor> read, read_npz_tensors(files[f], keys_here));
    for (size_t k = 0; k < keys_here.size(); ++k)
      arrays.emplace(keys_here[k], std::move(read[k]));
  }
  std::vector<Tensor> result;
  for (size_t i = 0; i < names.size(); ++i) {
    const Holding& holding = holdings[i];
    const TensorSliceSpec& asked = slices[i];
    const std::string what = fmt::format("tensor '{}' of checkpoint '{}'", names[i], shown);
    if (!holding.whole_key.empty()) {
      TROUPE_ASSIGN_OR_RETURN(Tensor out, slice_of(arrays.at(holding.whole_key), asked, what));
      result.push_back(std::move(out));
      continue;
    }
    const std::vector<int64_t>& full = holding.slices[0].spec.full_shape;
    if (!asked.whole && asked.full_shape != full) {
      return errors::InvalidArgument(
          "{}: the tensor's shape is [{}], the slice is of a [{}] tensor", what,
          fmt::join(full, ","), fmt::join(asked.full_shape, ","));
    }
    const std::vector<int64_t> start =
        asked.whole ? std::vector<int64_t>(full.size(), 0) : asked.start;
    const std::vector<int64_t>& length = asked.whole ? full : asked.length;
    const DataType dtype = arrays.at(holding.slices[0].key).dtype();
    if (dtype == DataType::kString) {
      return errors::InvalidArgument("{}: slices of string tensors are not supported", what);
    }
    Tensor out(dtype, TensorShape(length));
    int64_t copied = 0;
    for (const StoredSlice& s : holding.slices) {
      const Tensor& piece = arrays.at(s.key);
      if (piece.dtype() != dtype || piece.shape() != TensorShape(s.spec.length)) {
        return errors::DataLoss("{}: slice '{}' holds a {} {}, expected a {} [{}]", what, s.key,
                                dtype_name(piece.dtype()), piece.shape().to_string(),
                                dtype_name(dtype), fmt::join(s.spec.length, ","));
      }
      copied += copy_overlap(piece, s.spec.start, out, start);
    }
    if (copied != out.num_elements()) {
      return errors::DataLoss("{}: its slices hold {} of the {} elements asked for", what, copied,
                              out.num_elements());
    }
    result.push_back(std::move(out));
  }
  return result;
}

Status check_checkpoint_readable(const std::string& prefix) {
  TROUPE_ASSIGN_OR_RETURN(std::vector<std::string> files, checkpoint_data_files(prefix));
  for (const std::string& file : files)
    TROUPE_RETURN_IF_ERROR(read_npz(file).status());
  return Status::OK();
}

StatusOr<std::vector<std::pair<std::string, Tensor>>> read_checkpoint(const std::string& given) {
  const std::string prefix = checkpoint_prefix_of(given);
  TROUPE_ASSIGN_OR_RETURN(std::vector<std::string> files, checkpoint_data_files(prefix));
  TROUPE_ASSIGN_OR_RETURN(auto keys, keys_of(files));
  std::set<std::string> names;
  for (const auto& [key, file] : keys)
    names.insert(key.substr(0, key.find('@')));
  std::vector<std::string> ordered(names.begin(), names.end());
  TROUPE_ASSIGN_OR_RETURN(
      std::vector<Tensor> tensors,
      read_checkpoint_tensors(prefix, ordered, std::vector<TensorSliceSpec>(ordered.size())));
  std::vector<std::pair<std::string, Tensor>> result;
  for (size_t i = 0; i < ordered.size(); ++i)
    result.emplace_back(ordered[i], std::move(tensors[i]));
  return result;
}

}  // namespace troupe
