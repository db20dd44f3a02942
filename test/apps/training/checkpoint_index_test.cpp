// Tests of the checkpoint index (apps/training/checkpoint_index.hpp) and of saves that fail:
// the index is read as TensorFlow writes it, rebuilt from the files on disk when it is lost or
// damaged, and a save that fails at any write leaves the newest complete checkpoint restorable.
#include <cerrno>
#include <filesystem>
#include <memory>

#include <boost/test/unit_test.hpp>

#include "status_checks.hpp"
#include "temp_files.hpp"
#include "troupe/actors/server.hpp"
#include "troupe/apps/training/checkpoint_index.hpp"
#include "troupe/apps/training/monitored_session.hpp"
#include "troupe/apps/training/saver.hpp"
#include "troupe/graph/formats/checkpoint_files.hpp"
#include "troupe/graph/formats/durable_file.hpp"
#include "troupe/graph/formats/npz.hpp"
#include "troupe/graph/ops/ops.hpp"

namespace troupe {
using testing::check_error;
using testing::read_file;
using testing::TempDir;
using testing::write_file;
namespace fs = std::filesystem;

namespace {

void write_checkpoint(const TempDir& dir, const std::string& name, double value) {
  BOOST_REQUIRE(write_npz(dir.file(name), {{"v", Tensor(value)}}).ok());
}

std::string newest_name(const std::string& dir) {
  auto latest = value_or_throw(latest_checkpoint(dir));
  return latest ? fs::path(*latest).filename().string() : "";
}

}  // namespace

BOOST_AUTO_TEST_SUITE(checkpoint_index)

BOOST_AUTO_TEST_CASE(round_trips_in_tensorflows_format) {
  TempDir dir;
  CheckpointState state{"model.ckpt-20.npz", {"model.ckpt-10.npz", "model.ckpt-20.npz"}};
  BOOST_REQUIRE(write_checkpoint_index(dir.path().string(), state).ok());
  BOOST_TEST(read_file(dir.file("checkpoint")) ==
             "model_checkpoint_path: \"model.ckpt-20.npz\"\n"
             "all_model_checkpoint_paths: \"model.ckpt-10.npz\"\n"
             "all_model_checkpoint_paths: \"model.ckpt-20.npz\"\n");
  auto read = value_or_throw(read_checkpoint_index(dir.path().string()));
  BOOST_REQUIRE(read.has_value());
  BOOST_TEST(read->model_checkpoint_path == "model.ckpt-20.npz");
  BOOST_TEST(read->all_model_checkpoint_paths == state.all_model_checkpoint_paths);
}

BOOST_AUTO_TEST_CASE(reads_what_tensorflow_writes) {
  TempDir dir;
  write_file(dir.file("checkpoint"),
             "model_checkpoint_path: \"/data/run/model.ckpt-7\"\n"
             "all_model_checkpoint_paths: \"/data/run/model.ckpt-5\"\n"
             "all_model_checkpoint_timestamps: 1732600000.25\n"
             "last_preserved_timestamp: 1732599000.5\n");
  auto read = value_or_throw(read_checkpoint_index(dir.path().string()));
  BOOST_REQUIRE(read.has_value());
  BOOST_TEST(read->model_checkpoint_path == "/data/run/model.ckpt-7");
  // The newest is always listed, last.
  BOOST_TEST(read->all_model_checkpoint_paths ==
             (std::vector<std::string>{"/data/run/model.ckpt-5", "/data/run/model.ckpt-7"}));
  BOOST_TEST(checkpoint_path_in("/x", "/data/run/model.ckpt-7") == "/data/run/model.ckpt-7");
  BOOST_TEST(checkpoint_path_in("/x", "model.ckpt-7") == "/x/model.ckpt-7");
}

BOOST_AUTO_TEST_CASE(an_empty_or_damaged_index_is_data_loss) {
  TempDir dir;
  BOOST_TEST(!value_or_throw(read_checkpoint_index(dir.path().string())).has_value());
  write_file(dir.file("checkpoint"), "");
  check_error(read_checkpoint_index(dir.path().string()).status(), Code::kDataLoss, "is empty");
  write_file(dir.file("checkpoint"), "model_checkpoint_path: \"a-1.npz\"\nmodel_chec");
  check_error(read_checkpoint_index(dir.path().string()).status(), Code::kDataLoss,
              "line 2 is 'model_chec'");
  write_file(dir.file("checkpoint"), "all_model_checkpoint_paths: \"a-1.npz\"\n");
  check_error(read_checkpoint_index(dir.path().string()).status(), Code::kDataLoss,
              "no model_checkpoint_path");
}

// The index of a save that failed half-way (the loss this guards against: a 0-byte index
// after a full disk, and the next start beginning at step 0).
BOOST_AUTO_TEST_CASE(an_empty_index_is_rebuilt_from_the_complete_checkpoints_on_disk) {
  TempDir dir;
  const std::string d = dir.path().string();
  write_checkpoint(dir, "model.ckpt-100.npz", 1);
  write_checkpoint(dir, "model.ckpt-20.npz", 2);
  write_checkpoint(dir, "model.ckpt-300.npz", 3);
  write_file(dir.file("model.ckpt-400.npz"), "PK\x03\x04 cut short");  // not a checkpoint
  write_file(dir.file("notes.npz"), "not a checkpoint name");
  write_file(dir.file("checkpoint"), "");

  bool rebuilt = false;
  auto state = value_or_throw(recover_checkpoint_state(d, &rebuilt));
  BOOST_TEST(rebuilt);
  BOOST_REQUIRE(state.has_value());
  BOOST_TEST(state->model_checkpoint_path == "model.ckpt-300.npz");
  BOOST_TEST(
      state->all_model_checkpoint_paths ==
      (std::vector<std::string>{"model.ckpt-20.npz", "model.ckpt-100.npz", "model.ckpt-300.npz"}));
  BOOST_TEST(newest_name(d) == "model.ckpt-300.npz");
  BOOST_TEST(read_file(dir.file("checkpoint")).empty());  // reading never writes

  // The chief's start rewrites it.
  BOOST_REQUIRE(prepare_checkpoint_directory(d).ok());
  auto index = value_or_throw(read_checkpoint_index(d));
  BOOST_REQUIRE(index.has_value());
  BOOST_TEST(index->model_checkpoint_path == "model.ckpt-300.npz");
}

BOOST_AUTO_TEST_CASE(an_index_naming_a_missing_file_falls_back_to_the_files_on_disk) {
  TempDir dir;
  const std::string d = dir.path().string();
  write_checkpoint(dir, "model.ckpt-5.npz", 1);
  BOOST_REQUIRE(write_checkpoint_index(d, {"model.ckpt-9.npz", {"model.ckpt-9.npz"}}).ok());
  BOOST_TEST(newest_name(d) == "model.ckpt-5.npz");
  // A lost index with checkpoints beside it.
  fs::remove(dir.file("checkpoint"));
  BOOST_TEST(newest_name(d) == "model.ckpt-5.npz");
  // Nothing at all: no checkpoint, no warning.
  fs::remove(dir.file("model.ckpt-5.npz"));
  BOOST_TEST(newest_name(d).empty());
  BOOST_TEST(newest_name(dir.file("never-made")).empty());
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(saves_that_fail)

// Saves of one variable v, set to a new value before each.
struct SavedModel {
  Scope root = Scope::new_root();
  ModelVariable v = make_variable(root, "v", Tensor(0.0));
  ModelVariable step = get_or_create_global_step(root);
  Output value = ops::Placeholder(root.with_op_name("value"), DataType::kDouble);
  Operation set = ops::Assign(root, v.ref, value).op();
  std::unique_ptr<Server> server = value_or_throw(Server::create_local_server());
  Session session = value_or_throw(Session::create(server->target()));
  Saver saver = value_or_throw(Saver::create(root, {.max_to_keep = 2}));
  Saver sharded = value_or_throw(Saver::create(root, {.max_to_keep = 2, .sharded = true}));

  SavedModel() { throw_if_error(session.run_targets({global_variables_initializer(root)})); }
  void set_v(double x) { throw_if_error(session.run_targets({set}, {{value, Tensor(x)}})); }
  double v_now() { return value_or_throw(session.run(v.ref)).scalar<double>(); }
};

// Makes the `failing`-th durable write from now on (0: the next) fail with ENOSPC, and says
// in `failed_step` which write it was ("" while none has failed). Undone by
// set_durable_fault_for_testing(nullptr).
void fail_durable_write(int failing, std::string* failed_step) {
  // The count lives outside the function, which the fault hook may copy.
  auto calls = std::make_shared<int>(0);
  set_durable_fault_for_testing(
      [failing, failed_step, calls](DurableStep at, const std::string& path) {
        if ((*calls)++ != failing) return 0;
        *failed_step = std::string(durable_step_name(at)) + " " + path;
        return ENOSPC;
      });
}

// Each write of a save fails in turn (create, write, fsync, close, rename of the data file,
// the directory's fsync, then the same for the index): the save reports it, and the newest
// complete checkpoint is the one restored; the next save succeeds and rotates as usual.
BOOST_AUTO_TEST_CASE(a_save_failing_at_any_write_leaves_the_newest_complete_checkpoint) {
  TempDir dir;
  const std::string d = dir.path().string();
  SavedModel m;
  m.set_v(1);
  BOOST_REQUIRE(m.saver.save(m.session, default_checkpoint_prefix(d), 1).ok());
  double saved = 1;
  int64_t step = 1;
  for (int failing = 0;; ++failing) {
    BOOST_TEST_CONTEXT("failing write " << failing) {
      ++step;
      m.set_v(static_cast<double>(step));
      std::string failed_step;
      fail_durable_write(failing, &failed_step);
      StatusOr<std::string> result = m.saver.save(m.session, default_checkpoint_prefix(d), step);
      set_durable_fault_for_testing(nullptr);
      if (failed_step.empty()) {  // every write has failed once; this save had no fault
        BOOST_TEST(result.ok(), result.status().to_string());
        BOOST_TEST(failing >= 12);
        BOOST_TEST(newest_name(d) == "model.ckpt-" + std::to_string(step) + ".npz");
        break;
      }
      BOOST_TEST_MESSAGE("failed: " << failed_step);
      BOOST_TEST(!result.ok());
      BOOST_TEST(result.status().code() == Code::kResourceExhausted, result.status().to_string());
      // The index is intact and names a complete file: the one saved before, or the new one
      // when only the directory's fsync after the index's rename failed (the rename is done).
      bool index_renamed =
          failed_step.starts_with("fsync the directory of") && failed_step.ends_with("/checkpoint");
      BOOST_REQUIRE(value_or_throw(read_checkpoint_index(d)).has_value());
      auto latest = value_or_throw(latest_checkpoint(d));
      BOOST_REQUIRE(latest.has_value());
      m.set_v(-1);
      BOOST_REQUIRE(m.saver.restore(m.session, *latest).ok());
      BOOST_TEST(m.v_now() == (index_renamed ? static_cast<double>(step) : saved));
      // A failed save leaves no file that the index does not name (a full disk stays full).
      std::string file = "model.ckpt-" + std::to_string(step) + ".npz";
      BOOST_TEST(fs::exists(dir.file(file)) == index_renamed, file);
      // The next save works.
      m.set_v(static_cast<double>(step) + 0.5);
      BOOST_REQUIRE(m.saver.save(m.session, default_checkpoint_prefix(d), step).ok());
      saved = static_cast<double>(step) + 0.5;
      BOOST_TEST(newest_name(d) == "model.ckpt-" + std::to_string(step) + ".npz");
    }
  }
  // max_to_keep = 2: the older files went, only after the index stopped naming them.
  // (One more stays when the index's directory fsync failed after its rename: the save stopped
  // before removing what the new index no longer names.)
  auto files = value_or_throw(checkpoint_files_on_disk(d));
  BOOST_TEST(files.size() <= 3u);
  auto index = value_or_throw(read_checkpoint_index(d));
  BOOST_REQUIRE(index.has_value());
  BOOST_TEST(index->all_model_checkpoint_paths.size() == 2u);
  for (const std::string& kept : index->all_model_checkpoint_paths)
    BOOST_TEST(fs::exists(dir.file(kept)), kept);
  for (const auto& entry : fs::directory_iterator(d)) {
    std::string name = entry.path().filename().string();
    BOOST_TEST(name.find(".tmp") == std::string::npos, name);
  }
}

// A step saved again in the other layout (the first start of a chief whose saver became
// sharded saves the step it restored): each write of the sharded save fails in turn, and that
// step's checkpoint is never lost — the old file stays until the index names the new shards.
BOOST_AUTO_TEST_CASE(a_step_saved_again_as_shards_is_never_lost_whichever_write_fails) {
  TempDir dir;
  const std::string d = dir.path().string();
  const std::string prefix = default_checkpoint_prefix(d);
  SavedModel m;
  for (int failing = 0;; ++failing) {
    BOOST_TEST_CONTEXT("failing write " << failing) {
      m.set_v(5);
      BOOST_REQUIRE(m.saver.save(m.session, prefix, 5).ok());  // "model.ckpt-5.npz"
      BOOST_TEST(newest_name(d) == "model.ckpt-5.npz");
      BOOST_TEST(checkpoint_files_present(prefix + "-5").size() == 1u);
      m.set_v(6);
      std::string failed_step;
      fail_durable_write(failing, &failed_step);
      StatusOr<std::string> result = m.sharded.save(m.session, prefix, 5);
      set_durable_fault_for_testing(nullptr);
      if (failed_step.empty()) {
        BOOST_TEST(result.ok(), result.status().to_string());
        BOOST_TEST(newest_name(d) == "model.ckpt-5");
        BOOST_TEST(checkpoint_files_present(prefix + "-5") ==
                   std::vector<std::string>{checkpoint_shard_file(prefix + "-5", 0, 1)});
        break;
      }
      BOOST_TEST_MESSAGE("failed: " << failed_step);
      BOOST_TEST(result.status().code() == Code::kResourceExhausted, result.status().to_string());
      const bool index_renamed =
          failed_step.starts_with("fsync the directory of") && failed_step.ends_with("/checkpoint");
      auto latest = value_or_throw(latest_checkpoint(d));
      BOOST_REQUIRE(latest.has_value());
      m.set_v(-1);
      BOOST_REQUIRE(m.saver.restore(m.session, *latest).ok());
      BOOST_TEST(m.v_now() == (index_renamed ? 6.0 : 5.0));
      // The shards of the failed save are gone, unless the index names them.
      BOOST_TEST(fs::exists(checkpoint_shard_file(prefix + "-5", 0, 1)) == index_renamed);
    }
  }
}

// What the old code did on a full disk: the index emptied, the next start at step 0. Now the
// next chief restores the newest complete checkpoint and says so.
BOOST_AUTO_TEST_CASE(a_chief_starting_on_an_emptied_index_restores_the_newest_checkpoint) {
  TempDir dir;
  const std::string d = dir.path().string();
  {
    SavedModel m;
    m.set_v(7);
    BOOST_REQUIRE(m.saver.save(m.session, default_checkpoint_prefix(d), 70).ok());
    m.set_v(8);
    BOOST_REQUIRE(m.saver.save(m.session, default_checkpoint_prefix(d), 80).ok());
  }
  write_file(dir.file("checkpoint"), "");
  SavedModel next;
  auto server = value_or_throw(Server::create_local_server());
  MonitoredTrainingSessionOptions options;
  options.master = server->target();
  options.checkpoint_dir = d;
  options.save_checkpoint_secs = 0;
  options.save_checkpoint_steps = 0;
  auto session = value_or_throw(MonitoredTrainingSession::create(next.root, options));
  BOOST_REQUIRE(session->restored_from().has_value());
  BOOST_TEST(fs::path(*session->restored_from()).filename() == "model.ckpt-80.npz");
  BOOST_TEST(value_or_throw(session->session().run(next.v.ref)).scalar<double>() == 8.0);
  BOOST_REQUIRE(session->close().ok());
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace troupe
