// .npz checkpoints: one .npy member (npy.hpp) per tensor in a ZIP archive (zip_archive.hpp).
#include "troupe/graph/formats/npz.hpp"

#include <map>
#include <set>

#include <fmt/format.h>

#include "troupe/graph/formats/file_io.hpp"
#include "troupe/graph/formats/npy.hpp"
#include "troupe/graph/formats/zip_archive.hpp"

namespace troupe {
namespace {

constexpr std::string_view kNpySuffix = ".npy";

std::string missing_message(const std::string& path) {
  return fmt::format(
      "npz file '{}' does not exist (write_npz creates one, e.g. a training run's chief when it "
      "saves a checkpoint; check the path)",
      path);
}

StatusOr<std::string> read_archive(const std::string& path) {
  return read_whole_file(path, "", missing_message(path));
}

}  // namespace

Status write_npz(const std::string& path, const NamedTensors& tensors) {
  std::vector<std::string> headers;  // kept alive for the pieces that point into them
  headers.reserve(tensors.size());
  std::vector<ZipMemberToWrite> members;
  members.reserve(tensors.size());
  std::set<std::string_view> names;
  for (const auto& [name, tensor] : tensors) {
    if (name.empty()) return errors::InvalidArgument("write_npz '{}': empty tensor name", path);
    if (!names.insert(name).second) {
      return errors::InvalidArgument("write_npz '{}': tensor name '{}' appears twice", path, name);
    }
    auto header = encode_npy_header(tensor);
    if (!header.ok()) {
      return header.status().with_context(fmt::format("write_npz '{}': tensor '{}'", path, name));
    }
    headers.push_back(std::move(header).value());
    ZipMemberToWrite member{name + std::string(kNpySuffix), {headers.back()}};
    if (tensor.total_bytes() > 0) {
      member.pieces.emplace_back(static_cast<const char*>(tensor.raw_data()), tensor.total_bytes());
    }
    members.push_back(std::move(member));
  }
  return write_zip(path, members).with_context("write_npz");
}

StatusOr<NamedTensors> read_npz(const std::string& path) {
  TROUPE_ASSIGN_OR_RETURN(std::string file, read_archive(path));
  return decode_npz(file, path);
}

StatusOr<std::vector<Tensor>> read_npz_tensors(const std::string& path,
                                               const std::vector<std::string>& names) {
  std::map<std::string, Tensor> found;  // by member name: "<tensor>.npy"
  for (const std::string& name : names)
    found.emplace(name + std::string(kNpySuffix), Tensor());
  TROUPE_RETURN_IF_ERROR(read_zip_members(
      path, [&](const std::string& member) { return found.count(member) > 0; },
      missing_message(path),
      [&](const std::string& member, std::string_view content, const std::string& what) -> Status {
        Tensor& slot = found.at(member);
        if (slot.is_initialized()) return errors::DataLoss("{}: appears twice", what);
        TROUPE_ASSIGN_OR_RETURN(slot, decode_npy(content, what));
        return Status::OK();
      }));
  std::vector<Tensor> result;
  for (const std::string& name : names) {
    const Tensor& tensor = found.at(name + std::string(kNpySuffix));
    if (!tensor.is_initialized()) {
      return errors::NotFound("Key {} not found in checkpoint '{}'", name, path);
    }
    result.push_back(tensor);
  }
  return result;
}

StatusOr<NamedTensors> decode_npz(std::string_view file, const std::string& path) {
  NamedTensors result;
  std::set<std::string> seen;
  TROUPE_RETURN_IF_ERROR(for_each_zip_member(
      file, path,
      [&](const std::string& name, std::string_view content, const std::string& what) -> Status {
        if (!name.ends_with(kNpySuffix)) {
          return errors::InvalidArgument("{}: not a .npy array (expected names ending in .npy)",
                                         what);
        }
        std::string key = name.substr(0, name.size() - kNpySuffix.size());
        if (!seen.insert(key).second) return errors::DataLoss("{}: appears twice", what);
        TROUPE_ASSIGN_OR_RETURN(Tensor tensor, decode_npy(content, what));
        result.emplace_back(std::move(key), std::move(tensor));
        return Status::OK();
      }));
  return result;
}

}  // namespace troupe
