// Writing a batch of tensor frames (frame_format.hpp) on a channel connection: one gathered
// write of every frame's head, dims, key, device name and data, straight from the tensors'
// buffers, with the data of large frames through the connection's shared-memory ring if it has
// one.
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include "troupe/actors/transport/channel_context.hpp"
#include "troupe/actors/transport/data_plane.hpp"

namespace troupe {

class Sealer;
class SharedRing;

struct WriteMode {
  bool wait = true;  // block until all is written; else stop where the socket would block
  size_t skip = 0;   // bytes of the batch an earlier write put on the socket already
};

struct Written {
  size_t frames = 0;         // frames that went out whole
  size_t bytes = 0;          // bytes of the batch on the socket now (`skip` included)
  bool would_block = false;  // stopped where the socket would block (not an error)
};

// Writes `frames` to `fd` (sealed by `sealer` if set). The data of frames of
// frame::kSharedMemoryMinBytes or more goes through `ring` if set, which only a waiting write
// may be given; a wait on the ring gives up once `gone()`. Counts shared-memory frames.
Written write_frames(int fd, Sealer* sealer, SharedRing* ring,
                     const std::vector<DataPlane::Frame>& frames, WriteMode mode,
                     const std::function<bool()>& gone, ChannelCounters& counters);

}  // namespace troupe
