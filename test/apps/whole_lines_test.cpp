// Tests for WholeLineBuffer: a line written in pieces is handed on once, whole; flushes hand on
// what there is; lines of concurrent threads are never spliced.
#include <ostream>
#include <thread>

#include <boost/test/unit_test.hpp>

#include "troupe/apps/cli/whole_lines.hpp"

namespace troupe::cli {
namespace {

// Every piece the buffer hands on, in order.
struct Recorder {
  std::mutex mutex;
  std::vector<std::string> pieces;
  WholeLineBuffer buffer{[this](std::string_view piece) {
    std::lock_guard lock(mutex);
    pieces.emplace_back(piece);
  }};
};

}  // namespace

BOOST_AUTO_TEST_SUITE(whole_lines)

BOOST_AUTO_TEST_CASE(a_line_written_in_pieces_is_handed_on_once) {
  Recorder recorder;
  std::ostream out(&recorder.buffer);
  out << "troupe node: "
      << "warning: " << 42 << "\n"
      << "second line" << '\n';
  BOOST_TEST(recorder.pieces ==
             (std::vector<std::string>{"troupe node: warning: 42\n", "second line\n"}));
}

BOOST_AUTO_TEST_CASE(a_flush_or_a_carriage_return_hands_on_what_there_is) {
  Recorder recorder;
  std::ostream out(&recorder.buffer);
  out << "[####      ] 40%\r"
      << "partial";
  BOOST_TEST(recorder.pieces == std::vector<std::string>{"[####      ] 40%\r"});
  out << std::flush;
  BOOST_TEST(recorder.pieces == (std::vector<std::string>{"[####      ] 40%\r", "partial"}));
  out.flush();  // nothing left: nothing handed on
  BOOST_TEST(recorder.pieces.size() == 2u);
}

BOOST_AUTO_TEST_CASE(lines_of_concurrent_threads_are_never_spliced) {
  Recorder recorder;
  constexpr int kLines = 2000;
  auto writer = [&](const std::string& name) {
    std::ostream out(&recorder.buffer);
    for (int i = 0; i < kLines; ++i)
      out << name << ": "
          << "line " << i << "\n";
  };
  std::thread a(writer, "alpha"), b(writer, "beta");
  a.join();
  b.join();
  BOOST_TEST_REQUIRE(recorder.pieces.size() == 2u * kLines);
  int alpha = 0, beta = 0;
  for (const std::string& piece : recorder.pieces) {
    // Each piece is one whole line of one thread.
    bool from_alpha = piece.rfind("alpha: line ", 0) == 0;
    bool from_beta = piece.rfind("beta: line ", 0) == 0;
    BOOST_TEST_REQUIRE((from_alpha || from_beta), piece);
    BOOST_TEST_REQUIRE(piece.find('\n') == piece.size() - 1, piece);
    if (from_alpha) BOOST_TEST_REQUIRE(piece == "alpha: line " + std::to_string(alpha++) + "\n");
    if (from_beta) BOOST_TEST_REQUIRE(piece == "beta: line " + std::to_string(beta++) + "\n");
  }
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace troupe::cli
