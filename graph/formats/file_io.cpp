// File helpers: errno -> Status, whole-file reads.
#include "troupe/graph/formats/file_io.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace troupe {

Status errno_status(int err, std::string_view action, const std::string& file,
                    std::string_view hint) {
  std::string message = fmt::format("{} '{}': {}{}", action, file, std::strerror(err), hint);
  switch (err) {
    case ENOENT:
    case ENOTDIR:
      return Status(Code::kNotFound, message);
    case EEXIST:
      return Status(Code::kAlreadyExists, message);
    case EACCES:
    case EPERM:
    case EROFS:
      return Status(Code::kPermissionDenied, message);
    case ENOSPC:
    case EDQUOT:
    case EFBIG:
      return Status(Code::kResourceExhausted, message);
    case EISDIR:
      return Status(Code::kInvalidArgument, message);
    default:
      return Status(Code::kUnknown, message);
  }
}

StatusOr<std::string> read_whole_file(const std::string& path, std::string_view noun,
                                      std::string_view if_missing) {
  auto action = [&](std::string_view verb) {
    return noun.empty() ? std::string(verb) : fmt::format("{} {}", verb, noun);
  };
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    if (err == ENOENT) return Status(Code::kNotFound, std::string(if_missing));
    return errno_status(err, action("cannot open"), path);
  }
  std::string bytes;
  struct stat st {};
  if (::fstat(fd, &st) == 0 && st.st_size > 0) bytes.reserve(static_cast<size_t>(st.st_size));
  char buffer[1 << 16];
  while (true) {
    ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      ::close(fd);
      return errno_status(err, action("cannot read"), path);
    }
    if (n == 0) break;
    bytes.append(buffer, static_cast<size_t>(n));
  }
  ::close(fd);
  return bytes;
}

}  // namespace troupe
