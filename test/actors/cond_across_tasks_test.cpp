// A cond whose branches run on other tasks than its predicate, as TensorFlow's: the untaken
// branch's value crosses to its device as a dead value, so its ops (and what hangs on them by
// control edges) never run there, and the Merge on the first task forwards the taken one.
#include <boost/test/unit_test.hpp>

#include "status_checks.hpp"
#include "troupe/actors/session.hpp"
#include "troupe/actors/sim/local_cluster.hpp"
#include "troupe/graph/ops/ops.hpp"

namespace troupe {

BOOST_AUTO_TEST_SUITE(cond_across_tasks)

BOOST_AUTO_TEST_CASE(each_branch_runs_on_its_task_and_the_other_never_runs) {
  auto cluster = value_or_throw(LocalCluster::start(1, 1));
  Scope root = Scope::new_root();
  Scope worker = root.with_device("/job:worker/task:0");
  Scope ps = root.with_device("/job:ps/task:0");
  Output pred = ops::Placeholder(worker.with_op_name("pred"), DataType::kBool, PartialShape({}));
  Output x = ops::Const(worker.with_op_name("x"), 2.f);
  Output counter = ops::Variable(ps.with_op_name("counter"), PartialShape({}), DataType::kInt32);
  Operation init = ops::Assign(ps, counter, 0).op();
  auto [pf, pt] = ops::Switch(worker, pred, pred);
  Output pivot_t = ops::Identity(worker.with_op_name("pivot_t"), pt);
  Output pivot_f = ops::Identity(worker.with_op_name("pivot_f"), pf);
  auto [x_f, x_t] = ops::Switch(worker, x, pred);
  // The true branch on the ps, the false one on the worker; each bumps the counter on the ps.
  Scope true_side = ps.with_control_dependencies({pivot_t.op()});
  Scope false_side = worker.with_control_dependencies({pivot_f.op()});
  Output true_value = ops::Mul(true_side.with_op_name("times_ten"), x_t, 10.f);
  Output false_value = ops::Add(false_side.with_op_name("plus_one"), x_f, 1.f);
  Output bump_t = ops::AssignAdd(ps.with_control_dependencies({pivot_t.op()}), counter, 1);
  Output bump_f = ops::AssignAdd(ps.with_control_dependencies({pivot_f.op()}), counter, 100);
  Output result = ops::Merge(worker.with_op_name("result"), {true_value, false_value}).output;
  Operation effects = ops::Merge(worker.with_op_name("effects"),
                                 {ops::Identity(worker, bump_t), ops::Identity(worker, bump_f)})
                          .output.op();

  Session session = value_or_throw(Session::create(value_or_throw(cluster->target("worker", 0))));
  BOOST_REQUIRE(session.run_targets({init}).ok());
  auto taken = value_or_throw(session.run({{pred, Tensor(true)}}, {result}, {effects}));
  BOOST_TEST(taken.at(0).scalar<float>() == 20.f);
  BOOST_TEST(value_or_throw(session.run(counter)).scalar<int32_t>() == 1);
  auto other = value_or_throw(session.run({{pred, Tensor(false)}}, {result}, {effects}));
  BOOST_TEST(other.at(0).scalar<float>() == 3.f);
  BOOST_TEST(value_or_throw(session.run(counter)).scalar<int32_t>() == 101);
  // Fetching the untaken side's value is still an error naming it.
  Status dead = session.run({{pred, Tensor(false)}}, {true_value}).status();
  testing::check_error(dead, Code::kInvalidArgument, "branch of a cond that was not taken");
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace troupe
