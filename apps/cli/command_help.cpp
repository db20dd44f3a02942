// The help of every `troupe` command: one table, read by `troupe help` (the list) and by each
// command's --help.
#include "troupe/apps/cli/flags.hpp"

namespace troupe::cli {

const std::vector<CommandHelp>& all_command_help() {
  static const std::vector<CommandHelp> table = {
      {"data",
       "write a data set as TFRecord files of tf.train.Example records (for tf.data)",
       "troupe data fashion-mnist --to=DIR [flags]",
       {"troupe data fashion-mnist --to=/tmp/fashion    # train-00000-of-00001.tfrecord, test-...",
        "troupe train --data=tfrecord:/tmp/fashion --epochs=1"}},
      {"hello",
       "run TensorFlow's distributed hello world (a string and a MatMul) on a local server",
       "troupe hello",
       {"troupe hello"}},
      {"k8s",
       "print the Kubernetes manifests of a troupe job: Services, StatefulSets, storage, "
       "TensorBoard",
       "troupe k8s --name=<job> --image=<image> [flags] -- <program> [args...]",
       {"troupe k8s --name=fashion --image=registry.example.com/troupe:0.1.0 --make_credentials "
        "-- troupe train --checkpoint_dir=/train_logs | kubectl apply -f -"}},
      {"launch",
       "run a program once per task of a local ps/worker cluster, with TF_CONFIG set for each",
       "troupe launch [flags] -- <program> [args...]",
       {"troupe launch --ps=2 --workers=2 -- troupe node    # a 4-task cluster until Ctrl-C",
        "troupe launch --workers=2 -- troupe train --epochs=1"}},
      {"node",
       "run one task of a cluster until SIGTERM or SIGINT",
       "troupe node [flags]",
       {"troupe node --ps_hosts=ps0:2222 --worker_hosts=worker0:2222 --job_name=ps "
        "--tls_cert=ps0.pem --tls_key=ps0.key --tls_ca=ca.pem",
        "TF_CONFIG='{\"cluster\": {...}, \"task\": {\"type\": \"worker\", \"index\": 0}}' "
        "troupe node --insecure"}},
      {"sim",
       "run a whole ps/worker cluster in this process",
       "troupe sim [flags]",
       {"troupe sim --ps=1 --workers=2 --insecure --check    # one step on every task, then exit",
        "troupe sim --deterministic --seed=7 --workers=4 --faults=2    # a replayable run"}},
      {"train",
       "train the Fashion-MNIST classifier (or a click-through model): a ps or worker task, or "
       "all in one process",
       "troupe train [flags]",
       {"troupe train --epochs=1    # in one process",
        "troupe launch --workers=2 -- troupe train    # 1 ps and 2 workers, as processes",
        "troupe launch --workers=2 -- troupe train --model=cnn --epochs=4    # a CNN",
        "troupe launch --ps=2 --workers=2 -- troupe train --model=wide_deep    # tables on 2 ps"}},
  };
  return table;
}

const CommandHelp* find_command_help(const std::string& command) {
  for (const CommandHelp& help : all_command_help()) {
    if (help.command == command) return &help;
  }
  return nullptr;
}

}  // namespace troupe::cli
