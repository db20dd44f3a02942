// Tests for ResourceManager: resources by container and name, made once, vetted on reuse, and
// dropped with their container.
#include <boost/test/unit_test.hpp>

#include "status_checks.hpp"
#include "troupe/devices/resource_manager.hpp"
#include "troupe/devices/tuple_queue.hpp"

namespace troupe {

BOOST_AUTO_TEST_SUITE(resource_manager)

BOOST_AUTO_TEST_CASE(a_variable_is_made_once_per_container_and_name) {
  ResourceManager resources;
  auto w = resources.lookup_or_create_variable("", "w", DataType::kFloat, PartialShape({2}));
  auto again = resources.lookup_or_create_variable("", "w", DataType::kFloat, PartialShape({2}));
  auto other = resources.lookup_or_create_variable("c", "w", DataType::kFloat, PartialShape({2}));
  BOOST_REQUIRE(w.ok() && again.ok() && other.ok());
  BOOST_TEST(w->get() == again->get());
  BOOST_TEST(w->get() != other->get());
  BOOST_TEST(resources.size() == 2u);
  BOOST_TEST(resources.find("c", "w") == *other);
  BOOST_TEST(resources.find("c", "v") == nullptr);
  BOOST_TEST(resources.find("d", "w") == nullptr);
}

BOOST_AUTO_TEST_CASE(reuse_is_vetted) {
  ResourceManager resources;
  BOOST_REQUIRE(
      resources.lookup_or_create_variable("", "w", DataType::kFloat, PartialShape({2})).ok());
  testing::check_error(
      resources.lookup_or_create_variable("", "w", DataType::kInt32, PartialShape({2})).status(),
      Code::kInvalidArgument, "variable 'w' already exists as float32 [2], cannot use it as int32");
  auto make_queue = []() -> StatusOr<std::shared_ptr<TupleQueue>> {
    return std::make_shared<TupleQueue>("q", std::vector<DataType>{DataType::kFloat},
                                        std::vector<PartialShape>{}, 4);
  };
  auto any_queue = [](const TupleQueue&) { return Status::OK(); };
  BOOST_REQUIRE(resources.lookup_or_create<TupleQueue>("", "q", make_queue, any_queue).ok());
  testing::check_error(
      resources.lookup_or_create_variable("", "q", DataType::kFloat, PartialShape({2})).status(),
      Code::kInvalidArgument, "'q' already names queue 'q', of another kind");
}

BOOST_AUTO_TEST_CASE(clearing_a_container_drops_only_its_resources) {
  ResourceManager resources;
  for (const char* container : {"", "a", "b"}) {
    for (const char* name : {"w", "v"}) {
      BOOST_REQUIRE(
          resources.lookup_or_create_variable(container, name, DataType::kFloat, PartialShape({}))
              .ok());
    }
  }
  resources.clear("a");
  BOOST_TEST(resources.size() == 4u);
  BOOST_TEST(resources.find("a", "w") == nullptr);
  BOOST_TEST(resources.find("b", "w") != nullptr);
  auto fresh = resources.lookup_or_create_variable("a", "w", DataType::kInt32, PartialShape({}));
  BOOST_TEST(fresh.ok());  // a new variable: the old one, and its dtype, are gone
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace troupe
