// `troupe hello`: TensorFlow's distributed "hello world" — a local server, a session, a string
// constant and a small MatMul — run through troupe's master session and device actors.
#include <iostream>

#include "troupe/actors/server.hpp"
#include "troupe/actors/session.hpp"
#include "troupe/apps/cli/commands.hpp"
#include "troupe/apps/cli/exit_code.hpp"
#include "troupe/graph/ops/ops.hpp"

namespace troupe::cli {

static int run_hello(const Args& args) {
  if (!args.empty()) {
    std::cerr << "troupe hello: unexpected argument '" << args[0] << "' (it takes none)\n";
    return 2;
  }
  auto server = Server::create_local_server();
  std::cout << "local server " << server->target() << " for " << server->server_def().task_name()
            << "\n";

  Scope root = Scope::new_root();
  auto hello = ops::Const(root, "Hello, distributed troupe!");
  auto a = ops::Const(root, {{2.f, 1.f}});
  auto b = ops::Const(root, {{1.f}, {2.f}});
  auto product = ops::MatMul(root, a, b);
  throw_if_error(root.status());

  Session session(server->target());
  std::cout << session.run(hello).scalar<std::string>() << "\n";
  std::cout << "matmul([[2, 1]], [[1], [2]]) = " << session.run(product).summarize() << "\n";
  return 0;
}

int hello_command(const Args& args) {
  return exit_code_of("hello", [&] { return run_hello(args); });
}

}  // namespace troupe::cli
