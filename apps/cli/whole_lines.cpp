// WholeLineBuffer: per-thread line assembly for stderr.
#include "troupe/apps/cli/whole_lines.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <iostream>
#include <map>
#include <mutex>
#include <string>

namespace troupe::cli {
namespace {

// What the calling thread has written to `buffer` and not yet handed on.
std::string& pending_of(const WholeLineBuffer* buffer) {
  thread_local std::map<const WholeLineBuffer*, std::string> pending;
  return pending[buffer];
}

void write_all(int fd, std::string_view text) {
  while (!text.empty()) {
    ssize_t n = ::write(fd, text.data(), text.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // stderr is gone: nothing to tell anyone
    text.remove_prefix(static_cast<size_t>(n));
  }
}

}  // namespace

WholeLineBuffer::WholeLineBuffer(std::function<void(std::string_view)> sink)
    : sink_(std::move(sink)) {}

WholeLineBuffer::int_type WholeLineBuffer::overflow(int_type c) {
  if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
  char ch = traits_type::to_char_type(c);
  xsputn(&ch, 1);
  return c;
}

std::streamsize WholeLineBuffer::xsputn(const char* data, std::streamsize size) {
  std::string& pending = pending_of(this);
  std::string_view text(data, static_cast<size_t>(size));
  while (!text.empty()) {
    size_t end = text.find_first_of("\n\r");
    if (end == std::string_view::npos) {
      pending.append(text);
      break;
    }
    pending.append(text.substr(0, end + 1));
    text.remove_prefix(end + 1);
    sink_(pending);
    pending.clear();
  }
  return size;
}

int WholeLineBuffer::sync() {
  std::string& pending = pending_of(this);
  if (!pending.empty()) {
    sink_(pending);
    pending.clear();
  }
  return 0;
}

void write_stderr_in_whole_lines() {
  static std::once_flag once;
  std::call_once(once, [] {
    // Never destroyed: threads may write to std::cerr until the process ends.
    static auto* buffer = new WholeLineBuffer([](std::string_view line) { write_all(2, line); });
    std::cerr.rdbuf(buffer);
    std::clog.rdbuf(buffer);
    // std::cerr flushes after every `<<` (unitbuf), which would hand on pieces of lines.
    std::cerr.unsetf(std::ios_base::unitbuf);
    // A piece of a line left at exit (no newline, no flush) is still written.
    std::atexit([] { std::cerr.flush(); });
  });
}

}  // namespace troupe::cli
