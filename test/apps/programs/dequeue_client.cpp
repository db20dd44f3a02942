// A client process for tests: opens a session on the server at argv[1], prints "dequeuing",
// and runs a step that dequeues from the shared FIFOQueue "q" on that server's task — which
// blocks until an item comes, so the test can kill this process mid-step.
#include <iostream>

#include "troupe/actors/session.hpp"
#include "troupe/graph/core/throwing.hpp"
#include "troupe/graph/ops/ops.hpp"

int main(int argc, char** argv) {
  using namespace troupe;
  if (argc != 2) {
    std::cerr << "usage: dequeue_client troupe://host:port\n";
    return 2;
  }
  try {
    Scope root = Scope::new_root();
    auto queue = ops::FIFOQueue(root.with_op_name("q"), {DataType::kInt64}, {.shared_name = "q"});
    auto item = ops::QueueDequeue(root, queue, {DataType::kInt64})[0];
    Session session = value_or_throw(Session::create(argv[1]));
    std::cout << "dequeuing" << std::endl;
    std::cout << "got " << value_or_throw(session.run(item)).scalar<int64_t>() << std::endl;
  } catch (const StatusError& e) {
    std::cerr << "dequeue_client: " << e.status().to_string() << "\n";
    return 1;
  }
  return 0;
}
