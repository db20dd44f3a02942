// Writing batches of tensor frames (frame_writer.hpp).
#include "troupe/actors/transport/frame_writer.hpp"

#include <sys/socket.h>
#include <sys/uio.h>

#include <algorithm>

#include "troupe/actors/transport/frame_format.hpp"
#include "troupe/actors/transport/shared_ring.hpp"
#include "troupe/actors/transport/stream_io.hpp"

namespace troupe {

Written write_frames(int fd, Sealer* sealer, SharedRing* ring,
                     const std::vector<DataPlane::Frame>& frames, WriteMode mode,
                     const std::function<bool()>& gone, ChannelCounters& counters) {
  std::vector<frame::TensorHead> heads;
  std::vector<std::vector<int64_t>> dims;
  heads.reserve(frames.size());
  dims.reserve(frames.size());
  std::vector<iovec> parts;     // the batch's bytes from `begin` on, not yet written
  std::vector<size_t> ends;     // where each frame in them ends, in bytes of the batch
  size_t begin = 0, total = 0;  // bytes of the batch before `parts`, and to their end
  Written out;
  auto add = [&](const void* data, size_t bytes) {
    parts.push_back({const_cast<void*>(data), bytes});
    total += bytes;
  };
  auto write_parts = [&] {  // whether all went out
    // Leaves out the bytes an earlier write of this batch put on the socket.
    std::vector<iovec> rest;
    size_t at = begin;
    for (const iovec& part : parts) {
      size_t end = at + part.iov_len;
      if (end > mode.skip) {
        size_t cut = at < mode.skip ? mode.skip - at : 0;
        rest.push_back({static_cast<char*>(part.iov_base) + cut, part.iov_len - cut});
      }
      at = end;
    }
    size_t from = std::max(begin, mode.skip);
    size_t wanted = total > from ? total - from : 0;
    // Sealed, the batch's frames count as written once sealed: a sealer that would block keeps
    // the rest of their records, and the writer thread sends them first (see Sealer::write).
    auto sent = send_parts(fd, sealer, rest, mode.wait ? 0 : MSG_DONTWAIT);
    out.would_block = sent.would_block;
    out.bytes = from + sent.bytes;
    out.frames +=
        static_cast<size_t>(std::upper_bound(ends.begin(), ends.end(), out.bytes) - ends.begin());
    parts.clear();
    ends.clear();
    begin = total;
    return sent.bytes == wanted && !sent.would_block;
  };
  for (const DataPlane::Frame& f : frames) {
    const auto& shape = f.value.shape();
    heads.push_back({frame::kTensorMagic, frame::kVersion, static_cast<uint8_t>(f.value.dtype()),
                     static_cast<uint8_t>(shape.rank()), f.step_id,
                     static_cast<uint32_t>(f.key.size()), static_cast<uint32_t>(f.device.size()),
                     static_cast<uint64_t>(f.value.total_bytes())});
    dims.emplace_back(shape.dims().begin(), shape.dims().end());
    add(&heads.back(), sizeof(frame::TensorHead));
    add(dims.back().data(), dims.back().size() * sizeof(int64_t));
    add(f.key.data(), f.key.size());
    add(f.device.data(), f.device.size());
    auto bytes = static_cast<size_t>(f.value.total_bytes());
    if (ring != nullptr && bytes >= frame::kSharedMemoryMinBytes) {
      // The head goes first: the reader then waits for the data in the ring.
      if (!write_parts() || !ring->write(f.value.raw_data(), bytes, gone)) return out;
      ++out.frames;
      ++counters.shared_memory_frames;
      continue;
    }
    add(f.value.raw_data(), bytes);
    ends.push_back(total);
  }
  write_parts();
  return out;
}

}  // namespace troupe
