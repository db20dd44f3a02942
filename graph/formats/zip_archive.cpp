// ZIP archives: stored members written atomically, stored or deflated members read.
#include "troupe/graph/formats/zip_archive.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <functional>

#include <fmt/format.h>

#include "troupe/graph/formats/durable_file.hpp"
#include "troupe/graph/formats/file_io.hpp"
#include "troupe/graph/formats/little_endian.hpp"

namespace troupe {
namespace {

using little_endian::put16;
using little_endian::put32;

constexpr uint32_t kLocalHeaderSignature = 0x04034b50;
constexpr uint32_t kCentralHeaderSignature = 0x02014b50;
constexpr uint32_t kEndRecordSignature = 0x06054b50;
constexpr uint32_t kZip64LocatorSignature = 0x07064b50;
constexpr size_t kLocalHeaderSize = 30;
constexpr size_t kCentralHeaderSize = 46;
constexpr size_t kEndRecordSize = 22;
constexpr size_t kZip64LocatorSize = 20;
constexpr size_t kMaxCommentSize = 0xffff;
constexpr uint64_t kMax32 = 0xffffffffu;  // also ZIP64's "see the extra field" marker
constexpr uint16_t kZip64ExtraId = 0x0001;
constexpr uint16_t kMethodStored = 0;
constexpr uint16_t kMethodDeflate = 8;
constexpr uint16_t kVersionNeeded = 20;                     // 2.0: plain stored entries
constexpr uint16_t kVersionMadeBy = (3 << 8) | 20;          // Unix, 2.0
constexpr uint16_t kDosDate1980 = (0 << 9) | (1 << 5) | 1;  // 1980-01-01
constexpr uint16_t kDosTimeMidnight = 0;
constexpr uint32_t kExternalAttributes = 0100644u << 16;  // regular file, rw-r--r--

// One member as it will be written.
struct PendingEntry {
  std::string name;
  std::vector<std::string_view> pieces;
  uint64_t data_size = 0;
  uint32_t crc = 0;
  uint64_t offset = 0;  // of its local header
};

// The fields a local header and a central directory header share, in the same order: from
// "version needed to extract" to "extra field length".
void put_shared_fields(std::string& out, const PendingEntry& e) {
  put16(out, kVersionNeeded);
  put16(out, 0);  // flags
  put16(out, kMethodStored);
  put16(out, kDosTimeMidnight);
  put16(out, kDosDate1980);
  put32(out, e.crc);
  put32(out, static_cast<uint32_t>(e.data_size));  // compressed
  put32(out, static_cast<uint32_t>(e.data_size));  // uncompressed
  put16(out, static_cast<uint16_t>(e.name.size()));
  put16(out, 0);  // extra field length
}

std::string local_header(const PendingEntry& e) {
  std::string out;
  put32(out, kLocalHeaderSignature);
  put_shared_fields(out, e);
  out += e.name;
  return out;
}

std::string central_header(const PendingEntry& e) {
  std::string out;
  put32(out, kCentralHeaderSignature);
  put16(out, kVersionMadeBy);
  put_shared_fields(out, e);
  put16(out, 0);  // comment length
  put16(out, 0);  // disk number
  put16(out, 0);  // internal attributes
  put32(out, kExternalAttributes);
  put32(out, static_cast<uint32_t>(e.offset));
  out += e.name;
  return out;
}

Status write_file(DurableFile& file, const std::vector<PendingEntry>& entries,
                  const std::string& central, const std::string& end) {
  for (const PendingEntry& e : entries) {
    TROUPE_RETURN_IF_ERROR(file.append(local_header(e)));
    for (std::string_view piece : e.pieces)
      TROUPE_RETURN_IF_ERROR(file.append(piece));
  }
  TROUPE_RETURN_IF_ERROR(file.append(central));
  return file.append(end);
}

// Values from a ZIP64 extended-information extra field: each present only if the header's
// field is the 0xffffffff marker, in this order.
Status apply_zip64_extra(std::string_view extra, uint64_t* uncompressed, uint64_t* compressed,
                         uint64_t* offset, const std::string& what) {
  size_t i = 0;
  while (i + 4 <= extra.size()) {
    auto p = reinterpret_cast<const uint8_t*>(extra.data()) + i;
    uint16_t id = little_endian::get16(p), size = little_endian::get16(p + 2);
    if (i + 4 + size > extra.size()) {
      return errors::DataLoss("{}: extra field 0x{:04x} runs past the header", what, id);
    }
    if (id == kZip64ExtraId) {
      const uint8_t* q = p + 4;
      const uint8_t* q_end = q + size;
      for (uint64_t* field : {uncompressed, compressed, offset}) {
        if (field == nullptr || *field != kMax32) continue;
        if (q + 8 > q_end) return errors::DataLoss("{}: ZIP64 extra field too short", what);
        *field = little_endian::get64(q);
        q += 8;
      }
    }
    i += 4 + size;
  }
  return Status::OK();
}

// Inflates a raw deflate stream that must expand to exactly `size` bytes.
StatusOr<std::string> inflate_entry(std::string_view in, uint64_t size, const std::string& what) {
  // Deflate expands at most ~1032:1; a larger claim is a corrupt header, not a reason to
  // allocate gigabytes.
  if (size > in.size() * 1040ull + 1024) {
    return errors::DataLoss("{}: claims {} bytes from {} compressed bytes", what, size, in.size());
  }
  std::string out(size, '\0');
  z_stream zs{};
  if (inflateInit2(&zs, -MAX_WBITS) != Z_OK) {
    return errors::Internal("{}: inflateInit2 failed", what);
  }
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  int rc = inflate(&zs, Z_FINISH);
  std::string zmsg = zs.msg != nullptr ? zs.msg : "";
  uint64_t produced = zs.total_out;
  inflateEnd(&zs);
  if (rc == Z_STREAM_END && produced == size) return out;
  if (rc == Z_DATA_ERROR) {
    return errors::DataLoss("{}: corrupt deflate data ({})", what, zmsg);
  }
  if (rc == Z_STREAM_END) {
    return errors::DataLoss("{}: inflates to {} bytes, header says {}", what, produced, size);
  }
  return errors::DataLoss("{}: deflate data truncated or longer than the {} bytes declared", what,
                          size);
}

}  // namespace

Status write_zip(const std::string& path, const std::vector<ZipMemberToWrite>& members) {
  if (members.size() >= 0xffff) {
    return errors::InvalidArgument(
        "'{}': {} members; at most 65534 fit without ZIP64, which is not supported", path,
        members.size());
  }
  std::vector<PendingEntry> entries;
  entries.reserve(members.size());
  uint64_t offset = 0;
  for (const ZipMemberToWrite& member : members) {
    if (member.name.size() > 0xffff) {
      return errors::InvalidArgument("'{}': a member name of {} bytes is too long", path,
                                     member.name.size());
    }
    PendingEntry e;
    e.name = member.name;
    e.pieces = member.pieces;
    uLong crc = ::crc32_z(0, nullptr, 0);
    for (std::string_view piece : member.pieces) {
      e.data_size += piece.size();
      crc = ::crc32_z(crc, reinterpret_cast<const Bytef*>(piece.data()), piece.size());
    }
    e.crc = static_cast<uint32_t>(crc);
    e.offset = offset;
    if (e.data_size >= kMax32) {
      return errors::InvalidArgument(
          "'{}': member '{}' takes {} bytes; members over 4 GiB need ZIP64, which is not "
          "supported",
          path, member.name, e.data_size);
    }
    offset += kLocalHeaderSize + e.name.size() + e.data_size;
    entries.push_back(std::move(e));
  }
  std::string central;
  for (const PendingEntry& e : entries)
    central += central_header(e);
  if (offset + central.size() >= kMax32) {
    return errors::InvalidArgument(
        "'{}': the archive would take {} bytes; over 4 GiB needs ZIP64, which is not supported",
        path, offset + central.size());
  }
  std::string end;
  put32(end, kEndRecordSignature);
  put16(end, 0);  // this disk
  put16(end, 0);  // disk of the central directory
  put16(end, static_cast<uint16_t>(entries.size()));
  put16(end, static_cast<uint16_t>(entries.size()));
  put32(end, static_cast<uint32_t>(central.size()));
  put32(end, static_cast<uint32_t>(offset));
  put16(end, 0);  // comment length

  TROUPE_ASSIGN_OR_RETURN(std::unique_ptr<DurableFile> file, DurableFile::create(path));
  TROUPE_RETURN_IF_ERROR(write_file(*file, entries, central, end));
  return file->commit();
}

namespace {

// The bytes [offset, offset + length) of an archive: views into it where it is in memory, else
// read into `scratch`. The caller has checked that the range lies in the file.
using ReadAt = std::function<StatusOr<std::string_view>(uint64_t offset, uint64_t length,
                                                        std::string& scratch)>;

// Walks the archive of `size` bytes that `read_at` reads: each member `wanted` accepts (all if
// it is empty) is inflated, checked against its CRC and visited, in central directory order;
// the others are only checked to be where the directory says.
Status walk_zip(uint64_t size, const ReadAt& read_at, const std::string& path,
                const std::function<bool(const std::string&)>& wanted, const ZipVisitor& visit) {
  // The end of central directory record: the last signature whose comment ends the file.
  const uint64_t tail_start =
      size > kEndRecordSize + kMaxCommentSize ? size - kEndRecordSize - kMaxCommentSize : 0;
  std::string tail_scratch;
  TROUPE_ASSIGN_OR_RETURN(std::string_view tail,
                          read_at(tail_start, size - tail_start, tail_scratch));
  const auto* tail_base = reinterpret_cast<const uint8_t*>(tail.data());
  uint64_t end_pos = UINT64_MAX;
  if (size >= kEndRecordSize) {
    for (uint64_t pos = size - kEndRecordSize + 1; pos-- > tail_start;) {
      const uint8_t* at = tail_base + (pos - tail_start);
      if (little_endian::get32(at) == kEndRecordSignature &&
          pos + kEndRecordSize + little_endian::get16(at + 20) == size) {
        end_pos = pos;
        break;
      }
    }
  }
  if (end_pos == UINT64_MAX) {
    return errors::DataLoss(
        "'{}' is not a ZIP archive or is truncated: no end of central directory record in its "
        "{} bytes",
        path, size);
  }
  const uint8_t* end = tail_base + (end_pos - tail_start);
  uint16_t disk = little_endian::get16(end + 4), cd_disk = little_endian::get16(end + 6);
  uint16_t entries_here = little_endian::get16(end + 8),
           entries_total = little_endian::get16(end + 10);
  uint64_t cd_size = little_endian::get32(end + 12), cd_offset = little_endian::get32(end + 16);
  bool zip64_marked = entries_total == 0xffff || cd_size == kMax32 || cd_offset == kMax32;
  if (zip64_marked && end_pos >= kZip64LocatorSize + tail_start &&
      little_endian::get32(end - kZip64LocatorSize) == kZip64LocatorSignature) {
    return errors::InvalidArgument(
        "'{}' is a ZIP64 archive (over 4 GiB or 65535 entries), which is not supported", path);
  }
  if (disk != 0 || cd_disk != 0 || entries_here != entries_total) {
    return errors::InvalidArgument("'{}' is a multi-disk ZIP archive, which is not supported",
                                   path);
  }
  if (cd_offset + cd_size > end_pos) {
    return errors::DataLoss(
        "'{}': central directory (offset {}, {} bytes) runs past its end record at {}", path,
        cd_offset, cd_size, end_pos);
  }
  std::string cd_scratch;
  TROUPE_ASSIGN_OR_RETURN(std::string_view directory, read_at(cd_offset, cd_size, cd_scratch));
  const auto* cd_base = reinterpret_cast<const uint8_t*>(directory.data());

  uint64_t pos = 0;  // within the directory
  for (int i = 0; i < entries_total; ++i) {
    if (pos + kCentralHeaderSize > cd_size ||
        little_endian::get32(cd_base + pos) != kCentralHeaderSignature) {
      return errors::DataLoss("'{}': central directory entry {} at offset {} is corrupt", path, i,
                              cd_offset + pos);
    }
    const uint8_t* h = cd_base + pos;
    uint16_t flags = little_endian::get16(h + 8), method = little_endian::get16(h + 10);
    uint32_t crc = little_endian::get32(h + 16);
    uint64_t compressed = little_endian::get32(h + 20), uncompressed = little_endian::get32(h + 24);
    uint16_t name_len = little_endian::get16(h + 28), extra_len = little_endian::get16(h + 30),
             comment_len = little_endian::get16(h + 32);
    uint64_t local_offset = little_endian::get32(h + 42);
    if (pos + kCentralHeaderSize + name_len + extra_len + comment_len > cd_size) {
      return errors::DataLoss("'{}': central directory entry {} runs past the directory", path, i);
    }
    std::string name(reinterpret_cast<const char*>(h + kCentralHeaderSize), name_len);
    const std::string what = fmt::format("entry '{}' of '{}'", name, path);
    TROUPE_RETURN_IF_ERROR(apply_zip64_extra(
        std::string_view(reinterpret_cast<const char*>(h + kCentralHeaderSize + name_len),
                         extra_len),
        &uncompressed, &compressed, &local_offset, what));
    pos += kCentralHeaderSize + name_len + extra_len + comment_len;
    if (wanted && !wanted(name)) continue;

    if (flags & 0x1)
      return errors::InvalidArgument("{}: encrypted entries are not supported", what);
    if (method != kMethodStored && method != kMethodDeflate) {
      return errors::InvalidArgument(
          "{}: compression method {} is not supported; expected 0 (stored) or 8 (deflate)", what,
          method);
    }
    // The local header: must agree with the central directory on name and method.
    if (local_offset > cd_offset || cd_offset - local_offset < kLocalHeaderSize) {
      return errors::DataLoss("{}: no local file header at offset {}", what, local_offset);
    }
    std::string local_scratch;
    TROUPE_ASSIGN_OR_RETURN(
        std::string_view local,
        read_at(local_offset,
                std::min<uint64_t>(kLocalHeaderSize + name_len, cd_offset - local_offset),
                local_scratch));
    const auto* l = reinterpret_cast<const uint8_t*>(local.data());
    if (little_endian::get32(l) != kLocalHeaderSignature) {
      return errors::DataLoss("{}: no local file header at offset {}", what, local_offset);
    }
    uint16_t local_name_len = little_endian::get16(l + 26),
             local_extra_len = little_endian::get16(l + 28);
    uint64_t data_start = local_offset + kLocalHeaderSize + local_name_len + local_extra_len;
    if (data_start > cd_offset || local_name_len != name_len ||
        local.substr(kLocalHeaderSize, local_name_len) != name ||
        little_endian::get16(l + 8) != method) {
      return errors::DataLoss("{}: local file header disagrees with the central directory", what);
    }
    if (compressed > cd_offset - data_start) {
      return errors::DataLoss(
          "{}: {} bytes of data at offset {} run past the entries (file "
          "truncated?)",
          what, compressed, data_start);
    }
    std::string data_scratch;
    TROUPE_ASSIGN_OR_RETURN(std::string_view stored, read_at(data_start, compressed, data_scratch));
    std::string inflated;
    std::string_view content = stored;
    if (method == kMethodStored) {
      if (compressed != uncompressed) {
        return errors::DataLoss("{}: stored entry with compressed size {} != size {}", what,
                                compressed, uncompressed);
      }
    } else {
      TROUPE_ASSIGN_OR_RETURN(inflated, inflate_entry(stored, uncompressed, what));
      content = inflated;
    }
    auto actual = static_cast<uint32_t>(::crc32_z(
        ::crc32_z(0, nullptr, 0), reinterpret_cast<const Bytef*>(content.data()), content.size()));
    if (actual != crc) {
      return errors::DataLoss("{}: CRC-32 mismatch (stored 0x{:08x}, computed 0x{:08x})", what, crc,
                              actual);
    }
    TROUPE_RETURN_IF_ERROR(visit(name, content, what));
  }
  if (pos != cd_size) {
    return errors::DataLoss("'{}': central directory holds {} bytes after its {} entries", path,
                            cd_size - pos, entries_total);
  }
  return Status::OK();
}

}  // namespace

Status for_each_zip_member(std::string_view file, const std::string& path,
                           const ZipVisitor& visit) {
  auto in_memory = [&](uint64_t offset, uint64_t length,
                       std::string&) -> StatusOr<std::string_view> {
    return file.substr(offset, length);
  };
  return walk_zip(file.size(), in_memory, path, {}, visit);
}

Status read_zip_members(const std::string& path,
                        const std::function<bool(const std::string&)>& wanted,
                        std::string_view if_missing, const ZipVisitor& visit) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    if (errno == ENOENT) return errors::NotFound("{}", if_missing);
    return errno_status(errno, "cannot open", path);
  }
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat info {};
  if (::fstat(fd, &info) != 0) return errno_status(errno, "cannot read", path);
  const auto size = static_cast<uint64_t>(info.st_size);
  auto from_file = [&](uint64_t offset, uint64_t length,
                       std::string& scratch) -> StatusOr<std::string_view> {
    scratch.resize(length);
    for (uint64_t done = 0; done < length;) {
      ssize_t got =
          ::pread(fd, scratch.data() + done, length - done, static_cast<off_t>(offset + done));
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) return errno_status(errno, "cannot read", path);
      if (got == 0) {
        return errors::DataLoss("'{}' ended at {} bytes while being read (changed meanwhile?)",
                                path, offset + done);
      }
      done += static_cast<uint64_t>(got);
    }
    return std::string_view(scratch);
  };
  return walk_zip(size, from_file, path, wanted, visit);
}

}  // namespace troupe
