// Tests of the `troupe` command-line tool, run as a user runs it.
#include <boost/test/unit_test.hpp>

#include "apps/child_process.hpp"

namespace troupe {
using testing::run_process;

BOOST_AUTO_TEST_SUITE(cli)

BOOST_AUTO_TEST_CASE(hello_prints_the_string_and_the_product) {
  auto result = run_process({TROUPE_CLI, "hello"}, 60000);
  BOOST_TEST(result.exit_code == 0, result.out);
  BOOST_TEST(result.out.find("Hello, distributed troupe!\n") != std::string::npos, result.out);
  BOOST_TEST(result.out.find("= [[4]]") != std::string::npos, result.out);
}

BOOST_AUTO_TEST_CASE(hello_rejects_arguments) {
  auto result = run_process({TROUPE_CLI, "hello", "--loud"}, 60000);
  BOOST_TEST(result.exit_code == 2);
  BOOST_TEST(result.out.find("troupe hello: unknown flag --loud") == 0u, result.out);
  result = run_process({TROUPE_CLI, "hello", "loud"}, 60000);
  BOOST_TEST(result.exit_code == 2);
  BOOST_TEST(result.out.find("troupe hello: unexpected argument 'loud'") == 0u, result.out);
}

BOOST_AUTO_TEST_CASE(unknown_command_is_a_usage_error) {
  auto result = run_process({TROUPE_CLI, "no-such-command"}, 60000);
  BOOST_TEST(result.exit_code == 2);
  BOOST_TEST(result.out.find("unknown command 'no-such-command'") != std::string::npos, result.out);
}

BOOST_AUTO_TEST_CASE(no_command_prints_usage) {
  auto result = run_process({TROUPE_CLI}, 60000);
  BOOST_TEST(result.exit_code == 2);
  BOOST_TEST(result.out.find("usage: troupe <command>") != std::string::npos, result.out);
}

// Help the way users type it: --help and -h after every command, and `troupe help CMD`; each
// starts with what the command does and ends with an example.
BOOST_AUTO_TEST_CASE(every_command_has_help) {
  for (std::string command : {"data", "hello", "k8s", "launch", "node", "sim", "train"}) {
    auto help = run_process({TROUPE_CLI, command, "--help"}, 60000);
    BOOST_TEST(help.exit_code == 0, command << ": " << help.out);
    BOOST_TEST(help.out.rfind("troupe " + command + ": ", 0) == 0u, help.out);
    BOOST_TEST(help.out.find("\nusage: troupe " + command) != std::string::npos, help.out);
    BOOST_TEST(help.out.find("  -h, --help ") != std::string::npos, help.out);
    auto examples = help.out.rfind("\nexample");
    BOOST_TEST_REQUIRE(examples != std::string::npos, help.out);
    BOOST_TEST(help.out.find("  troupe ", examples) != std::string::npos, help.out);
    BOOST_TEST(help.out.find("--help=false") == std::string::npos, help.out);
    auto short_help = run_process({TROUPE_CLI, command, "-h"}, 60000);
    BOOST_TEST(short_help.exit_code == 0);
    BOOST_TEST(short_help.out == help.out);
    auto help_command = run_process({TROUPE_CLI, "help", command}, 60000);
    BOOST_TEST(help_command.exit_code == 0);
    BOOST_TEST(help_command.out == help.out);
  }
}

BOOST_AUTO_TEST_CASE(help_wins_over_other_arguments_and_lists_every_command) {
  auto help = run_process({TROUPE_CLI, "node", "--no_such_flag", "-h"}, 60000);
  BOOST_TEST(help.exit_code == 0, help.out);
  BOOST_TEST(help.out.rfind("troupe node: ", 0) == 0u, help.out);
  // A default too long for its column puts the description on the next line.
  auto train = run_process({TROUPE_CLI, "train", "--help"}, 60000);
  BOOST_TEST(train.out.find("  --data_dir=/usr/share/datasets/fashion-mnist\n"
                            "                                   where the Fashion-MNIST") !=
                 std::string::npos,
             train.out);
  auto list = run_process({TROUPE_CLI, "help"}, 60000);
  BOOST_TEST(list.exit_code == 0);
  for (std::string command : {"data", "hello", "k8s", "launch", "node", "sim", "train", "version"})
    BOOST_TEST(list.out.find("\n  " + command + " ") != std::string::npos, list.out);
  auto unknown = run_process({TROUPE_CLI, "help", "nope"}, 60000);
  BOOST_TEST(unknown.exit_code == 2);
  BOOST_TEST(unknown.out.find("unknown command 'nope'") != std::string::npos, unknown.out);
}

BOOST_AUTO_TEST_CASE(version) {
  auto result = run_process({TROUPE_CLI, "version"}, 60000);
  BOOST_TEST(result.exit_code == 0);
  BOOST_TEST(result.out.find("troupe 0.") == 0u, result.out);
  for (auto args : {std::vector<std::string>{TROUPE_CLI, "version", "--help"},
                    std::vector<std::string>{TROUPE_CLI, "help", "version"}}) {
    auto help = run_process(args, 60000);
    BOOST_TEST(help.exit_code == 0);
    BOOST_TEST(help.out.rfind("troupe version: print the version", 0) == 0u, help.out);
  }
  auto extra = run_process({TROUPE_CLI, "version", "now"}, 60000);
  BOOST_TEST(extra.exit_code == 2);
  BOOST_TEST(extra.out.find("unexpected argument 'now'") != std::string::npos, extra.out);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace troupe
