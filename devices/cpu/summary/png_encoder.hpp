// PNG encoding of 8-bit images, for image summaries: grayscale (1 channel), RGB (3) or RGBA
// (4); the signature, IHDR, one IDAT of the zlib-compressed rows (each with filter 0), IEND,
// every chunk with its CRC-32 (https://www.w3.org/TR/png/). Pixels row-major, channels
// interleaved.
#pragma once

#include <cstdint>
#include <string>

#include "troupe/graph/core/status.hpp"

namespace troupe::summary {

// InvalidArgument for a size or channel count PNG cannot hold.
StatusOr<std::string> encode_png(const uint8_t* pixels, int64_t height, int64_t width,
                                 int channels);

}  // namespace troupe::summary
