// ZIP archives (PKWARE's APPNOTE), as far as .npz files need them.
//
// Written: members in the order given, stored (no compression), DOS time 1980-01-01 00:00 so
// the same members give the same bytes, no ZIP64 (a member, or the archive, over 4 GiB is
// InvalidArgument), CRC-32 from zlib.
// Read: stored and deflate-compressed members (zlib's inflate), ZIP64 extra fields in member
// headers; not ZIP64 end records, multi-disk archives or encryption.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "troupe/graph/core/status.hpp"

namespace troupe {

// A member to write: its name and its content, given as pieces written one after another (so
// large buffers are written from where they lie, not copied).
struct ZipMemberToWrite {
  std::string name;
  std::vector<std::string_view> pieces;
};

// Writes the archive to `path` atomically and durably, through a DurableFile (durable_file.hpp):
// on failure `path` keeps its previous contents. InvalidArgument
// for too many members, a name over 64 KiB or sizes that need ZIP64; NotFound if the
// directory does not exist; other I/O failures with the errno's nearest code, naming the file.
Status write_zip(const std::string& path, const std::vector<ZipMemberToWrite>& members);

// Calls `visit(name, content, what)` for each member of the archive `file`, in central
// directory order; `what` names the member and `path` for error messages. Stops at the first
// error, its own or visit's. DataLoss for a corrupt archive (bad signature, sizes out of
// bounds, truncation, CRC mismatch — naming the member); InvalidArgument for what is valid but
// unsupported (encryption, compression other than deflate, a ZIP64 end record, several disks).
using ZipVisitor = std::function<Status(const std::string& name, std::string_view content,
                                        const std::string& what)>;
Status for_each_zip_member(std::string_view file, const std::string& path, const ZipVisitor& visit);

// The same walk over the archive at `path`, reading from the file only its directory and the
// members `wanted` accepts (the others are neither read nor checked), so that a few tensors of
// a large checkpoint cost their own bytes. A missing file is NotFound with `if_missing` as the
// message; other I/O failures as errno_status; a file that changes size meanwhile is DataLoss.
Status read_zip_members(const std::string& path,
                        const std::function<bool(const std::string&)>& wanted,
                        std::string_view if_missing, const ZipVisitor& visit);

}  // namespace troupe
