// DeviceName: a full or partial device name such as "/job:worker/replica:0/task:1/device:GPU:0",
// with the semantics of TensorFlow's DeviceNameUtils and tf.DeviceSpec.
//
// Each of the five fields may be unset; a partial name ("/job:ps", "/device:GPU:*") is a
// placement constraint, a fully specified one names one device. Device types are kept upper
// case ("CPU", "GPU"), whatever case they were written in.
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <string_view>

#include "troupe/graph/core/status.hpp"

namespace troupe {

// A job name, as in a cluster spec or "/job:<name>": [A-Za-z][A-Za-z0-9_]*.
bool is_valid_job_name(std::string_view name);

struct DeviceName {
  std::optional<std::string> job;
  std::optional<int> replica;
  std::optional<int> task;
  std::optional<std::string> type;  // upper case: "CPU", "GPU"
  std::optional<int> id;

  // Parses a '/'-separated list of components, each at most once, in any order:
  // "/job:<name>", "/replica:<n>", "/task:<n>", "/device:<TYPE>[:<n>]", and the legacy
  // "/cpu:<n>" and "/gpu:<n>". "*" in place of a value leaves that field unset
  // ("/device:CPU:*"); "" and "/" leave every field unset. InvalidArgument, naming the whole
  // name, the bad component and what was expected, for anything else: "/job:", "/task:x",
  // "/replica:-1", "job:ps" (no leading '/'), "/foo:1", a component given twice.
  static StatusOr<DeviceName> parse(std::string_view name);

  // "/job:<job>/replica:<replica>/task:<task>/device:<TYPE>:<id>", with `type` upper-cased.
  // The arguments are not validated.
  static std::string full(std::string job, int replica, int task, std::string type, int id);
  // The name of a task of replica 0: "/job:<job>/replica:0/task:<task>".
  static std::string task_name(std::string_view job, int task);

  // The canonical form: only the set fields, in the order job, replica, task, device;
  // "/device:CPU:*" when the type is set but not the id, "/device:*:1" for the reverse, and ""
  // when nothing is set. parse(to_string()) gives back an equal DeviceName.
  std::string to_string() const;
  // The job, replica and task part of to_string(): "/job:worker/replica:0/task:1".
  std::string task_prefix() const;

  // All five fields are set.
  bool is_fully_specified() const;
  // No field is set in both names with different values (a device could satisfy both).
  bool is_compatible_with(const DeviceName& other) const;
  // Every field set in *this is set in `concrete` to the same value.
  bool matches(const DeviceName& concrete) const;

  // TensorFlow's MergeDevNames: each field set in `override_` is taken where `base` leaves it
  // unset. A field set in both with different values is InvalidArgument naming both names.
  static StatusOr<DeviceName> merge(const DeviceName& base, const DeviceName& override_);
  // TensorFlow's MergeOverrideDevNames: each field set in `override_` replaces base's.
  static DeviceName merge_overriding(const DeviceName& base, const DeviceName& override_);
  // A copy whose unset fields are taken from `defaults`.
  DeviceName with_defaults(const DeviceName& defaults) const;

  bool operator==(const DeviceName& other) const = default;
};

std::ostream& operator<<(std::ostream& os, const DeviceName& name);

}  // namespace troupe
