// word_count_client: task worker:0 of the cluster, which asks the counter role (task counter:0)
// to count the words of each argument.
//
//   word_count_client cluster.json "the quick brown fox" "jumps"
#include <chrono>
#include <fstream>
#include <iostream>
#include <sstream>

#include <caf/all.hpp>

#include <troupe/actors/server.hpp>
#include <troupe/graph/cluster/cluster_spec.hpp>
#include <troupe/graph/cluster/server_def.hpp>

#include "word_count_role.hpp"

namespace {

int fail(const std::string& what) {
  std::cerr << "word_count_client: " << what << "\n";
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) return fail("usage: word_count_client CLUSTER_JSON TEXT...");
  std::ifstream file(argv[1]);
  if (!file) return fail(std::string("cannot read ") + argv[1]);
  std::stringstream json;
  json << file.rdbuf();

  if (troupe::Status status = word_count::register_word_count_role("counter"); !status.ok())
    return fail(status.to_string());
  auto cluster = troupe::ClusterSpec::from_json(json.str());
  if (!cluster.ok()) return fail(cluster.status().to_string());
  auto def = troupe::ServerDef::create(*cluster, "worker", 0);
  if (!def.ok()) return fail(def.status().to_string());
  auto server = troupe::Server::create(*def);
  if (!server.ok()) return fail(server.status().to_string());
  auto role = (*server)->find_role("counter", 0);
  if (!role.ok()) return fail(role.status().to_string());

  caf::scoped_actor self{(*server)->system()};
  int exit_code = 0;
  for (int i = 2; i < argc; ++i) {
    self->request(*role, std::chrono::seconds(10), word_count::count_words_atom::value,
                  word_count::CountWords{argv[i]})
        .receive(
            [&](const word_count::WordCount& count) {
              std::cout << count.words << " words (total " << count.total << "), counted by "
                        << count.counted_by << std::endl;
            },
            [&](const caf::error& error) {
              exit_code = fail("asking the counter: " + (*server)->system().render(error));
            });
  }
  (*server)->stop();
  return exit_code;
}
