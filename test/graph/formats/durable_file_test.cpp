// Tests of durable writes (graph/formats/durable_file.hpp): a failure at any step
// leaves the previous contents and no .tmp file, and names the step and the file.
#include <cerrno>
#include <filesystem>

#include <boost/test/unit_test.hpp>

#include "status_checks.hpp"
#include "temp_files.hpp"
#include "troupe/graph/formats/durable_file.hpp"

namespace troupe {
using testing::check_error;
using testing::has_temporary_files;
using testing::read_file;
using testing::TempDir;
using testing::write_file;
namespace fs = std::filesystem;

namespace {

// Makes `step` fail with `err` while it lives.
class FailStep {
 public:
  FailStep(DurableStep step, int err) {
    set_durable_fault_for_testing(
        [step, err](DurableStep at, const std::string&) { return at == step ? err : 0; });
  }
  ~FailStep() { set_durable_fault_for_testing(nullptr); }
};

Status write_durably(const std::string& path, const std::string& bytes) {
  TROUPE_ASSIGN_OR_RETURN(auto file, DurableFile::create(path));
  TROUPE_RETURN_IF_ERROR(file->append(bytes.substr(0, bytes.size() / 2)));
  TROUPE_RETURN_IF_ERROR(file->append(bytes.substr(bytes.size() / 2)));
  return file->commit();
}

}  // namespace

BOOST_AUTO_TEST_SUITE(durable_file)

// Two saves of one step at once (a Supervisor's checkpoint thread and its final save): each
// writes a file of its own, both commit, the file holds one of them whole.
BOOST_AUTO_TEST_CASE(two_writers_of_one_path_do_not_collide) {
  TempDir dir;
  std::string path = dir.file("model.ckpt-7.npz");
  auto first = value_or_throw(DurableFile::create(path));
  auto second = value_or_throw(DurableFile::create(path));
  BOOST_REQUIRE(first->append("first").ok());
  BOOST_REQUIRE(second->append("second").ok());
  BOOST_TEST(first->commit().ok());
  BOOST_TEST(second->commit().ok());
  BOOST_TEST(read_file(path) == "second");
  BOOST_TEST(!has_temporary_files(path));
}

BOOST_AUTO_TEST_CASE(commit_replaces_the_file_and_leaves_no_tmp) {
  TempDir dir;
  std::string path = dir.file("index");
  write_file(path, "old");
  BOOST_REQUIRE(write_durably(path, "new contents").ok());
  BOOST_TEST(read_file(path) == "new contents");
  BOOST_TEST(!has_temporary_files(path));
}

BOOST_AUTO_TEST_CASE(a_failure_at_any_step_keeps_the_previous_contents) {
  for (DurableStep step : {DurableStep::kCreate, DurableStep::kWrite, DurableStep::kSync,
                           DurableStep::kClose, DurableStep::kRename}) {
    BOOST_TEST_CONTEXT("step " << durable_step_name(step)) {
      TempDir dir;
      std::string path = dir.file("index");
      write_file(path, "old");
      Status status;
      {
        FailStep fail(step, ENOSPC);
        status = write_durably(path, "new contents");
      }
      check_error(status, Code::kResourceExhausted, durable_step_name(step));
      BOOST_TEST(status.message().find("index") != std::string::npos, status.to_string());
      BOOST_TEST(read_file(path) == "old");
      BOOST_TEST(!has_temporary_files(path));
    }
  }
}

BOOST_AUTO_TEST_CASE(an_io_error_is_not_a_full_disk) {
  TempDir dir;
  FailStep fail(DurableStep::kClose, EIO);
  check_error(write_durably(dir.file("f"), "x"), Code::kUnknown, "cannot close");
}

BOOST_AUTO_TEST_CASE(a_failed_directory_sync_is_an_error_with_the_new_contents_in_place) {
  TempDir dir;
  std::string path = dir.file("index");
  FailStep fail(DurableStep::kSyncDirectory, EIO);
  check_error(write_durably(path, "new"), Code::kUnknown, "fsync the directory");
  BOOST_TEST(read_file(path) == "new");
}

BOOST_AUTO_TEST_CASE(a_writer_dropped_without_commit_removes_its_tmp_file) {
  TempDir dir;
  std::string path = dir.file("index");
  {
    auto file = value_or_throw(DurableFile::create(path));
    BOOST_REQUIRE(file->append("partial").ok());
    BOOST_TEST(has_temporary_files(path));
  }
  BOOST_TEST(!has_temporary_files(path));
  BOOST_TEST(!fs::exists(path));
}

BOOST_AUTO_TEST_CASE(a_missing_directory_is_not_found) {
  TempDir dir;
  check_error(DurableFile::create(dir.file("no/such/file")).status(), Code::kNotFound,
              "does its directory exist");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace troupe
