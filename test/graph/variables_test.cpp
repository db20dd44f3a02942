// Tests for graph/variables: global and local variables, their initialisers, the global step.
#include <boost/test/unit_test.hpp>

#include "troupe/graph/variables.hpp"

namespace troupe {
namespace {

std::vector<std::string> names(const std::vector<VariableRecord>& records) {
  std::vector<std::string> out;
  for (const VariableRecord& r : records)
    out.push_back(r.variable);
  return out;
}

// The initialisers a NoOp runs (its control inputs).
std::vector<std::string> runs(const Scope& scope, const Operation& init) {
  std::vector<std::string> out;
  for (int input : init.node()->control_inputs())
    out.push_back(scope.graph().node(input).name());
  return out;
}

BOOST_AUTO_TEST_SUITE(variables)

BOOST_AUTO_TEST_CASE(local_variables_stay_out_of_the_global_collection_and_its_initializer) {
  Scope root = Scope::new_root();
  make_variable(root, "w", Tensor(1.0f));
  make_variable(root, "counter", Tensor(int64_t{0}), /*trainable=*/false,
                VariableCollection::kLocal);
  ModelVariable step = get_or_create_global_step(root);
  BOOST_REQUIRE(root.ok());
  BOOST_TEST(
      names(global_variables(root.graph())) == (std::vector<std::string>{"w", "global_step"}),
      boost::test_tools::per_element());
  BOOST_TEST(names(local_variables(root.graph())) == std::vector<std::string>{"counter"},
             boost::test_tools::per_element());
  BOOST_TEST(names(trainable_variables(root.graph())) == std::vector<std::string>{"w"},
             boost::test_tools::per_element());
  BOOST_TEST(runs(root, global_variables_initializer(root)) ==
                 (std::vector<std::string>{"w/Assign", "global_step/Assign"}),
             boost::test_tools::per_element());
  BOOST_TEST(
      runs(root, local_variables_initializer(root)) == std::vector<std::string>{"counter/Assign"},
      boost::test_tools::per_element());
  BOOST_TEST(get_or_create_global_step(root).ref.name() == step.ref.name());
}

BOOST_AUTO_TEST_CASE(a_local_variable_named_global_step_is_not_the_global_step) {
  Scope root = Scope::new_root();
  make_variable(root, "global_step", Tensor(int64_t{5}), false, VariableCollection::kLocal);
  ModelVariable step = get_or_create_global_step(root);
  BOOST_REQUIRE(root.ok());
  BOOST_TEST(step.ref.name() != "global_step:0");
  BOOST_TEST(names(global_variables(root.graph())).size() == 1u);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
}  // namespace troupe
