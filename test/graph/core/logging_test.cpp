// The libraries' log lines: format, level filter, level names, and whole lines from threads.
#include "troupe/graph/core/logging.hpp"

#include <iostream>
#include <regex>
#include <sstream>
#include <thread>
#include <vector>

#include <boost/test/unit_test.hpp>

#include "status_checks.hpp"

namespace troupe {
namespace {

// Points std::cerr at a string and restores it, and the log level, when done.
class CapturedLog {
 public:
  CapturedLog() : old_buffer_(std::cerr.rdbuf(text_.rdbuf())), old_level_(log_level()) {}
  ~CapturedLog() {
    std::cerr.rdbuf(old_buffer_);
    set_log_level(old_level_);
  }
  std::string text() const { return text_.str(); }

 private:
  std::ostringstream text_;
  std::streambuf* old_buffer_;
  LogLevel old_level_;
};

BOOST_AUTO_TEST_SUITE(logging)

BOOST_AUTO_TEST_CASE(a_line_has_the_time_the_level_and_the_message) {
  CapturedLog log;
  set_log_level(LogLevel::kInfo);
  log_warning("{} at {} is lost", "/job:ps/replica:0/task:0", "ps0:2222");
  std::regex line(R"(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3} warning troupe: )"
                  R"(/job:ps/replica:0/task:0 at ps0:2222 is lost\n)");
  BOOST_TEST(std::regex_match(log.text(), line), log.text());
}

BOOST_AUTO_TEST_CASE(lines_below_the_level_are_dropped) {
  CapturedLog log;
  set_log_level(LogLevel::kWarning);
  log_debug("d");
  log_info("i");
  log_warning("w");
  log_error("e");
  std::string text = log.text();
  BOOST_TEST(text.find(" debug troupe: d\n") == std::string::npos, text);
  BOOST_TEST(text.find(" info troupe: i\n") == std::string::npos, text);
  BOOST_TEST(text.find(" warning troupe: w\n") != std::string::npos, text);
  BOOST_TEST(text.find(" error troupe: e\n") != std::string::npos, text);
  set_log_level(LogLevel::kOff);
  log_error("not even this");
  BOOST_TEST(log.text() == text);
  set_log_level(LogLevel::kDebug);
  log_debug("now shown");
  BOOST_TEST(log.text().find(" debug troupe: now shown\n") != std::string::npos, log.text());
}

BOOST_AUTO_TEST_CASE(level_names) {
  for (LogLevel level :
       {LogLevel::kDebug, LogLevel::kInfo, LogLevel::kWarning, LogLevel::kError, LogLevel::kOff}) {
    BOOST_TEST((value_or_throw(parse_log_level(log_level_name(level))) == level));
  }
  BOOST_TEST((value_or_throw(parse_log_level("warn")) == LogLevel::kWarning));
  testing::check_error(parse_log_level("loud").status(), Code::kInvalidArgument,
                       "unknown log level 'loud' (expected debug, info, warning, error or off)");
}

BOOST_AUTO_TEST_CASE(lines_from_several_threads_stay_whole) {
  CapturedLog log;
  set_log_level(LogLevel::kInfo);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([t] {
      for (int i = 0; i < 200; ++i)
        log_info("thread {} line {} {}", t, i, std::string(100, 'x'));
    });
  }
  for (auto& thread : threads)
    thread.join();
  std::istringstream lines(log.text());
  std::regex whole(R"(\S+ \S+ info troupe: thread \d line \d+ x{100})");
  int count = 0;
  for (std::string line; std::getline(lines, line); ++count) {
    BOOST_TEST(std::regex_match(line, whole), line);
  }
  BOOST_TEST(count == 800);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace troupe
