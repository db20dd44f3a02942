// `troupe data fashion-mnist --to=DIR`: writes Fashion-MNIST (read from its IDX files) as
// TFRecord files of tf.train.Example records (fashion_mnist_records.hpp), for `troupe train
// --data=tfrecord:DIR` and for TensorFlow programs' tf.data pipelines.
#include <iostream>

#include "troupe/apps/cli/commands.hpp"
#include "troupe/apps/cli/exit_code.hpp"
#include "troupe/apps/data/fashion_mnist_records.hpp"
#include "troupe/apps/cli/flags.hpp"
#include "troupe/apps/cli/log_level_flag.hpp"

namespace troupe::cli {

static int run_data(const Args& args) {
  FlagSet flags(*find_command_help("data"));
  flags.add_string("to", "", "directory to write the TFRecord files to (required)");
  flags.add_string("data_dir", kDefaultFashionMnistDir, "directory of the IDX files");
  flags.add_int("shards", 1, "files per split; example j goes to file j % shards");
  add_log_level_flag(flags);
  auto usage = [](const std::string& message) {
    std::cerr << "troupe data: " << message << "\n";
    return 2;
  };
  if (FlagSet::asks_for_help(args)) {
    std::cout << flags.help();
    return 0;
  }
  if (Status parsed = flags.parse(args); !parsed.ok()) return usage(parsed.message());
  if (auto exit_code = apply_log_level_flag(flags, "data")) return *exit_code;
  if (flags.positional().size() != 1 || flags.positional()[0] != "fashion-mnist") {
    return usage("expected the data set to write: troupe data fashion-mnist --to=DIR");
  }
  if (flags.get_string("to").empty()) return usage("--to=DIR is required");
  if (flags.get_int("shards") < 1 || flags.get_int("shards") > 10000) {
    return usage("--shards=" + std::to_string(flags.get_int("shards")) + ": expected 1 to 10000");
  }
  for (const char* split : {"train", "test"}) {
    auto data = load_fashion_mnist(flags.get_string("data_dir"), std::string(split) == "train");
    if (!data.ok()) {
      std::cerr << "troupe data: " << data.status().to_string() << "\n";
      return 1;
    }
    auto files = write_fashion_mnist_records(*data, flags.get_string("to"), split,
                                             static_cast<int>(flags.get_int("shards")));
    if (!files.ok()) {
      std::cerr << "troupe data: " << files.status().to_string() << "\n";
      return 1;
    }
    std::cout << "troupe data: " << data->size() << " " << split << " examples in " << files->size()
              << " file" << (files->size() == 1 ? "" : "s") << " (" << files->front()
              << (files->size() > 1 ? ", ..." : "") << ")\n";
  }
  return 0;
}

int data_command(const Args& args) {
  return exit_code_of("data", [&] { return run_data(args); });
}

}  // namespace troupe::cli
