// `troupe hello`: TensorFlow's distributed "hello world" — a local server, a session, a string
// constant and a small MatMul — run through troupe's master session and device actors.
#include <iostream>

#include "troupe/actors/server.hpp"
#include "troupe/actors/session.hpp"
#include "troupe/apps/cli/commands.hpp"
#include "troupe/apps/cli/exit_code.hpp"
#include "troupe/apps/cli/flags.hpp"
#include "troupe/apps/cli/log_level_flag.hpp"
#include "troupe/graph/ops/ops.hpp"

namespace troupe::cli {

namespace {

Status hello() {
  TROUPE_ASSIGN_OR_RETURN(auto server, Server::create_local_server());
  std::cout << "local server " << server->target() << " for " << server->server_def().task_name()
            << "\n";

  Scope root = Scope::new_root();
  auto hello = ops::Const(root, "Hello, distributed troupe!");
  auto a = ops::Const(root, {{2.f, 1.f}});
  auto b = ops::Const(root, {{1.f}, {2.f}});
  auto product = ops::MatMul(root, a, b);
  TROUPE_RETURN_IF_ERROR(root.status());

  TROUPE_ASSIGN_OR_RETURN(Session session, Session::create(server->target()));
  TROUPE_ASSIGN_OR_RETURN(Tensor greeting, session.run(hello));
  std::cout << greeting.scalar<std::string>() << "\n";
  TROUPE_ASSIGN_OR_RETURN(Tensor result, session.run(product));
  std::cout << "matmul([[2, 1]], [[1], [2]]) = " << result.summarize() << "\n";
  return Status::OK();
}

}  // namespace

static int run_hello(const Args& args) {
  FlagSet flags(*find_command_help("hello"));
  add_log_level_flag(flags);
  if (auto exit_code = flags.parse_command_line(args)) return *exit_code;
  if (auto exit_code = apply_log_level_flag(flags, "hello")) return *exit_code;
  Status status = hello();
  if (status.ok()) return 0;
  std::cerr << "troupe hello: " << status.to_string() << "\n";
  return 1;
}

int hello_command(const Args& args) {
  return exit_code_of("hello", [&] { return run_hello(args); });
}

}  // namespace troupe::cli
