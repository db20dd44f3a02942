// Tests for DeviceName: parsing, printing, matching and merging of device names.
#include <boost/test/unit_test.hpp>

#include <sstream>

#include "troupe/graph/cluster/device_name.hpp"
#include "troupe/graph/core/throwing.hpp"

namespace troupe {
namespace {

bool mentions(const Status& status, std::string_view text) {
  return status.message().find(text) != std::string::npos;
}

DeviceName parsed(std::string_view name) {
  return value_or_throw(DeviceName::parse(name));
}

}  // namespace

BOOST_AUTO_TEST_SUITE(device_name)

BOOST_AUTO_TEST_CASE(parses_a_full_name) {
  DeviceName name = parsed("/job:worker/replica:0/task:1/device:CPU:0");
  BOOST_TEST(name.job.value() == "worker");
  BOOST_TEST(name.replica.value() == 0);
  BOOST_TEST(name.task.value() == 1);
  BOOST_TEST(name.type.value() == "CPU");
  BOOST_TEST(name.id.value() == 0);
  BOOST_TEST(name.is_fully_specified());
  BOOST_TEST(name.to_string() == "/job:worker/replica:0/task:1/device:CPU:0");
  BOOST_TEST(name.task_prefix() == "/job:worker/replica:0/task:1");
}

BOOST_AUTO_TEST_CASE(parses_partial_names) {
  DeviceName job = parsed("/job:ps");
  BOOST_TEST(job.job.value() == "ps");
  BOOST_TEST(!job.replica.has_value());
  BOOST_TEST(!job.task.has_value());
  BOOST_TEST(!job.type.has_value());
  BOOST_TEST(!job.id.has_value());
  BOOST_TEST(!job.is_fully_specified());

  DeviceName task = parsed("/job:ps/task:0");
  BOOST_TEST(task.job.value() == "ps");
  BOOST_TEST(task.task.value() == 0);
  BOOST_TEST(!task.replica.has_value());
  BOOST_TEST(task.task_prefix() == "/job:ps/task:0");

  DeviceName gpu = parsed("/device:GPU:1");
  BOOST_TEST(!gpu.job.has_value());
  BOOST_TEST(gpu.type.value() == "GPU");
  BOOST_TEST(gpu.id.value() == 1);
  BOOST_TEST(gpu.task_prefix() == "");

  DeviceName any_cpu = parsed("/device:CPU:*");
  BOOST_TEST(any_cpu.type.value() == "CPU");
  BOOST_TEST(!any_cpu.id.has_value());
  BOOST_TEST(any_cpu.to_string() == "/device:CPU:*");

  DeviceName type_only = parsed("/device:GPU");
  BOOST_TEST(type_only.type.value() == "GPU");
  BOOST_TEST(!type_only.id.has_value());
}

BOOST_AUTO_TEST_CASE(empty_name_sets_nothing) {
  for (std::string_view text : {"", "/"}) {
    DeviceName name = parsed(text);
    BOOST_TEST((name == DeviceName{}), text);
    BOOST_TEST(name.to_string() == "");
  }
  BOOST_TEST(!DeviceName{}.is_fully_specified());
}

BOOST_AUTO_TEST_CASE(wildcards_leave_fields_unset) {
  BOOST_TEST((parsed("/job:*/replica:*/task:*/device:*:*") == DeviceName{}));
  DeviceName id_only = parsed("/device:*:3");
  BOOST_TEST(!id_only.type.has_value());
  BOOST_TEST(id_only.id.value() == 3);
  BOOST_TEST(id_only.to_string() == "/device:*:3");
}

BOOST_AUTO_TEST_CASE(device_type_is_upper_cased) {
  BOOST_TEST(parsed("/device:cpu:0").type.value() == "CPU");
  BOOST_TEST(parsed("/device:Gpu:2").type.value() == "GPU");
  BOOST_TEST(parsed("/device:tpu_system:0").type.value() == "TPU_SYSTEM");
  BOOST_TEST(parsed("/job:w/device:gpu:1").to_string() == "/job:w/device:GPU:1");
}

BOOST_AUTO_TEST_CASE(legacy_forms) {
  DeviceName cpu = parsed("/cpu:0");
  BOOST_TEST(cpu.type.value() == "CPU");
  BOOST_TEST(cpu.id.value() == 0);
  BOOST_TEST(cpu.to_string() == "/device:CPU:0");

  DeviceName gpu = parsed("/gpu:1");
  BOOST_TEST(gpu.type.value() == "GPU");
  BOOST_TEST(gpu.id.value() == 1);

  BOOST_TEST(parsed("/GPU:2").to_string() == "/device:GPU:2");
  BOOST_TEST(parsed("/cpu:*").to_string() == "/device:CPU:*");
  BOOST_TEST(parsed("/job:worker/replica:0/task:1/gpu:3").to_string() ==
             "/job:worker/replica:0/task:1/device:GPU:3");
}

BOOST_AUTO_TEST_CASE(components_in_any_order_print_canonically) {
  BOOST_TEST(parsed("/device:GPU:0/task:2/job:w/replica:1").to_string() ==
             "/job:w/replica:1/task:2/device:GPU:0");
  BOOST_TEST(parsed("/task:1/job:ps").to_string() == "/job:ps/task:1");
}

BOOST_AUTO_TEST_CASE(print_parse_round_trips) {
  for (std::string_view text :
       {"/job:worker/replica:0/task:1/device:CPU:0", "/job:ps", "/job:ps/task:0", "/replica:3",
        "/task:7", "/device:GPU:1", "/device:CPU:*", "/device:*:2", "/job:a_1/device:GPU:*",
        "/job:localhost/replica:0/task:0/device:XLA_CPU:12", ""}) {
    DeviceName name = parsed(text);
    BOOST_TEST(name.to_string() == text);
    BOOST_TEST((parsed(name.to_string()) == name), text);
  }
}

BOOST_AUTO_TEST_CASE(rejects_malformed_names) {
  struct Case {
    std::string_view name;
    std::string_view bad_part;
  };
  for (const Case& c : {
           Case{"/job:", "'job:'"},
           Case{"/job", "'job'"},
           Case{"/job:9worker", "'job:9worker'"},
           Case{"/job:w-1", "'job:w-1'"},
           Case{"/task:x", "'task:x'"},
           Case{"/task:", "'task:'"},
           Case{"/task:1.5", "'task:1.5'"},
           Case{"/task:+1", "'task:+1'"},
           Case{"/task:99999999999", "'task:99999999999'"},
           Case{"/replica:-1", "'replica:-1'"},
           Case{"/foo:1", "'foo:1'"},
           Case{"/job:ps/bar", "'bar'"},
           Case{"/device:", "'device:'"},
           Case{"/device", "'device'"},
           Case{"/device:0GPU:1", "'device:0GPU:1'"},
           Case{"/device:GPU:x", "'device:GPU:x'"},
           Case{"/device:GPU:", "'device:GPU:'"},
           Case{"/device:CPU:0:1", "'device:CPU:0:1'"},
           Case{"/device:C-PU:0", "'device:C-PU:0'"},
           Case{"/cpu", "'cpu'"},
           Case{"/cpu:x", "'cpu:x'"},
           Case{"/gpu:-1", "'gpu:-1'"},
       }) {
    auto name = DeviceName::parse(c.name);
    BOOST_TEST(name.status().code() == Code::kInvalidArgument, c.name);
    BOOST_TEST(mentions(name.status(), fmt::format("invalid device name '{}'", c.name)),
               name.status());
    BOOST_TEST(mentions(name.status(), fmt::format("bad component {}", c.bad_part)), name.status());
    BOOST_TEST(mentions(name.status(), "expected"), name.status());
  }
}

BOOST_AUTO_TEST_CASE(rejects_missing_leading_slash_and_empty_components) {
  for (std::string_view text : {"job:ps", "cpu:0", "device:CPU:0"}) {
    auto name = DeviceName::parse(text);
    BOOST_TEST(name.status().code() == Code::kInvalidArgument);
    BOOST_TEST(mentions(name.status(), fmt::format("'{}'", text)), name.status());
    BOOST_TEST(mentions(name.status(), "start with '/'"), name.status());
  }
  for (std::string_view text : {"/job:ps/", "//job:ps", "/job:ps//task:0"}) {
    auto name = DeviceName::parse(text);
    BOOST_TEST(name.status().code() == Code::kInvalidArgument);
    BOOST_TEST(mentions(name.status(), fmt::format("'{}'", text)), name.status());
    BOOST_TEST(mentions(name.status(), "empty component"), name.status());
  }
}

BOOST_AUTO_TEST_CASE(rejects_duplicate_components) {
  struct Case {
    std::string_view name;
    std::string_view says;
  };
  for (const Case& c : {Case{"/job:a/job:b", "'job:b' gives the job a second time"},
                        Case{"/job:a/job:a", "'job:a' gives the job a second time"},
                        Case{"/job:*/job:a", "'job:a' gives the job"},
                        Case{"/task:0/task:1", "'task:1' gives the task"},
                        Case{"/replica:0/replica:0", "'replica:0' gives the replica"},
                        Case{"/device:CPU:0/gpu:0", "'gpu:0' gives the device"},
                        Case{"/cpu:0/device:CPU:0", "'device:CPU:0' gives the device"}}) {
    auto name = DeviceName::parse(c.name);
    BOOST_TEST(name.status().code() == Code::kInvalidArgument, c.name);
    BOOST_TEST(mentions(name.status(), fmt::format("'{}'", c.name)), name.status());
    BOOST_TEST(mentions(name.status(), c.says), name.status());
  }
}

BOOST_AUTO_TEST_CASE(full_builds_the_canonical_string) {
  std::string text = DeviceName::full("worker", 0, 1, "gpu", 2);
  BOOST_TEST(text == "/job:worker/replica:0/task:1/device:GPU:2");
  DeviceName name = parsed(text);
  BOOST_TEST(name.is_fully_specified());
  BOOST_TEST(name.to_string() == text);
}

BOOST_AUTO_TEST_CASE(fully_specified_needs_all_five_fields) {
  BOOST_TEST(parsed("/job:w/replica:0/task:0/device:CPU:0").is_fully_specified());
  BOOST_TEST(!parsed("/job:w/replica:0/task:0/device:CPU:*").is_fully_specified());
  BOOST_TEST(!parsed("/job:w/replica:0/device:CPU:0").is_fully_specified());
  BOOST_TEST(!parsed("/replica:0/task:0/device:CPU:0").is_fully_specified());
  BOOST_TEST(!parsed("/job:w/task:0/device:CPU:0").is_fully_specified());
  BOOST_TEST(!parsed("/job:w/replica:0/task:0/device:*:0").is_fully_specified());
}

BOOST_AUTO_TEST_CASE(compatibility) {
  DeviceName full = parsed("/job:w/replica:0/task:1/device:GPU:0");
  BOOST_TEST(parsed("/job:w/task:1").is_compatible_with(parsed("/device:GPU:0")));
  BOOST_TEST(parsed("/job:w").is_compatible_with(full));
  BOOST_TEST(full.is_compatible_with(parsed("/job:w")));
  BOOST_TEST(DeviceName{}.is_compatible_with(full));
  BOOST_TEST(full.is_compatible_with(full));
  BOOST_TEST(!parsed("/job:w").is_compatible_with(parsed("/job:ps")));
  BOOST_TEST(!parsed("/replica:1").is_compatible_with(full));
  BOOST_TEST(!parsed("/task:0").is_compatible_with(full));
  BOOST_TEST(!parsed("/device:CPU:0").is_compatible_with(full));
  BOOST_TEST(!full.is_compatible_with(parsed("/device:CPU:0")));
  BOOST_TEST(!parsed("/device:GPU:1").is_compatible_with(full));
  BOOST_TEST(parsed("/device:GPU:*").is_compatible_with(parsed("/device:GPU:5")));
}

BOOST_AUTO_TEST_CASE(matching_a_concrete_device) {
  DeviceName full = parsed("/job:w/replica:0/task:1/device:GPU:0");
  BOOST_TEST(DeviceName{}.matches(full));
  BOOST_TEST(parsed("/job:w").matches(full));
  BOOST_TEST(parsed("/job:w/task:1/device:GPU:*").matches(full));
  BOOST_TEST(full.matches(full));
  BOOST_TEST(!parsed("/job:w/task:2").matches(full));
  BOOST_TEST(!parsed("/device:CPU:*").matches(full));
  // A field the pattern sets but the other name leaves unset does not match.
  BOOST_TEST(!full.matches(parsed("/job:w")));
  BOOST_TEST(!parsed("/device:GPU:0").matches(parsed("/device:GPU:*")));
}

BOOST_AUTO_TEST_CASE(merge_fills_unset_fields) {
  auto merged = DeviceName::merge(parsed("/job:w"), parsed("/task:1/device:GPU:0"));
  BOOST_REQUIRE(merged.ok());
  BOOST_TEST(merged->to_string() == "/job:w/task:1/device:GPU:0");

  auto keeps_base = DeviceName::merge(parsed("/job:w/replica:0/device:CPU:*"), parsed("/job:w"));
  BOOST_REQUIRE(keeps_base.ok());
  BOOST_TEST(keeps_base->to_string() == "/job:w/replica:0/device:CPU:*");

  auto id_added = DeviceName::merge(parsed("/device:CPU:*"), parsed("/device:CPU:3"));
  BOOST_REQUIRE(id_added.ok());
  BOOST_TEST(id_added->to_string() == "/device:CPU:3");

  auto with_empty = DeviceName::merge(DeviceName{}, parsed("/job:ps/task:0"));
  BOOST_REQUIRE(with_empty.ok());
  BOOST_TEST(with_empty->to_string() == "/job:ps/task:0");
}

BOOST_AUTO_TEST_CASE(merge_conflicts_name_both_names) {
  auto jobs = DeviceName::merge(parsed("/job:w/task:1"), parsed("/job:ps"));
  BOOST_TEST(jobs.status().code() == Code::kInvalidArgument);
  BOOST_TEST(mentions(jobs.status(), "'/job:w/task:1' and '/job:ps'"), jobs.status());
  BOOST_TEST(mentions(jobs.status(), "job w vs ps"), jobs.status());

  auto devices = DeviceName::merge(parsed("/job:w/device:GPU:0"), parsed("/device:CPU:1"));
  BOOST_TEST(devices.status().code() == Code::kInvalidArgument);
  BOOST_TEST(mentions(devices.status(), "'/job:w/device:GPU:0' and '/device:CPU:1'"),
             devices.status());
  BOOST_TEST(mentions(devices.status(), "device type GPU vs CPU"), devices.status());
  BOOST_TEST(mentions(devices.status(), "device id 0 vs 1"), devices.status());

  auto tasks = DeviceName::merge(parsed("/replica:0/task:1"), parsed("/replica:1/task:1"));
  BOOST_TEST(mentions(tasks.status(), "replica 0 vs 1"), tasks.status());
  BOOST_TEST(!mentions(tasks.status(), "task 1 vs"), tasks.status());
}

BOOST_AUTO_TEST_CASE(merge_overriding_lets_the_override_win) {
  DeviceName merged = DeviceName::merge_overriding(parsed("/job:w/task:1/device:GPU:1"),
                                                   parsed("/job:ps/device:CPU:*"));
  BOOST_TEST(merged.to_string() == "/job:ps/task:1/device:CPU:1");
  BOOST_TEST(DeviceName::merge_overriding(parsed("/job:w"), DeviceName{}).to_string() == "/job:w");
  BOOST_TEST(DeviceName::merge_overriding(DeviceName{}, parsed("/replica:2")).to_string() ==
             "/replica:2");
}

BOOST_AUTO_TEST_CASE(with_defaults_fills_only_unset_fields) {
  DeviceName defaults = parsed("/job:localhost/replica:0/task:0/device:CPU:0");
  BOOST_TEST(parsed("/device:GPU:1").with_defaults(defaults).to_string() ==
             "/job:localhost/replica:0/task:0/device:GPU:1");
  BOOST_TEST(parsed("/job:w/task:3").with_defaults(defaults).to_string() ==
             "/job:w/replica:0/task:3/device:CPU:0");
  BOOST_TEST(DeviceName{}.with_defaults(defaults).to_string() == defaults.to_string());
  BOOST_TEST(parsed("/task:2").with_defaults(DeviceName{}).to_string() == "/task:2");
}

BOOST_AUTO_TEST_CASE(equality_and_printing) {
  BOOST_TEST((parsed("/cpu:0") == parsed("/device:CPU:0")));
  BOOST_TEST((parsed("/device:cpu:0") == parsed("/device:CPU:0")));
  BOOST_TEST(!(parsed("/device:CPU:0") == parsed("/device:CPU:*")));
  BOOST_TEST(!(parsed("/job:w") == parsed("/job:w/replica:0")));
  std::ostringstream os;
  os << parsed("/job:w/gpu:1");
  BOOST_TEST(os.str() == "DeviceName('/job:w/device:GPU:1')");
}

BOOST_AUTO_TEST_CASE(job_name_rule) {
  BOOST_TEST(is_valid_job_name("worker"));
  BOOST_TEST(is_valid_job_name("w_2"));
  BOOST_TEST(is_valid_job_name("a"));
  BOOST_TEST(!is_valid_job_name(""));
  BOOST_TEST(!is_valid_job_name("2w"));
  BOOST_TEST(!is_valid_job_name("_w"));
  BOOST_TEST(is_valid_job_name("Worker"));  // TensorFlow allows capitals
  BOOST_TEST(!is_valid_job_name("w-1"));
  BOOST_TEST(!is_valid_job_name("/job"));
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace troupe
