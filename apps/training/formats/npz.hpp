// Checkpoints as NumPy .npz files: a ZIP archive holding one .npy array per tensor.
//
// Owns the .npy (format 1.0 written; 1.0, 2.0 and 3.0 read) and ZIP encodings. What this writes,
// numpy.load reads (`np.load(path)["layer1/weights"]`); what numpy.savez and
// numpy.savez_compressed write, this reads.
//
// Written archives: entries in the order given, named "<tensor name>.npy" (names keep their
// '/'), stored (no compression), DOS time 1980-01-01 00:00 so the same tensors give the same
// bytes, no ZIP64 (a tensor, or the archive, over 4 GiB is InvalidArgument).
// dtypes: float32 '<f4', float64 '<f8', int32 '<i4', int64 '<i8', bool '|b1'; little-endian
// on write, either byte order on read. Strings are not supported.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "troupe/graph/core/status.hpp"
#include "troupe/graph/core/tensor.hpp"

namespace troupe {

using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

// Writes `tensors` to `path` atomically: to path + ".tmp", fsync, rename over `path`, fsync of
// the directory. On failure `path` is untouched and the .tmp file removed.
// InvalidArgument for an empty, duplicate or over-long name, an uninitialised or string
// tensor, or an archive over 4 GiB; NotFound if the directory does not exist; other I/O
// failures with the errno's nearest code, naming the file.
Status write_npz(const std::string& path, const NamedTensors& tensors);

// Reads every array of the .npz at `path`, in archive (central directory) order, with the
// ".npy" stripped from the names. Stored and deflate-compressed entries are accepted, ZIP64
// extra fields skipped. NotFound for a missing file; DataLoss for a corrupt archive (bad
// signature, sizes out of bounds, truncation, CRC mismatch — naming the entry);
// InvalidArgument for what is valid but unsupported (a dtype other than the five above,
// fortran_order True, encryption, compression other than deflate, an entry that is not .npy,
// a ZIP64 end record).
StatusOr<NamedTensors> read_npz(const std::string& path);

// read_npz on the bytes of an archive; `path` names it in error messages.
StatusOr<NamedTensors> decode_npz(std::string_view file, const std::string& path);

// The .npy encoding of one tensor (format version 1.0, header padded to 64 bytes).
// InvalidArgument for an uninitialised or string tensor.
StatusOr<std::string> encode_npy(const Tensor& tensor);

// Decodes a .npy (versions 1.0, 2.0, 3.0). `what` names the source in error messages.
StatusOr<Tensor> decode_npy(std::string_view bytes, const std::string& what);

// CRC-32 as in ZIP, gzip and zlib (reflected polynomial 0xEDB88320). `crc` continues a
// previous result: crc32(b, crc32(a)) == crc32(a + b).
uint32_t crc32(const void* data, size_t size, uint32_t crc = 0);

}  // namespace troupe
