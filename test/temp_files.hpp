// Test helpers for files: a fresh temporary directory removed with its contents, and
// whole-file reads and writes. Every test that touches the file system uses these.
#pragma once

#include <stdlib.h>

#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace troupe::testing {

// A new, empty directory under the system's temporary directory (mkdtemp: unique across
// processes and threads), removed with everything in it when the object goes.
class TempDir {
 public:
  explicit TempDir(const std::string& prefix = "troupe-test") {
    std::string pattern = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
    BOOST_REQUIRE_MESSAGE(::mkdtemp(pattern.data()) != nullptr, "mkdtemp " << pattern);
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  // The path of `name` inside the directory.
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

// The bytes of the file at `path` (empty if it cannot be read; tests compare the result).
inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Replaces the file at `path` with `bytes`.
inline void write_file(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  BOOST_REQUIRE_MESSAGE(out.good(), "cannot write " << path);
}

// Whether a DurableFile's temporary file of `path` ("<path>.tmp...") is left in its directory.
inline bool has_temporary_files(const std::string& path) {
  const std::filesystem::path p(path);
  for (const auto& entry : std::filesystem::directory_iterator(p.parent_path())) {
    if (entry.path().filename().string().starts_with(p.filename().string() + ".tmp")) return true;
  }
  return false;
}

}  // namespace troupe::testing
