// Small file helpers shared by the files training writes and reads (.npz checkpoints,
// TensorBoard event files): errno as a typed Status, and reading a whole file.
#pragma once

#include <string>
#include <string_view>

#include "troupe/graph/core/status.hpp"

namespace troupe {

// An errno as a Status with the nearest TensorFlow code, naming what was done to which file:
// "<action> '<file>': <strerror><hint>".
Status errno_status(int err, std::string_view action, const std::string& file,
                    std::string_view hint = "");

// The bytes of the file at `path`. A missing file is NotFound with `if_missing` as the
// message; other failures are errno_status("cannot open <noun>" / "cannot read <noun>").
StatusOr<std::string> read_whole_file(const std::string& path, std::string_view noun,
                                      std::string_view if_missing);

}  // namespace troupe
