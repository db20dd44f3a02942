// Checkpoints as NumPy .npz files: a ZIP archive holding one .npy array per tensor.
//
// The .npy encoding is npy.hpp's (format 1.0 written; 1.0, 2.0 and 3.0 read), the ZIP
// container zip_archive.hpp's. What this writes, numpy.load reads
// (`np.load(path)["layer1/weights"]`); what numpy.savez and numpy.savez_compressed write, this
// reads.
//
// Written archives: entries in the order given, named "<tensor name>.npy" (names keep their
// '/'), stored (no compression), DOS time 1980-01-01 00:00 so the same tensors give the same
// bytes, no ZIP64 (a tensor, or the archive, over 4 GiB is InvalidArgument).
// dtypes: float32 '<f4', float64 '<f8', int32 '<i4', int64 '<i8', bool '|b1'; little-endian
// on write, either byte order on read. Strings are not supported.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "troupe/graph/core/status.hpp"
#include "troupe/graph/core/tensor.hpp"

namespace troupe {

using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

// Writes `tensors` to `path` atomically and durably, through a DurableFile (durable_file.hpp):
// on failure `path` keeps its previous contents.
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

// The arrays `names` of the .npz at `path`, in that order (a name may repeat); only those and
// the archive's directory are read from the file (zip_archive.hpp's read_zip_members), so a
// few tensors of a large checkpoint cost their own bytes. read_npz's errors for what is read,
// and NotFound naming the first name the archive lacks.
StatusOr<std::vector<Tensor>> read_npz_tensors(const std::string& path,
                                               const std::vector<std::string>& names);

}  // namespace troupe
