// Tests for the optimizers as graph builders: they train a small quadratic to its minimum,
// keep slot variables next to the variable, and advance the global step.
#include <set>

#include "devices/run_graph.hpp"
#include "troupe/graph/learning_rate_decay.hpp"
#include "troupe/graph/optimizers.hpp"

namespace troupe {
using testing::check_error;
using testing::run_graph;

namespace {

// loss = sum((w - target)^2), w starting at 0.
struct Quadratic {
  Scope s = Scope::new_root();
  Device device{"/job:localhost/replica:0/task:0/device:CPU:0", "CPU", 1};
  ModelVariable w = make_variable(s, "w", Tensor::from_vector<double>({0, 0}));
  ModelVariable step = get_or_create_global_step(s);
  Output loss =
      ops::Sum(s, ops::Square(s, ops::Sub(s, w.ref, Tensor::from_vector<double>({1, -2}))), {0});

  void init() {
    BOOST_REQUIRE(run_graph(s, {}, {}, {global_variables_initializer(s)}, &device).ok());
  }
  std::vector<Tensor> fetch(const std::vector<Output>& outs) {
    auto r = run_graph(s, outs, {}, {}, &device);
    BOOST_REQUIRE_MESSAGE(r.ok(), r.status().to_string());
    return *r;
  }
  void train(const Operation& op, int steps) {
    for (int i = 0; i < steps; ++i)
      BOOST_REQUIRE(run_graph(s, {}, {}, {op}, &device).ok());
  }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(optimizers)

BOOST_AUTO_TEST_CASE(gradient_descent_step_is_exact) {
  Quadratic q;
  GradientDescentOptimizer sgd(0.25);
  auto train = sgd.minimize(q.s, q.loss, q.step.ref);
  BOOST_REQUIRE_MESSAGE(train.ok(), train.status().to_string());
  q.init();
  q.train(*train, 1);
  // grad = 2 (w - target) = [-2, 4]; w = 0 - 0.25 * grad = [0.5, -1].
  auto values = q.fetch({q.w.ref, q.step.ref});
  BOOST_TEST(values[0].to_vector<double>() == (std::vector<double>{0.5, -1}));
  BOOST_TEST(values[1].scalar<int64_t>() == 1);
}

BOOST_AUTO_TEST_CASE(every_optimizer_reaches_the_minimum) {
  struct Case {
    std::string name;
    std::function<std::unique_ptr<Optimizer>()> make;
    int steps;
  };
  std::vector<Case> cases = {
      {"sgd", [] { return std::make_unique<GradientDescentOptimizer>(0.1); }, 200},
      {"momentum", [] { return std::make_unique<MomentumOptimizer>(0.05, 0.9); }, 300},
      {"adagrad", [] { return std::make_unique<AdagradOptimizer>(0.5); }, 500},
      {"adam", [] { return std::make_unique<AdamOptimizer>(0.1); }, 500},
      {"rmsprop", [] { return std::make_unique<RMSPropOptimizer>(0.01); }, 500},
      {"rmsprop_centered_momentum",
       [] {
         return std::make_unique<RMSPropOptimizer>(
             0.01, RMSPropOptimizer::Options{.momentum = 0.5, .centered = true});
       },
       500},
      {"adadelta", [] { return std::make_unique<AdadeltaOptimizer>(50.0, 0.95, 1e-6); }, 500},
      {"ftrl", [] { return std::make_unique<FtrlOptimizer>(1.0); }, 300},
      {"proximal_sgd", [] { return std::make_unique<ProximalGradientDescentOptimizer>(0.1); }, 200},
      {"proximal_adagrad", [] { return std::make_unique<ProximalAdagradOptimizer>(0.5); }, 500},
  };
  for (const Case& c : cases) {
    Quadratic q;
    auto optimizer = c.make();
    auto train = optimizer->minimize(q.s, q.loss, q.step.ref);
    BOOST_REQUIRE_MESSAGE(train.ok(), c.name << ": " << train.status().to_string());
    q.init();
    q.train(*train, c.steps);
    auto values = q.fetch({q.w.ref, q.step.ref});
    auto w = values[0].to_vector<double>();
    BOOST_TEST(std::abs(w[0] - 1) < 1e-2, c.name << " w0 = " << w[0]);
    BOOST_TEST(std::abs(w[1] + 2) < 1e-2, c.name << " w1 = " << w[1]);
    BOOST_TEST(values[1].scalar<int64_t>() == c.steps, c.name);
  }
}

BOOST_AUTO_TEST_CASE(a_learning_rate_tensor_is_read_every_step) {
  Quadratic q;
  auto rate = ops::Placeholder(q.s, DataType::kFloat);  // float32, cast to the variable's float64
  GradientDescentOptimizer sgd(rate);
  auto train = sgd.minimize(q.s, q.loss, q.step.ref);
  BOOST_REQUIRE_MESSAGE(train.ok(), train.status().to_string());
  q.init();
  // grad = [-2, 4]: w = [0.5, -1] with 0.25; then grad = [-1, 2] and w moves by 0.
  BOOST_REQUIRE(run_graph(q.s, {}, {{rate, Tensor(0.25f)}}, {*train}, &q.device).ok());
  BOOST_REQUIRE(run_graph(q.s, {}, {{rate, Tensor(0.f)}}, {*train}, &q.device).ok());
  BOOST_TEST(q.fetch({q.w.ref})[0].to_vector<double>() == (std::vector<double>{0.5, -1}));
  // A decayed rate: 0.5 * 0.5^(step / 1), staircase; steps 2, 3 (rates 0.125, 0.0625).
  Quadratic d;
  auto decayed = exponential_decay(d.s, 0.5, d.step.ref, 1, 0.5, /*staircase=*/true);
  BOOST_REQUIRE_MESSAGE(decayed.ok(), decayed.status().to_string());
  auto decaying = GradientDescentOptimizer(*decayed).minimize(d.s, d.loss, d.step.ref);
  BOOST_REQUIRE(decaying.ok());
  d.init();
  d.train(*decaying, 2);
  // w0: 0 -> 0 + 0.5 * 2 * 1 = 1 (rate 0.5); then grad 0 at the minimum: stays 1.
  BOOST_TEST(std::abs(d.fetch({d.w.ref})[0].to_vector<double>()[0] - 1) < 1e-6);
  BOOST_TEST(d.fetch({*decayed})[0].scalar<float>() == 0.125f);
}

BOOST_AUTO_TEST_CASE(a_learning_rate_tensor_must_be_a_number_scalar) {
  Quadratic q;
  auto names = ops::Const(q.s.with_op_name("names"), Tensor::from_vector<std::string>({"a"}));
  check_error(GradientDescentOptimizer(names).minimize(q.s, q.loss, q.step.ref).status(),
              Code::kInvalidArgument, "learning_rate must be a number, but the tensor 'names:0'");
  Quadratic r;
  auto vector = ops::Const(r.s.with_op_name("rates"), {0.1f, 0.2f});
  check_error(MomentumOptimizer(vector, 0.9).minimize(r.s, r.loss, r.step.ref).status(),
              Code::kInvalidArgument, "learning_rate must be a scalar, but the tensor 'rates:0'");
}

BOOST_AUTO_TEST_CASE(slots_are_variables_next_to_their_variable) {
  Quadratic q;
  AdamOptimizer adam(0.1);
  BOOST_REQUIRE(adam.minimize(q.s, q.loss, q.step.ref).ok());
  std::set<std::string> names;
  for (const auto& r : global_variables(q.s.graph()))
    names.insert(r.variable);
  for (const char* n : {"w", "global_step", "w/Adam", "w/Adam_1", "beta1_power", "beta2_power"}) {
    BOOST_TEST(names.count(n) == 1u, n);
  }
  std::set<std::string> trainable;
  for (const auto& r : trainable_variables(q.s.graph()))
    trainable.insert(r.variable);
  BOOST_TEST(trainable == (std::set<std::string>{"w"}));
  // Slots colocate with their variable.
  const NodeDef& slot = q.s.graph().find("w/Adam")->def();
  BOOST_TEST(slot.find_attr("_class") != nullptr);
}

BOOST_AUTO_TEST_CASE(errors) {
  Scope s = Scope::new_root();
  auto x = ops::Placeholder(s, DataType::kFloat);
  GradientDescentOptimizer sgd(0.1);
  check_error(sgd.minimize(s, ops::Square(s, x)).status(), Code::kInvalidArgument,
              "no trainable variables");
  auto v = make_variable(s, "unused", Tensor(1.f));
  check_error(sgd.minimize(s, ops::Square(s, x)).status(), Code::kInvalidArgument,
              "no variable has a gradient");
  (void)v;
}

// Slots are filled where they live when initialised: the graph holds no constant of the
// variable's size (it held one per slot, which a ps kept for the session: 31 MiB for a shard
// of an embedding table).
BOOST_AUTO_TEST_CASE(slots_are_filled_at_initialisation_not_built_as_constants) {
  Scope s = Scope::new_root();
  ModelVariable table = make_variable(
      s, "table", ops::Fill(s, ops::Const(s, Tensor::from_vector<int64_t>({1000, 8})), 1.0f));
  Output loss =
      ops::Sum(s, ops::GatherV2(s, table.ref, Tensor::from_vector<int64_t>({3, 3}), 0), {0, 1});
  AdagradOptimizer adagrad(0.5, /*initial_accumulator_value=*/0.25);
  auto train = adagrad.minimize(s, loss);
  BOOST_REQUIRE_MESSAGE(train.ok(), train.status().to_string());
  for (int id = 0; id < s.graph().num_nodes(); ++id) {
    const Tensor* value = s.graph().node(id).known_value();
    if (s.graph().node(id).op_name() == "Const" && value != nullptr) {
      BOOST_TEST(value->num_elements() < 1000, s.graph().node(id).name());
    }
  }
  Device device("/job:localhost/replica:0/task:0/device:CPU:0", "CPU", 1);
  BOOST_REQUIRE(run_graph(s, {}, {}, {global_variables_initializer(s)}, &device).ok());
  Output accumulator = value_or_throw(find_variable(s.graph(), "table/Adagrad")).ref;
  Tensor before = value_or_throw(run_graph(s, {accumulator}, {}, {}, &device))[0];
  BOOST_TEST(before.shape().to_string() == "[1000,8]");
  BOOST_TEST(before.data<float>()[7999] == 0.25f);
  BOOST_REQUIRE(run_graph(s, {}, {}, {*train}, &device).ok());
  // Row 3's gradient is 2 (looked up twice): 0.25 + 4.
  Tensor after = value_or_throw(run_graph(s, {accumulator}, {}, {}, &device))[0];
  BOOST_TEST(after.data<float>()[3 * 8] == 4.25f);
  BOOST_TEST(after.data<float>()[4 * 8] == 0.25f);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace troupe
