// Whole lines on stderr. std::cerr writes every `<<` as a write(2) of its own, so two processes
// sharing a terminal or pipe (tasks started from one shell, or under `troupe launch`) splice
// their lines ("troupe node: troupe node: warning ..."), and so do two threads of one process.
//
// WholeLineBuffer collects what each thread writes and hands it on one line at a time (a line
// ends with '\n' or, for a progress bar redrawn in place, '\r'); a flush (std::flush,
// std::endl) hands on what the thread has so far. A line is one write(2): POSIX keeps writes of
// up to PIPE_BUF (4096) bytes to a pipe whole, and terminals do not split them in practice.
#pragma once

#include <functional>
#include <streambuf>
#include <string_view>

namespace troupe::cli {

class WholeLineBuffer : public std::streambuf {
 public:
  // `sink` takes each line (or flushed piece); it may be called from any writing thread.
  explicit WholeLineBuffer(std::function<void(std::string_view)> sink);

 protected:
  int_type overflow(int_type c) override;
  std::streamsize xsputn(const char* data, std::streamsize size) override;
  int sync() override;

 private:
  std::function<void(std::string_view)> sink_;
};

// Makes std::cerr and std::clog write whole lines to file descriptor 2 (idempotent). The `troupe`
// commands call it first (exit_code.hpp).
void write_stderr_in_whole_lines();

}  // namespace troupe::cli
