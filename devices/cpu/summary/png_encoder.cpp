// PNG encoding: chunks, CRCs and the zlib stream of the rows.
#include "troupe/devices/cpu/summary/png_encoder.hpp"

#include <zlib.h>

#include <vector>

namespace troupe::summary {
namespace {

void put_be32(std::string& out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8)
    out.push_back(static_cast<char>((v >> shift) & 0xff));
}

// A chunk: length, type, data, CRC-32 of type and data.
void put_chunk(std::string& out, const char type[4], const std::string& data) {
  put_be32(out, static_cast<uint32_t>(data.size()));
  size_t type_at = out.size();
  out.append(type, 4);
  out.append(data);
  uLong crc = ::crc32(0, reinterpret_cast<const Bytef*>(out.data() + type_at), 4 + data.size());
  put_be32(out, static_cast<uint32_t>(crc));
}

}  // namespace

StatusOr<std::string> encode_png(const uint8_t* pixels, int64_t height, int64_t width,
                                 int channels) {
  if (height < 1 || width < 1 || height > 0x7fffffff || width > 0x7fffffff) {
    return errors::InvalidArgument("an image of {}x{} pixels cannot be a PNG", height, width);
  }
  uint8_t color_type;
  switch (channels) {
    case 1:
      color_type = 0;
      break;  // grayscale
    case 3:
      color_type = 2;
      break;  // RGB
    case 4:
      color_type = 6;
      break;  // RGBA
    default:
      return errors::InvalidArgument("a PNG has 1, 3 or 4 channels, not {}", channels);
  }
  const size_t row = static_cast<size_t>(width) * channels;
  std::vector<uint8_t> raw;
  raw.reserve((row + 1) * static_cast<size_t>(height));
  for (int64_t y = 0; y < height; ++y) {
    raw.push_back(0);  // filter: none
    raw.insert(raw.end(), pixels + y * row, pixels + (y + 1) * row);
  }
  uLongf compressed_size = ::compressBound(raw.size());
  std::string compressed(compressed_size, '\0');
  if (::compress2(reinterpret_cast<Bytef*>(compressed.data()), &compressed_size, raw.data(),
                  raw.size(), Z_DEFAULT_COMPRESSION) != Z_OK) {
    return errors::Internal("zlib could not compress a {}x{} image", height, width);
  }
  compressed.resize(compressed_size);

  std::string png("\x89PNG\r\n\x1a\n", 8);
  std::string header;
  put_be32(header, static_cast<uint32_t>(width));
  put_be32(header, static_cast<uint32_t>(height));
  header.push_back(8);  // bit depth
  header.push_back(static_cast<char>(color_type));
  header.append(3, '\0');  // compression, filter, interlace
  put_chunk(png, "IHDR", header);
  put_chunk(png, "IDAT", compressed);
  put_chunk(png, "IEND", "");
  return png;
}

}  // namespace troupe::summary
