// `troupe train` end to end, small: in one process, as a launched 1 ps + 2 worker cluster
// (asynchronous and synchronous), interrupted and resumed from its checkpoint, and its errors.
// Needs Debian's dataset-fashion-mnist (installed by scripts/install-deps.sh); skipped without.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>
#include <regex>

#include <boost/test/unit_test.hpp>

#include "apps/child_process.hpp"
#include "apps/training/event_scalars.hpp"
#include "free_ports.hpp"
#include "temp_files.hpp"
#include "troupe/apps/data/fashion_mnist.hpp"
#include "troupe/apps/training/saver.hpp"
#include "troupe/graph/core/throwing.hpp"
#include "troupe/graph/formats/checkpoint_files.hpp"

namespace troupe {
using testing::TempDir;
namespace fs = std::filesystem;
using testing::ChildProcess;
using testing::run_process;
using testing::scalars_in;
using testing::steps_of;

namespace {

constexpr int kTimeoutMs = 240000;

bool have_data() {
  bool present = fs::exists(fs::path(kDefaultFashionMnistDir) / "train-images-idx3-ubyte.gz");
  if (!present) BOOST_TEST_MESSAGE("skipped: Fashion-MNIST is not installed");
  return present;
}

// The test accuracy the chief printed, or -1.
double accuracy_in(const std::string& out) {
  std::smatch match;
  if (!std::regex_search(out, match, std::regex("test accuracy ([0-9.]+)"))) return -1;
  return std::stod(match[1]);
}

// Small and quick: one hidden layer of 32, two epochs of big batches.
std::vector<std::string> small_model(const fs::path& dir, int epochs = 2) {
  return {"--hidden=32",
          "--batch_size=500",
          "--epochs=" + std::to_string(epochs),
          "--save_checkpoint_steps=20",
          "--log_every=1000",
          "--checkpoint_dir=" + dir.string()};
}

std::vector<std::string> launch(const std::vector<std::string>& train_flags) {
  std::vector<std::string> argv = {TROUPE_CLI, "launch", "--ps=1", "--workers=2",
                                   "--",       "troupe", "train"};
  argv.insert(argv.end(), train_flags.begin(), train_flags.end());
  return argv;
}

// Reads the job's output until the checkpoint index in `dir` names a checkpoint past the
// first (true: resuming from it must not start at step 0), or the job ends or 4 minutes pass
// (false). The index, not the files, is what a restart reads: the shards may exist before the
// index names them.
bool wait_for_checkpoint(ChildProcess& job, const fs::path& dir) {
  for (int i = 0; i < 2400 && !job.output_closed(); ++i) {
    job.wait_for(std::string(1, '\0'), 100);  // keep reading the job's output for 100 ms
    auto latest = latest_checkpoint(dir.string());
    if (latest.ok() && latest->has_value() && fs::path(**latest).filename() != "model.ckpt-0") {
      return true;
    }
  }
  return false;
}

// Once `job` has written its first checkpoint after step 0, SIGKILLs its task `task_name`
// ("/job:ps/replica:0/task:0") by the pid launch printed for it.
void kill_task_mid_training(ChildProcess& job, const fs::path& dir, const std::string& task_name) {
  BOOST_REQUIRE_MESSAGE(wait_for_checkpoint(job, dir), job.output());
  std::smatch match;
  std::string out = job.output();
  BOOST_REQUIRE_MESSAGE(std::regex_search(out, match, std::regex(task_name + " is pid ([0-9]+)")),
                        out);
  BOOST_REQUIRE(::kill(std::stoi(match[1]), SIGKILL) == 0);
}

// The launched job ended well after task `task_name` was killed: the launcher restarted it and
// the chief's session recovered from a checkpoint.
void check_recovered_from_killed_task(const testing::ProcessResult& result,
                                      const std::string& task_name) {
  BOOST_TEST(result.exit_code == 0, result.out);
  BOOST_TEST(
      result.out.find("task " + task_name +
                      " failed: killed by signal 9; restarting it (1 of 2)") != std::string::npos,
      result.out);
  BOOST_TEST(
      std::regex_search(result.out, std::regex(R"(\[worker0\] \S+ \S+ info troupe: training )"
                                               R"(session recovered from)")),
      result.out);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(train)

BOOST_AUTO_TEST_CASE(in_one_process) {
  if (!have_data()) return;
  TempDir dir;
  std::vector<std::string> argv = {TROUPE_CLI, "train"};
  auto flags = small_model(dir.path());
  argv.insert(argv.end(), flags.begin(), flags.end());
  auto result = run_process(argv, kTimeoutMs);
  BOOST_TEST(result.exit_code == 0, result.out);
  BOOST_TEST(accuracy_in(result.out) > 0.75, result.out);
  BOOST_TEST(fs::exists(dir.path() / "checkpoint"));
  // 2 * 60000 / 500 steps; the ps wrote the variables (sharded checkpoints, the default).
  BOOST_TEST(fs::exists(dir.path() / "model.ckpt-240.shard-00000-of-00001.npz"));

  // TensorBoard: the training scalars with the learning rate and rates, and an evaluation on the
  // test set per epoch in eval/ under the same tags; the last one is the result printed.
  auto scalars = scalars_in(dir.path());
  for (const char* tag : {"loss", "accuracy", "learning_rate", "global_step/sec", "examples/sec"}) {
    BOOST_TEST(!scalars[tag].empty(), tag);
  }
  for (const auto& event : scalars["learning_rate"])
    BOOST_TEST(event.value == 0.0005f);
  auto evaluations = scalars_in(dir.path() / "eval");
  for (const char* tag : {"accuracy", "loss"}) {
    BOOST_TEST(steps_of(evaluations[tag]) == (std::vector<int64_t>{120, 240}),
               boost::test_tools::per_element());
  }
  BOOST_TEST(evaluations["accuracy"].back().value == static_cast<float>(accuracy_in(result.out)),
             boost::test_tools::tolerance(1e-4f));
  BOOST_TEST(
      std::regex_search(result.out, std::regex(R"(troupe train: test set evaluation at step 120: )"
                                               R"(accuracy=0\.[0-9]+ loss=[0-9.]+\n)")),
      result.out);
  // Run by hand, progress is lines for a person: a tenth of the job each.
  BOOST_TEST(
      std::regex_search(result.out, std::regex(R"(troupe train: step 120/240 \(50%\) )"
                                               R"(\[\d+:\d\d<\d+:\d\d, [0-9.]+[kM]? steps/s, )"
                                               R"([0-9.]+[kM]? examples/s\] loss=)")),
      result.out);
  BOOST_TEST(result.out.find("troupe-progress") == std::string::npos, result.out);
}

// A small CNN (8 and 16 filters, 64 dense units, dropout) learns well above chance in one
// epoch; the dropout placeholder is fed only by the training steps (the evaluation runs
// without it).
BOOST_AUTO_TEST_CASE(a_convolutional_network_in_one_process) {
  if (!have_data()) return;
  TempDir dir;
  auto result = run_process({TROUPE_CLI, "train", "--model=cnn", "--filters=8", "--dense_units=64",
                             "--batch_size=100", "--epochs=1", "--learning_rate=0.002",
                             "--log_every=1000", "--checkpoint_dir=" + dir.path().string()},
                            kTimeoutMs);
  BOOST_TEST(result.exit_code == 0, result.out);
  BOOST_TEST(accuracy_in(result.out) > 0.8, result.out);
  BOOST_TEST(fs::exists(dir.path() / "model.ckpt-600.shard-00000-of-00001.npz"));
}

// Two towers (CPU:0 and CPU:1, each on half the batch, gradients averaged) compute the update one
// device computes with the whole batch: after an epoch, the same test accuracy and loss up to
// float rounding (the sums run in another order).
BOOST_AUTO_TEST_CASE(towers_train_as_one_device_with_the_whole_batch) {
  if (!have_data()) return;
  auto train = [](int towers) {
    TempDir dir;
    auto result = run_process(
        {TROUPE_CLI, "train", "--hidden=32", "--batch_size=500", "--epochs=1", "--optimizer=sgd",
         "--learning_rate=0.1", "--log_every=1000", "--save_checkpoint_steps=100000",
         "--towers=" + std::to_string(towers), "--checkpoint_dir=" + dir.path().string()},
        kTimeoutMs);
    BOOST_TEST_REQUIRE(result.exit_code == 0, result.out);
    std::smatch match;
    BOOST_TEST_REQUIRE(
        std::regex_search(result.out, match,
                          std::regex("test accuracy ([0-9.]+), test loss ([0-9.]+)")),
        result.out);
    return std::make_pair(std::stod(match[1]), std::stod(match[2]));
  };
  auto [one_accuracy, one_loss] = train(1);
  auto [two_accuracy, two_loss] = train(2);
  BOOST_TEST(one_accuracy > 0.7);
  BOOST_TEST(std::abs(two_accuracy - one_accuracy) <= 0.002,
             "1 tower: " << one_accuracy << ", 2 towers: " << two_accuracy);
  BOOST_TEST(std::abs(two_loss - one_loss) <= 0.002 * one_loss,
             "1 tower: " << one_loss << ", 2 towers: " << two_loss);
}

BOOST_AUTO_TEST_CASE(as_a_launched_cluster_and_resumed) {
  if (!have_data()) return;
  TempDir dir;
  // Interrupt the job once it has written a checkpoint past the first.
  ChildProcess job(launch(small_model(dir.path())));
  BOOST_REQUIRE_MESSAGE(wait_for_checkpoint(job, dir.path()), job.output());
  auto interrupted = job.stop(SIGTERM, 30000);
  BOOST_TEST(interrupted.exit_code == 130, interrupted.out);
  BOOST_TEST(interrupted.out.find("troupe launch: interrupted") != std::string::npos);
  // The chief saved the step it reached before the ps was stopped.
  std::smatch stopped;
  BOOST_REQUIRE_MESSAGE(
      std::regex_search(interrupted.out, stopped,
                        std::regex(R"(\[worker0\] troupe train: stopped by SIGTERM at step )"
                                   R"([0-9]+, checkpoint (\S+))")),
      interrupted.out);
  auto saved = latest_checkpoint(dir.path().string());
  BOOST_REQUIRE(saved.ok() && saved->has_value());
  BOOST_TEST(**saved == stopped[1].str(), interrupted.out);

  // Run again: the chief restores and training finishes from there.
  auto resumed = run_process(launch(small_model(dir.path())), kTimeoutMs);
  BOOST_TEST(resumed.exit_code == 0, resumed.out);
  BOOST_TEST(resumed.out.find("restored from") != std::string::npos, resumed.out);
  BOOST_TEST(resumed.out.find("at step 0 of") == std::string::npos, resumed.out);
  BOOST_TEST(accuracy_in(resumed.out) > 0.75, resumed.out);
  BOOST_TEST(resumed.out.find("troupe launch: done") != std::string::npos);

  // Once more: nothing left to train, the chief only evaluates.
  auto again = run_process(launch(small_model(dir.path())), kTimeoutMs);
  BOOST_TEST(again.exit_code == 0, again.out);
  // It says so, not "at step 241 of 240" (asynchronous workers may overshoot by a step each).
  std::smatch match;
  BOOST_REQUIRE_MESSAGE(
      std::regex_search(again.out, match,
                        std::regex(R"(\(chief\): training is done \(step ([0-9]+), 240 to )"
                                   R"(train\), restored from .*; evaluating)")),
      again.out);
  BOOST_TEST(std::stoi(match[1]) >= 240, again.out);
  BOOST_TEST(again.out.find(" of 240") == std::string::npos, again.out);
  // The other worker may still apply an update after the chief's last save (asynchronous
  // training), so the restored model is the evaluated one up to a step or two.
  BOOST_TEST(std::abs(accuracy_in(again.out) - accuracy_in(resumed.out)) < 0.01, again.out);
}

// As TensorFlow's CheckpointSaverHook at end: a stopped chief saves the step it reached.
BOOST_AUTO_TEST_CASE(sigint_makes_the_chief_write_a_final_checkpoint) {
  if (!have_data()) return;
  TempDir dir;
  ChildProcess train({TROUPE_CLI, "train", "--hidden=32", "--batch_size=100", "--epochs=5",
                      "--save_checkpoint_steps=100000", "--log_every=5",
                      "--checkpoint_dir=" + dir.path().string()});
  BOOST_REQUIRE_MESSAGE(train.wait_for_count("step = ", 3, kTimeoutMs), train.output());
  auto result = train.stop(SIGINT, 60000);
  BOOST_TEST(result.exit_code == 130, result.out);
  std::smatch stopped;
  BOOST_REQUIRE_MESSAGE(
      std::regex_search(result.out, stopped,
                        std::regex(R"(stopped by SIGINT at step ([0-9]+), checkpoint (\S+))")),
      result.out);
  BOOST_TEST(std::stoi(stopped[1]) >= 10, result.out);
  auto latest = value_or_throw(latest_checkpoint(dir.path().string()));
  BOOST_REQUIRE(latest.has_value());
  BOOST_TEST(*latest == stopped[2].str(), result.out);
  BOOST_TEST(fs::path(*latest).filename().string() == "model.ckpt-" + stopped[1].str());
}

BOOST_AUTO_TEST_CASE(sigint_ends_a_workers_wait_for_the_chief) {
  if (!have_data()) return;
  ClusterSpec cluster = testing::free_port_cluster({{"ps", 1}, {"worker", 2}});
  std::vector<std::string> hosts = {"--ps_hosts=" + cluster.task_address("ps", 0).value(),
                                    "--worker_hosts=" + cluster.task_address("worker", 0).value() +
                                        "," + cluster.task_address("worker", 1).value()};
  auto task = [&](const std::string& job, int index) {
    std::vector<std::string> argv = {TROUPE_CLI, "train", "--insecure", "--job_name=" + job,
                                     "--task_index=" + std::to_string(index)};
    argv.insert(argv.end(), hosts.begin(), hosts.end());
    return argv;
  };
  ChildProcess ps(task("ps", 0));
  // Worker 1 waits for a chief that never comes.
  ChildProcess worker(task("worker", 1));
  BOOST_REQUIRE_MESSAGE(
      worker.wait_for("waiting for the chief to initialise the model", kTimeoutMs),
      worker.output());
  auto result = worker.stop(SIGINT, 10000);
  BOOST_TEST(result.exit_code == 130, result.out);
  BOOST_TEST(result.out.find("troupe train: stopped by SIGINT while waiting for the chief") !=
                 std::string::npos,
             result.out);
  ps.stop(SIGTERM, 10000);
}

// A chief whose ps is gone for good recovers for up to --recovery_timeout_ms; the first SIGTERM
// ends that at once with the "stopped by" line, saying that no final checkpoint could be written
// and which one a restart resumes from.
BOOST_AUTO_TEST_CASE(sigterm_ends_a_chiefs_recovery_from_a_lost_ps) {
  if (!have_data()) return;
  TempDir dir;
  ClusterSpec cluster = testing::free_port_cluster({{"ps", 1}, {"worker", 1}});
  auto task = [&](const std::string& job) {
    std::vector<std::string> argv = {TROUPE_CLI,
                                     "train",
                                     "--insecure",
                                     "--job_name=" + job,
                                     "--task_index=0",
                                     "--ps_hosts=" + cluster.task_address("ps", 0).value(),
                                     "--worker_hosts=" + cluster.task_address("worker", 0).value()};
    if (job == "worker") {
      auto flags = small_model(dir.path(), /*epochs=*/20);
      argv.insert(argv.end(), flags.begin(), flags.end());
    }
    return argv;
  };
  ChildProcess ps(task("ps"));
  ChildProcess chief(task("worker"));
  BOOST_REQUIRE_MESSAGE(wait_for_checkpoint(chief, dir.path()), chief.output());
  ps.stop(SIGKILL, 5000);
  BOOST_REQUIRE_MESSAGE(chief.wait_for("recovering the training session", kTimeoutMs),
                        chief.output());
  auto since = std::chrono::steady_clock::now();
  auto result = chief.stop(SIGTERM, 60000);
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                                  since)
                .count();
  BOOST_TEST(result.exit_code == 143, result.out);
  BOOST_TEST(ms < 10000, "stopped " << ms << " ms after SIGTERM");
  BOOST_TEST(
      std::regex_search(result.out,
                        std::regex(R"(troupe train: stopped by SIGTERM without a final checkpoint )"
                                   R"(\(Cancelled: stopped while recovering .*\); )"
                                   R"(the newest is \S+)")),
      result.out);
}

BOOST_AUTO_TEST_CASE(recovers_from_a_killed_ps) {
  if (!have_data()) return;
  TempDir dir;
  std::vector<std::string> argv = {TROUPE_CLI, "launch", "--max_restarts=2",
                                   "--",       "troupe", "train"};
  auto flags = small_model(dir.path(), /*epochs=*/4);  // long enough to be killed in the middle
  argv.insert(argv.end(), flags.begin(), flags.end());
  ChildProcess job(argv);
  kill_task_mid_training(job, dir.path(), "/job:ps/replica:0/task:0");

  // The launcher restarts the ps (empty); the workers' sessions recover, the chief restores
  // the last checkpoint, and training finishes.
  auto result = job.stop(0, kTimeoutMs);
  check_recovered_from_killed_task(result, "/job:ps/replica:0/task:0");
  BOOST_TEST(accuracy_in(result.out) > 0.75, result.out);
  BOOST_TEST(result.out.find("troupe launch: done") != std::string::npos, result.out);
}

// The wide-and-deep model (--model=wide_deep) on 2 ps tasks, each holding one shard of each
// table, and 2 workers; one ps is killed mid-training and restarted empty: the chief restores
// the last checkpoint (each table whole in it), and the test AUC ends within 0.01 of the
// planted model's. Needs no data set.
BOOST_AUTO_TEST_CASE(wide_deep_on_two_ps_recovers_from_a_killed_ps_and_reaches_the_planted_auc) {
  TempDir dir;
  ChildProcess job({TROUPE_CLI, "launch", "--ps=2", "--workers=2", "--max_restarts=2", "--",
                    "troupe", "train", "--model=wide_deep", "--save_checkpoint_steps=1000",
                    "--log_every=100000", "--checkpoint_dir=" + dir.path().string()});
  kill_task_mid_training(job, dir.path(), "/job:ps/replica:0/task:1");
  auto result = job.stop(0, kTimeoutMs);
  check_recovered_from_killed_task(result, "/job:ps/replica:0/task:1");
  std::smatch match;
  BOOST_REQUIRE_MESSAGE(
      std::regex_search(result.out, match,
                        std::regex(R"(test AUC ([0-9.]+) \(the planted model's ([0-9.]+)\))")),
      result.out);
  const double auc = std::stod(match[1]), planted = std::stod(match[2]);
  BOOST_TEST(planted - auc <= 0.01, "AUC " << auc << ", planted " << planted);
  auto latest = value_or_throw(latest_checkpoint(dir.path().string()));
  BOOST_REQUIRE(latest.has_value());
  std::map<std::string, std::string> saved;  // name -> shape
  for (const auto& [name, tensor] : value_or_throw(read_checkpoint(*latest)))
    saved[name] = tensor.shape().to_string();
  // The tables and their slots whole, whatever the number of shards.
  BOOST_TEST(saved["deep/embeddings"] == "[1000000,16]");
  BOOST_TEST(saved["deep/embeddings/Adagrad"] == "[1000000,16]");
  BOOST_TEST(saved["wide/weights"] == "[1000000,1]");
}

BOOST_AUTO_TEST_CASE(synchronously) {
  if (!have_data()) return;
  TempDir dir;
  auto flags = small_model(dir.path());
  flags.push_back("--sync_replicas");
  auto result = run_process(launch(flags), kTimeoutMs);
  BOOST_TEST(result.exit_code == 0, result.out);
  // Synchronous steps take 2 x 500 examples: 2 epochs are 120 global steps.
  BOOST_TEST(result.out.find("at step 0 of 120") != std::string::npos, result.out);
  BOOST_TEST(accuracy_in(result.out) > 0.7, result.out);
}

// Backup workers: 3 workers, 2 gradients per synchronous step. Worker 2 is killed mid-training;
// the other two go on, the launcher restarts it, and it rejoins.
BOOST_AUTO_TEST_CASE(synchronously_with_a_backup_worker_when_one_is_lost) {
  if (!have_data()) return;
  TempDir dir;
  auto flags =
      small_model(dir.path(), /*epochs=*/12);  // long enough to lose a worker in the middle
  std::vector<std::string> argv = {
      TROUPE_CLI, "launch", "--ps=1", "--workers=3",     "--max_restarts=1",
      "--",       "troupe", "train",  "--sync_replicas", "--replicas_to_aggregate=2"};
  argv.insert(argv.end(), flags.begin(), flags.end());
  ChildProcess job(argv);
  // Two workers are enough to train: wait until the third has joined before killing it.
  BOOST_REQUIRE_MESSAGE(
      job.wait_for("[worker2] troupe train: /job:worker/task:2 at step", kTimeoutMs), job.output());
  kill_task_mid_training(job, dir.path(), "/job:worker/replica:0/task:2");

  auto result = job.stop(0, kTimeoutMs);
  BOOST_TEST(result.exit_code == 0, result.out);
  BOOST_TEST(result.out.find("task /job:worker/replica:0/task:2 failed: killed by signal 9; "
                             "restarting it (1 of 1)") != std::string::npos,
             result.out);
  // It started twice: the second time it joined the training in progress.
  BOOST_TEST(
      testing::count_of(result.out, "[worker2] troupe train: /job:worker/task:2 at step") == 2u,
      result.out);
  BOOST_TEST(accuracy_in(result.out) > 0.75, result.out);
  BOOST_TEST(result.out.find("troupe launch: done") != std::string::npos, result.out);
}

BOOST_AUTO_TEST_CASE(bad_inputs_are_one_line_errors) {
  auto refused = [](const std::vector<std::string>& flags, const std::string& needle,
                    const std::vector<std::string>& env = {}) {
    std::vector<std::string> argv = {TROUPE_CLI, "train", "--insecure"};
    argv.insert(argv.end(), flags.begin(), flags.end());
    auto result = run_process(argv, 60000, env);
    BOOST_TEST(result.exit_code != 0, result.out);
    BOOST_TEST(result.out.find(needle) != std::string::npos,
               "'" << needle << "' not in: " << result.out);
  };
  refused({"--optimizer=rmsprop"}, "--optimizer=rmsprop: expected adam, sgd, momentum or adagrad");
  refused({"--hidden=256,0"}, "--hidden=256,0: '0' is not a layer size >= 1");
  refused({"--model=resnet"}, "--model=resnet: expected mlp, cnn or wide_deep");
  refused({"--model=wide_deep", "--table_rows=25"},
          "--table_rows=25: expected at least 26 (a row per categorical feature)");
  refused({"--model=wide_deep", "--zipf=1"}, "--zipf=1: expected a Zipf exponent above 1");
  refused({"--model=wide_deep", "--deep_units=400,x"},
          "--deep_units=400,x: 'x' is not a layer size >= 1");
  refused({"--model=wide_deep", "--data=idx"},
          "--data=idx: --model=wide_deep draws its own examples");
  refused({"--model=wide_deep", "--towers=2"}, "--towers=2 with --model=wide_deep: not supported");
  refused({"--train_steps=-1"}, "--train_steps=-1 is negative");
  refused({"--model=cnn", "--dropout=1"}, "--dropout=1: expected a rate in [0, 1)");
  refused({"--model=cnn", "--filters=0"}, "--filters=0 and --dense_units=1024 must be >= 1");
  refused({"--learning_rate=fast"}, "--learning_rate=fast is not a number");
  refused({"--epochs=0"}, "--batch_size and --epochs must be >= 1");
  refused({"--eval_every_steps=-1"},
          "--eval_every_steps=-1 is negative (expected steps >= 0; 0 evaluates once per epoch)");
  refused({"--log_level=loud"},
          "troupe train: --log_level: unknown log level 'loud' (expected "
          "debug, info, warning, error or off)");
  refused({"--data_dir=/nonexistent"}, "sudo apt-get install dataset-fashion-mnist");
  refused({"--worker_hosts=127.0.0.1:1", "--evaluator_hosts=127.0.0.1:2", "--job_name=evaluator"},
          "job 'evaluator' has no part in training");
  refused({"--towers=0"}, "--towers=0: expected 1 to 256");
  refused({"--towers=3", "--batch_size=128"},
          "--batch_size=128 is not a multiple of --towers=3 (each tower takes an equal slice of "
          "the batch)");
  refused({"--tower_device=tpu"}, "--tower_device=tpu: expected cpu or gpu");
  refused({"--towers=2", "--sync_replicas"}, "--towers=2 with --sync_replicas: not supported yet");
  refused({"--cpu_devices=-1"}, "cpu_devices is -1");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace troupe
