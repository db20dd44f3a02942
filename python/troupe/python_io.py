"""tf.python_io: TFRecord files, as TensorFlow 1.x writes and reads them.

Each record is framed as: uint64 length (little-endian), uint32 masked CRC-32C of those 8
bytes, the data, uint32 masked CRC-32C of the data (mask: ((crc >> 15) | (crc << 17)) +
0xa282ead8). The framing and CRCs are troupe's C++ (graph/core/tfrecord.hpp), as
event files use them. A record whose length or data does not match its CRC, or a file cut in
the middle of a record, is DataLossError naming the file and the byte offset (in the
uncompressed stream). TFRecordOptions(compression_type=ZLIB or GZIP) compresses the whole file
as TensorFlow does (a zlib stream, or gzip), readable by TFRecordDataset(compression_type=...)
and TFRecordReader(options=...).
"""

import gzip
import struct
import zlib

from . import _troupe
from . import errors


class TFRecordCompressionType:
    NONE = 0
    ZLIB = 1
    GZIP = 2


_NAMES = {TFRecordCompressionType.NONE: "", TFRecordCompressionType.ZLIB: "ZLIB",
          TFRecordCompressionType.GZIP: "GZIP"}


class TFRecordOptions:
    """How a TFRecord file is compressed: compression_type NONE, ZLIB or GZIP (a
    TFRecordCompressionType or its name); compression_level (0-9, zlib's default when None).
    TensorFlow's other tuning fields (flush_mode, buffer sizes, window_bits, mem_level,
    compression_method, compression_strategy) are accepted and change nothing in the format."""

    compression_type_map = {TFRecordCompressionType.ZLIB: "ZLIB",
                            TFRecordCompressionType.GZIP: "GZIP",
                            TFRecordCompressionType.NONE: ""}

    def __init__(self, compression_type=None, flush_mode=None, input_buffer_size=None,
                 output_buffer_size=None, window_bits=None, compression_level=None,
                 compression_method=None, mem_level=None, compression_strategy=None):
        if compression_type is None or compression_type == "" or compression_type == "NONE":
            compression_type = TFRecordCompressionType.NONE
        elif isinstance(compression_type, str):
            names = {"ZLIB": TFRecordCompressionType.ZLIB, "GZIP": TFRecordCompressionType.GZIP}
            if compression_type not in names:
                raise ValueError("Not a valid compression_type: \"%s\"" % compression_type)
            compression_type = names[compression_type]
        elif compression_type not in _NAMES:
            raise ValueError("Not a valid compression_type: \"%s\"" % (compression_type,))
        if compression_level is not None and not 0 <= int(compression_level) <= 9:
            raise ValueError("TFRecordOptions: compression_level must be in [0, 9], got %r"
                             % (compression_level,))
        self.compression_type = compression_type
        self.compression_level = compression_level
        self.flush_mode = flush_mode
        self.input_buffer_size = input_buffer_size
        self.output_buffer_size = output_buffer_size
        self.window_bits = window_bits
        self.compression_method = compression_method
        self.mem_level = mem_level
        self.compression_strategy = compression_strategy

    @classmethod
    def get_compression_type_string(cls, options):
        """"", "ZLIB" or "GZIP" for a TFRecordOptions, a compression type or its name."""
        if not options:
            return ""
        if not isinstance(options, TFRecordOptions):
            options = TFRecordOptions(options)
        return _NAMES[options.compression_type]


def _compression(options):
    """The compression type of `options` (None, a TFRecordOptions, a type or its name)."""
    if options is None:
        return TFRecordCompressionType.NONE, None
    if not isinstance(options, TFRecordOptions):
        options = TFRecordOptions(options)
    return options.compression_type, options.compression_level


class TFRecordWriter:
    """Writes records to `path` (truncating it); close() or `with` makes them durable."""

    def __init__(self, path, options=None):
        kind, level = _compression(options)
        level = -1 if level is None else int(level)
        try:
            raw = open(path, "wb")
        except OSError as e:
            raise errors.NotFoundError(None, None, "%s: %s" % (path, e.strerror)) from None
        self._path = path
        self._deflate = None
        if kind == TFRecordCompressionType.GZIP:
            self._file = gzip.GzipFile(fileobj=raw, mode="wb", mtime=0,
                                       compresslevel=9 if level < 0 else level)
            self._raw = raw
        else:
            self._file = raw
            self._raw = None
            if kind == TFRecordCompressionType.ZLIB:
                self._deflate = zlib.compressobj(level)

    def write(self, record):
        if self._file is None:
            raise errors.FailedPreconditionError(None, None,
                                                 "TFRecordWriter for %s is closed" % self._path)
        if isinstance(record, str):
            record = record.encode("utf-8")
        framed = _troupe.tfrecord_frame(bytes(record))
        self._file.write(self._deflate.compress(framed) if self._deflate else framed)

    def flush(self):
        if self._file is not None:
            if self._deflate is not None:
                self._file.write(self._deflate.flush(zlib.Z_SYNC_FLUSH))
            self._file.flush()

    def close(self):
        if self._file is not None:
            if self._deflate is not None:
                self._file.write(self._deflate.flush())
            self._file.close()
            if self._raw is not None:
                self._raw.close()
            self._file = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def __del__(self):
        # As TensorFlow's writer: dropped unclosed, it still completes the file.
        try:
            self.close()
        except Exception:  # noqa: BLE001 - a destructor must not raise
            pass


class _Inflated:
    """read(n) of the uncompressed stream of a ZLIB or GZIP file (gzip members in turn); a
    stream cut short or not of that kind is DataLossError naming the file."""

    def __init__(self, f, kind, path):
        self._f = f
        self._bits = zlib.MAX_WBITS + (16 if kind == TFRecordCompressionType.GZIP else 0)
        self._name = "GZIP" if kind == TFRecordCompressionType.GZIP else "ZLIB"
        self._inflate = zlib.decompressobj(self._bits)
        self._pending = bytearray()
        self._start = 0  # of what read() has not returned yet, in _pending
        self._path = path
        self._read_any = False  # an empty file holds no records, compressed or not

    def _inflate_more(self, data):
        try:
            self._pending += self._inflate.decompress(data)
            while self._inflate.eof and self._inflate.unused_data:  # the next gzip member
                rest = self._inflate.unused_data
                self._inflate = zlib.decompressobj(self._bits)
                self._pending += self._inflate.decompress(rest)
        except zlib.error as e:
            raise errors.DataLossError(None, None, "%s is not a valid %s stream: %s"
                                       % (self._path, self._name, e)) from None

    def read(self, n):
        while len(self._pending) - self._start < n:
            chunk = self._f.read(1 << 16)
            if not chunk:
                if self._read_any and not self._inflate.eof:
                    raise errors.DataLossError(None, None, "the %s stream of %s is cut short"
                                               % (self._name, self._path))
                break
            self._read_any = True
            if self._start:  # drop what was returned, once per chunk: linear in the file
                del self._pending[:self._start]
                self._start = 0
            self._inflate_more(chunk)
        out = bytes(self._pending[self._start:self._start + n])
        self._start += len(out)
        return out


def tf_record_iterator(path, options=None):
    """Yields the records of the TFRecord file at `path` (compressed as `options` says),
    checking every CRC."""
    kind, _ = _compression(options)
    try:
        f = open(path, "rb")
    except OSError as e:
        raise errors.NotFoundError(None, None, "%s: %s" % (path, e.strerror)) from None
    if kind != TFRecordCompressionType.NONE:
        f = _Closing(_Inflated(f, kind, path), f)
    with f:
        offset = 0
        while True:
            header = f.read(12)
            if not header:
                return
            if len(header) < 12:
                raise errors.DataLossError(None, None, "truncated record at %d in %s"
                                           % (offset, path))
            length, length_crc = struct.unpack("<QI", header)
            if _troupe.masked_crc32c(header[:8]) != length_crc:
                raise errors.DataLossError(None, None, "corrupted record at %d in %s: the "
                                           "length's CRC does not match" % (offset, path))
            data = f.read(length)
            footer = f.read(4)
            if len(data) < length or len(footer) < 4:
                raise errors.DataLossError(None, None, "truncated record at %d in %s"
                                           % (offset, path))
            if _troupe.masked_crc32c(data) != struct.unpack("<I", footer)[0]:
                raise errors.DataLossError(None, None, "corrupted record at %d in %s: the "
                                           "data's CRC does not match" % (offset, path))
            yield data
            offset += 16 + length


class _Closing:
    """A reader that closes `f` at the end of a with block."""

    def __init__(self, reader, f):
        self._reader = reader
        self._f = f

    def read(self, n):
        return self._reader.read(n)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._f.close()
        return False
